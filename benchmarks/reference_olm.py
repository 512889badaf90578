"""Benchmark: olm-py beside the real OLM v0.38.0 in the same run (issue 9, step 4).

Every measurement is taken the same way on two fresh local clusters, one after the other (never
side by side: the real OLM and olm-py must not watch one API server, and 2 cores are shared):
an olm-py cluster (`olm dev up`, OLM-py's CRDs, `olm run`) and a reference cluster (`olm dev up
--reference-olm`: the real `olm` and `catalog` processes, the samples catalog served by `opm
serve` as CatalogSource olm/samples). The clock reads observable outcomes on the API server,
polled every 50 ms through one API client; nothing is asserted on time.

Stories (each repeated in fresh namespaces, median and range reported):
- `kubectl_csv`: the admin applied the Memcached CRD, the OperatorGroup and the RBAC; clock from
  `kubectl apply` of CSV 0.0.1 to `Succeeded`;
- `subscription`: a Subscription (samples catalog, alpha, startingCSV 0.0.1, Manual); clock from
  `kubectl apply` to CSV 0.0.1 `Succeeded`, the InstallPlan approved (`kubectl patch`) as soon
  as it asks for approval (`subscription_plan`: until that moment);
- `upgrade`: in the same namespace, the 0.0.2 InstallPlan approved as soon as it appears; clock
  from the approval to 0.0.2 `Succeeded` (`upgrade_plan`: 0.0.1 `Succeeded` → 0.0.2 plan);
- `deployment_back`: in the kubectl namespace, `kubectl delete deployment` of the operator;
  clock to a Deployment with a new UID that is Available while the CSV reads `Succeeded`;
- `copied_csv`: an AllNamespaces operator in `operators` (the global group), copies settled;
  clock from `kubectl create namespace` to its copied CSV being there (the namespaces are
  created one after the other, then awaited together: the real OLM may only copy at its
  resync, 5 min +-20 %).

Memory (another pair of fresh clusters): the same AllNamespaces operator in `operators`, then
10, 100 and 1,000 namespaces; at each step, once every namespace holds its copy, RSS is sampled
for `SETTLE_SECONDS` (peak) and read: `olm run` against the real `olm` + `catalog` processes
(`opm serve` of the samples catalog reported beside them: olm-py serves its catalog in-process).

Five operators (issue 10's case, another pair of fresh clusters): 1,000 namespaces first, then
the 5 AllNamespaces operators of the global-operators bench (`global_csv(0..4)`) applied in
`operators`, copied CSVs on; the clock runs from the first `kubectl apply` until the 5 originals
read `Succeeded` and every namespace holds all 5 (5 x namespaces CSVs); RSS sampled meanwhile
(peak), then for `SETTLE_SECONDS`, and read. `--only five-operators` runs just this step and
merges it into the results of the last full run.

Ten thousand namespaces (issue 28): `--only ten-thousand` runs benchmarks/ten_thousand.py's
step on both sides (1 and 5 operators, copies off and on, what ran out when a side cannot
finish); `python -m benchmarks.ten_thousand --plan` prints its dry plan.
"""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.cli import RESULTS, parser
from benchmarks.devcluster import rss_mib
from benchmarks.global_operators import global_csv
from benchmarks.plot import bar_chart
from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.process import is_running
from olm.devcluster.reference import (
    CATALOG_OPERATOR,
    HEALTH_PORTS,
    OLM_OPERATOR,
    SAMPLES_SERVER,
    port_in_use,
)
from olm.devcluster.reference_build import OLM_VERSION
from olm.devcluster.reference_cluster import up_reference
from olm.kube.client import api_client
from olm.progress import Progress

SAMPLE = manifests.MANIFESTS / "samples" / "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
OPERATOR = "memcached-operator"  # the operator's Deployment
OPERATORS_NAMESPACE = "operators"
GLOBAL = global_csv(0)
GLOBAL_NAME = str(GLOBAL["metadata"]["name"])
OLM_PY, REFERENCE = "olm-py", f"OLM {OLM_VERSION}"
SIDES = (OLM_PY, REFERENCE)
STORIES: dict[str, str] = {
    "kubectl_csv": "kubectl apply CSV -> Succeeded",
    "subscription_plan": "Subscription -> InstallPlan to approve",
    "subscription": "Subscription (Manual, approved) -> Succeeded",
    "upgrade_plan": "0.0.1 Succeeded -> 0.0.2 InstallPlan",
    "upgrade": "approve 0.0.2 -> Succeeded",
    "deployment_back": "deleted Deployment -> back, Succeeded",
    "copied_csv": "new namespace -> copied CSV",
}
REPETITIONS = 3
SCALE = (10, 100, 1000)
SETTLE_SECONDS = 10.0
POLL = 0.05
STORY_TIMEOUT = 300.0
COPY_TIMEOUT = 480.0  # the real OLM's resync (5 min +-20 %) and some margin
SCALE_TIMEOUT = 1800.0  # per step; a step that does not finish is reported as incomplete
FIVE_OPERATORS = 5
FIVE_NAMESPACES = 1000
FIVE_TIMEOUT = 1200.0  # per side: the real OLM may copy only at its resync (5 min +-20 %)
PORTS_TIMEOUT = 1800.0  # waiting for another reference cluster (parity) to free :8080/:8443
CSV_PATH = "/apis/operators.coreos.com/v1alpha1"
FIVE_KEY = "five_operators"
TEN_KEY = "ten_thousand"  # benchmarks/ten_thousand.py
ONLY_STEPS = {"five-operators": FIVE_KEY, "ten-thousand": TEN_KEY}


# ----- pure helpers ---------------------------------------------------------------------------


def spread(samples: Sequence[float]) -> dict[str, Any]:
    """Median and range of some timings (seconds), rounded for the results file."""
    if not samples:
        return {"samples": [], "median": None, "min": None, "max": None}
    return {
        "samples": [round(s, 3) for s in samples],
        "median": round(statistics.median(samples), 3),
        "min": round(min(samples), 3),
        "max": round(max(samples), 3),
    }


def ratio(olm_py: float | None, reference: float | None) -> float | None:
    """olm-py / real OLM (below 1: olm-py is faster or smaller); None when either is missing."""
    if olm_py is None or reference is None or reference <= 0:
        return None
    return round(olm_py / reference, 2)


def plan_for(plans: Sequence[dict[str, Any]], csv: str) -> dict[str, Any] | None:
    """The InstallPlan that installs `csv` (the newest, if several), from a namespace's list."""
    matching = [
        plan
        for plan in plans
        if csv in ((plan.get("spec") or {}).get("clusterServiceVersionNames") or [])
    ]
    if not matching:
        return None
    return max(matching, key=lambda p: str(p["metadata"].get("creationTimestamp", "")))


def awaits_approval(plan: dict[str, Any] | None) -> bool:
    """Whether a Manual plan is there to be approved (not approved yet; OLM v0 shows it as
    phase RequiresApproval, which is not required here so a plan seen early counts too)."""
    return plan is not None and not (plan.get("spec") or {}).get("approved", False)


def deployment_back(deployment: dict[str, Any] | None, old_uid: str) -> bool:
    """A Deployment that replaced the deleted one (new UID) and is Available."""
    if deployment is None or deployment["metadata"].get("uid") == old_uid:
        return False
    status = deployment.get("status") or {}
    return int(status.get("availableReplicas") or 0) >= 1


def listed_count(listing: dict[str, Any]) -> int:
    """Items in a `?limit=1` list: the one returned plus `remainingItemCount`."""
    return len(listing.get("items") or []) + int(
        (listing.get("metadata") or {}).get("remainingItemCount") or 0
    )


def timing_rows(timings: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per story: both sides' median and range, and the ratio of the medians."""
    rows = []
    for story, label in STORIES.items():
        ours = (timings.get(OLM_PY) or {}).get(story) or spread([])
        theirs = (timings.get(REFERENCE) or {}).get(story) or spread([])
        rows.append(
            {
                "story": story,
                "what": label,
                OLM_PY: ours,
                REFERENCE: theirs,
                "ratio": ratio(ours["median"], theirs["median"]),
            }
        )
    return rows


def memory_rows(memory: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per namespace count: settled RSS of both sides and the ratio."""
    ours = {step["namespaces"]: step for step in memory.get(OLM_PY) or []}
    theirs = {step["namespaces"]: step for step in memory.get(REFERENCE) or []}
    rows = []
    for count in sorted(set(ours) | set(theirs)):
        a, b = ours.get(count) or {}, theirs.get(count) or {}
        rows.append(
            {
                "namespaces": count,
                f"{OLM_PY}_rss_mib": a.get("rss_mib"),
                f"{REFERENCE}_rss_mib": b.get("rss_mib"),
                "ratio": ratio(a.get("rss_mib"), b.get("rss_mib")),
                "opm_serve_mib": (b.get("by_process_mib") or {}).get(SAMPLES_SERVER),
                f"{OLM_PY}_seconds": a.get("seconds_until_copies"),
                f"{REFERENCE}_seconds": b.get("seconds_until_copies"),
            }
        )
    return rows


def only_step(args: Sequence[str]) -> str | None:
    """The step `--only NAME` (or `--only=NAME`) asks for, as its results key; None without
    --only. An unknown name is a usage error that lists the known ones."""
    value: str | None = None
    for index, arg in enumerate(args):
        if arg == "--only":
            if index + 1 >= len(args):
                raise SystemExit(f"--only needs a step: one of {', '.join(ONLY_STEPS)}")
            value = args[index + 1]
        elif arg.startswith("--only="):
            value = arg.removeprefix("--only=")
    if value is None:
        return None
    if value not in ONLY_STEPS:
        raise SystemExit(f"--only {value}: unknown step; one of {', '.join(ONLY_STEPS)}")
    return ONLY_STEPS[value]


def expected_csvs(operators: int, namespaces: int) -> int:
    """CSVs once every global operator is everywhere: its original in `operators` and one copy
    in every other namespace, for each operator."""
    return operators * namespaces


def five_operators_row(five: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """Both sides of the five-operator step in one row (None when the step was not run)."""
    if not five:
        return None
    a, b = five.get(OLM_PY) or {}, five.get(REFERENCE) or {}
    return {
        "namespaces": a.get("namespaces") or b.get("namespaces"),
        "operators": a.get("operators") or b.get("operators"),
        f"{OLM_PY}_rss_mib": a.get("rss_mib"),
        f"{REFERENCE}_rss_mib": b.get("rss_mib"),
        f"{OLM_PY}_peak_rss_mib": a.get("peak_rss_mib"),
        f"{REFERENCE}_peak_rss_mib": b.get("peak_rss_mib"),
        "ratio": ratio(a.get("rss_mib"), b.get("rss_mib")),
        "opm_serve_mib": (b.get("by_process_mib") or {}).get(SAMPLES_SERVER),
        f"{OLM_PY}_seconds": a.get("seconds_until_copies"),
        f"{REFERENCE}_seconds": b.get("seconds_until_copies"),
    }


def merge_step(
    previous: dict[str, Any], key: str, step: dict[str, Any], phases: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The results of the last full run with one step's results (re)placed under `key` and
    its phases appended (earlier phases of the same step replaced); nothing else changes."""
    merged = dict(previous)
    merged[key] = step
    merged["phases"] = [
        phase for phase in previous.get("phases") or [] if phase.get("phase") != key
    ] + list(phases)
    return merged


def _cell(value: Any, unit: str = "", digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def _timing_cell(entry: dict[str, Any]) -> str:
    if entry["median"] is None:
        return "—"
    return f"{entry['median']:.2f} s ({entry['min']:.2f}-{entry['max']:.2f})"


def markdown(summary: dict[str, Any]) -> str:
    """The tables docs/performance.md shows, from a results summary."""
    lines = [
        f"| story | olm-py median (range) | {REFERENCE} median (range) | ratio |",
        "| --- | --- | --- | --- |",
    ]
    for row in summary["timing_rows"]:
        lines.append(
            f"| {row['what']} | {_timing_cell(row[OLM_PY])} | {_timing_cell(row[REFERENCE])} "
            f"| {_cell(row['ratio'], 'x', 2)} |"
        )
    lines += [
        "",
        "| namespaces | `olm run` RSS | `olm` + `catalog` RSS | ratio | beside them: `opm serve` "
        f"| copies done after (olm-py / {REFERENCE}) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in summary["memory_rows"]:
        lines.append(
            f"| {row['namespaces']:,} | {_cell(row[f'{OLM_PY}_rss_mib'], ' MiB')} "
            f"| {_cell(row[f'{REFERENCE}_rss_mib'], ' MiB')} | {_cell(row['ratio'], 'x', 2)} "
            f"| {_cell(row['opm_serve_mib'], ' MiB')} "
            f"| {_cell(row[f'{OLM_PY}_seconds'], ' s')} / {_cell(row[f'{REFERENCE}_seconds'], ' s')} |"
        )
    five = summary.get("five_operators_row")
    if five:
        lines.append(
            f"| {five['namespaces']:,} x {five['operators']} operators "
            f"| {_cell(five[f'{OLM_PY}_rss_mib'], ' MiB')} "
            f"| {_cell(five[f'{REFERENCE}_rss_mib'], ' MiB')} | {_cell(five['ratio'], 'x', 2)} "
            f"| {_cell(five['opm_serve_mib'], ' MiB')} "
            f"| {_cell(five[f'{OLM_PY}_seconds'], ' s')} / {_cell(five[f'{REFERENCE}_seconds'], ' s')} |"
        )
    return "\n".join(lines)


def load() -> dict[str, Any]:
    """The machine's load right now: 1/5/15-minute averages and `uptime`'s line."""
    one, five, fifteen = os.getloadavg()
    line = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    return {"loadavg": [round(one, 2), round(five, 2), round(fifteen, 2)], "uptime": line}


# ----- the clusters -----------------------------------------------------------------------------


@dataclass
class Side:
    """A running cluster of one side: kubectl for what the admin types, the API for polling."""

    name: str
    cluster: DevCluster
    api: Any
    processes: dict[str, int]  # the OLM processes whose RSS counts
    extra: dict[str, int]  # reported beside them (opm serve of the samples catalog)

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return self.cluster.kubectl(*args, stdin=stdin, timeout=300)

    def apply(self, obj: dict[str, Any], namespace: str = "") -> None:
        where = ["-n", namespace] if namespace else []
        self.kubectl("apply", *where, "-f", "-", stdin=json.dumps(obj))

    def get(self, path: str) -> Any:
        """GET `path`: the decoded object, or None when it does not exist."""
        method, url, headers, _, _ = self.api.param_serialize(
            "GET", path, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        response = self.api.call_api(method, url, header_params=headers)
        data = response.read()
        if response.status == 404:
            return None
        if response.status >= 400:
            raise RuntimeError(f"GET {path}: {response.status} {data[:300]!r}")
        return json.loads(data)

    def csv(self, namespace: str, name: str) -> dict[str, Any] | None:
        found: dict[str, Any] | None = self.get(
            f"{CSV_PATH}/namespaces/{namespace}/clusterserviceversions/{name}"
        )
        return found

    def phase(self, namespace: str, name: str) -> str:
        return str(((self.csv(namespace, name) or {}).get("status") or {}).get("phase", ""))

    def rss(self) -> tuple[float, dict[str, float]]:
        each = {name: rss_mib(pid) for name, pid in {**self.processes, **self.extra}.items()}
        return sum(each[name] for name in self.processes), each


def _await(check: Callable[[], bool], what: str, timeout: float = STORY_TIMEOUT) -> float:
    """Poll `check` every POLL seconds; the monotonic moment it first held."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return time.monotonic()
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not reached in {timeout:.0f} s")
        time.sleep(POLL)


def _catalog_ready(side: Side) -> bool:
    source = side.get(f"{CSV_PATH}/namespaces/olm/catalogsources/samples") or {}
    state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
    return bool(state == "READY")


def _pids(cluster: DevCluster, names: Sequence[str]) -> dict[str, int]:
    return {r.name: r.pid for r in cluster.processes() if r.name in names and is_running(r)}


@contextmanager
def olm_py_side(
    state: Path, progress: Progress, extra_args: dict[str, list[str]] | None = None
) -> Iterator[Side]:
    cluster = DevCluster(state / "olm-py", binaries=ensure_binaries(), progress=progress)
    cluster.up(extra_args=extra_args)
    try:
        manifests.install(cluster)
        cluster.start_process("olm-run", [sys.executable, "-m", "olm.cli", "run"])
        api = api_client(cluster.kubeconfig_path)
        side = Side(OLM_PY, cluster, api, _pids(cluster, ["olm-run"]), {})
        _await(lambda: _catalog_ready(side), "CatalogSource olm/samples READY", 180)
        yield side
    finally:
        cluster.down()


def _await_ports(progress: Progress) -> None:
    """Wait while another reference cluster (the parity suite's) holds OLM's fixed ports."""
    deadline = time.monotonic() + PORTS_TIMEOUT
    said = False
    while any(port_in_use(port) for port in HEALTH_PORTS.values()):
        if not said:
            progress.say("OLM's ports :8080/:8443 are taken (another reference cluster); waiting")
            said = True
        if time.monotonic() > deadline:
            raise RuntimeError(f"OLM's ports stayed taken for {PORTS_TIMEOUT:.0f} s")
        time.sleep(5)


@contextmanager
def reference_side(
    state: Path, progress: Progress, extra_args: dict[str, list[str]] | None = None
) -> Iterator[Side]:
    cluster = DevCluster(state / "reference", progress=progress)
    for attempt in range(10):
        _await_ports(progress)
        try:
            up_reference(cluster, extra_args=extra_args)
            break
        except ClusterError as exc:
            if "port" not in str(exc) or attempt == 9:
                raise
            time.sleep(10)  # lost a race for the ports: wait for them again
    try:
        api = api_client(cluster.kubeconfig_path)
        side = Side(
            REFERENCE,
            cluster,
            api,
            _pids(cluster, [OLM_OPERATOR, CATALOG_OPERATOR]),
            _pids(cluster, [SAMPLES_SERVER]),
        )
        _await(lambda: _catalog_ready(side), "CatalogSource olm/samples READY", 180)
        yield side
    finally:
        cluster.down()


SIDE_STARTERS: dict[str, Callable[..., Any]] = {
    OLM_PY: olm_py_side,
    REFERENCE: reference_side,
}


# ----- the stories ------------------------------------------------------------------------------


def _namespace_with_group(side: Side, namespace: str) -> None:
    side.kubectl("create", "namespace", namespace)
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og"},
            "spec": {"targetNamespaces": [namespace]},
        },
        namespace,
    )
    path = f"/apis/operators.coreos.com/v1/namespaces/{namespace}/operatorgroups/og"
    _await(
        lambda: ((side.get(path) or {}).get("status") or {}).get("namespaces") == [namespace],
        f"{namespace}: OperatorGroup status",
    )


def _kubectl_story(side: Side, namespace: str) -> dict[str, float]:
    _namespace_with_group(side, namespace)
    side.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
    started = time.monotonic()
    side.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / f"{OLD}.csv.yaml"))
    done = _await(lambda: side.phase(namespace, OLD) == "Succeeded", f"{namespace}: {OLD}")
    result = {"kubectl_csv": done - started}
    deployment_path = f"/apis/apps/v1/namespaces/{namespace}/deployments/{OPERATOR}"
    _await(lambda: deployment_back(side.get(deployment_path), ""), f"{namespace}: Deployment up")
    old_uid = str(side.get(deployment_path)["metadata"]["uid"])
    started = time.monotonic()
    side.kubectl("delete", "deployment", OPERATOR, "-n", namespace)
    done = _await(
        lambda: (
            deployment_back(side.get(deployment_path), old_uid)
            and side.phase(namespace, OLD) == "Succeeded"
        ),
        f"{namespace}: Deployment back",
    )
    result["deployment_back"] = done - started
    return result


def _approve(side: Side, namespace: str, csv: str) -> tuple[float, float]:
    """Wait for the plan of `csv` to ask for approval and approve it: (seen, approved) moments."""
    path = f"{CSV_PATH}/namespaces/{namespace}/installplans"
    found: list[dict[str, Any]] = []

    def pending() -> bool:
        plan = plan_for((side.get(path) or {}).get("items") or [], csv)
        found[:] = [plan] if plan else []
        return awaits_approval(plan)

    seen = _await(pending, f"{namespace}: InstallPlan for {csv}")
    name = found[0]["metadata"]["name"]
    side.kubectl(
        "patch", "installplan", name, "-n", namespace, "--type=merge", "-p",
        '{"spec":{"approved":true}}',
    )  # fmt: skip
    return seen, time.monotonic()


def _subscription_story(side: Side, namespace: str) -> dict[str, float]:
    _namespace_with_group(side, namespace)
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "memcached"},
        "spec": {
            "name": "memcached-operator",
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
            "startingCSV": OLD,
            "installPlanApproval": "Manual",
        },
    }
    started = time.monotonic()
    side.apply(subscription, namespace)
    seen, _ = _approve(side, namespace, OLD)
    installed = _await(lambda: side.phase(namespace, OLD) == "Succeeded", f"{namespace}: {OLD}")
    upgrade_seen, approved = _approve(side, namespace, NEW)
    upgraded = _await(lambda: side.phase(namespace, NEW) == "Succeeded", f"{namespace}: {NEW}")
    return {
        "subscription_plan": seen - started,
        "subscription": installed - started,
        # An upgrade plan made before 0.0.1 read Succeeded counts as 0.
        "upgrade_plan": max(0.0, upgrade_seen - installed),
        "upgrade": upgraded - approved,
    }


def _copies(side: Side) -> tuple[int, int]:
    """(CSVs in the cluster, namespaces): settled when CSVs == namespaces (the original in
    `operators` and one copy in every other namespace)."""
    csvs = listed_count(side.get(f"{CSV_PATH}/clusterserviceversions?limit=1") or {})
    namespaces = listed_count(side.get("/api/v1/namespaces?limit=1") or {})
    return csvs, namespaces


def _global_settled(side: Side) -> bool:
    """The global operator's CSV in every namespace (original or copy), other CSVs aside."""
    copies = side.get(
        f"{CSV_PATH}/clusterserviceversions?fieldSelector=metadata.name%3D{GLOBAL_NAME}"
    )
    namespaces = listed_count(side.get("/api/v1/namespaces?limit=1") or {})
    return len((copies or {}).get("items") or []) == namespaces


def _install_global(side: Side, timeout: float = STORY_TIMEOUT) -> None:
    side.apply(GLOBAL, OPERATORS_NAMESPACE)
    _await(
        lambda: side.phase(OPERATORS_NAMESPACE, GLOBAL_NAME) == "Succeeded",
        f"{GLOBAL_NAME} Succeeded",
        timeout,
    )


def _copy_story(side: Side, count: int) -> list[float]:
    """Create `count` namespaces one after the other; the seconds from each one's creation to
    its copied CSV. (The real OLM copies into a new namespace when the CSV next syncs, which
    may be its informer resync, 5 min +-20 %: waiting for them together bounds the run.)"""
    created: dict[str, float] = {}
    for index in range(count):
        namespace = f"copy-{index}"
        created[namespace] = time.monotonic()
        side.kubectl("create", "namespace", namespace)
    seen: dict[str, float] = {}

    def all_copied() -> bool:
        for namespace in created.keys() - seen.keys():
            path = f"{CSV_PATH}/namespaces/{namespace}/clusterserviceversions/{GLOBAL_NAME}"
            if side.get(path) is not None:
                seen[namespace] = time.monotonic()
        return len(seen) == len(created)

    _await(all_copied, "copied CSVs in new namespaces", COPY_TIMEOUT)
    return [seen[namespace] - created[namespace] for namespace in created]


def stories(side: Side, progress: Progress, repetitions: int) -> dict[str, dict[str, Any]]:
    side.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    side.kubectl(
        "wait", "--for=condition=Established", "crd/memcacheds.cache.example.com", "--timeout=60s"
    )
    samples: dict[str, list[float]] = {story: [] for story in STORIES}
    for index in range(repetitions):
        for name, story in (("kubectl", _kubectl_story), ("sub", _subscription_story)):
            for key, seconds in story(side, f"{name}-{index}").items():
                samples[key].append(seconds)
        progress.say(
            f"{side.name}: round {index + 1}: "
            + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in samples.items() if v)
        )
    _install_global(side)
    _await(lambda: _global_settled(side), "copies of the global operator", COPY_TIMEOUT)
    samples["copied_csv"] = _copy_story(side, repetitions)
    progress.say(
        f"{side.name}: new namespace -> copy "
        + ", ".join(f"{seconds:.2f} s" for seconds in samples["copied_csv"])
    )
    return {story: spread(values) for story, values in samples.items()}


def _create_tenants(side: Side, start: int, stop: int) -> None:
    for first in range(start, stop, 100):
        items = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"tenant-{i:04d}"}}
            for i in range(first, min(first + 100, stop))
        ]
        side.apply({"apiVersion": "v1", "kind": "List", "items": items})


def memory(side: Side, progress: Progress, scale: Sequence[int]) -> list[dict[str, Any]]:
    _install_global(side)
    _await(lambda: _global_settled(side), "copies of the global operator", COPY_TIMEOUT)
    steps = []
    created = 0
    for count in scale:
        started = time.monotonic()
        _create_tenants(side, created, count)
        created = count
        peak, done_at, csvs, namespaces = 0.0, None, 0, 0
        while True:
            peak = max(peak, side.rss()[0])
            csvs, namespaces = _copies(side)
            if csvs == namespaces and namespaces >= count:
                done_at = time.monotonic() - started
                break
            if time.monotonic() - started > SCALE_TIMEOUT:
                break
            time.sleep(1.0)
        settle_until = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < settle_until:
            peak = max(peak, side.rss()[0])
            time.sleep(0.5)
        total, each = side.rss()
        step = {
            "namespaces": count,
            "namespaces_in_cluster": namespaces,
            "csvs": csvs,
            "complete": done_at is not None,
            "seconds_until_copies": None if done_at is None else round(done_at, 1),
            "rss_mib": round(total, 1),
            "peak_rss_mib": round(max(peak, total), 1),
            "by_process_mib": {name: round(value, 1) for name, value in each.items()},
            "load": load(),
        }
        steps.append(step)
        progress.say(
            f"{side.name}: {count} namespaces: {csvs}/{namespaces} CSVs"
            + (f" after {done_at:.1f} s" if done_at is not None else " (timed out)")
            + f"; RSS {total:.0f} MiB (peak {peak:.0f})"
        )
    return steps


def _succeeded(side: Side) -> int:
    """How many CSVs in `operators` (the 5 originals) read Succeeded."""
    listing = side.get(f"{CSV_PATH}/namespaces/{OPERATORS_NAMESPACE}/clusterserviceversions")
    return sum(
        1
        for csv in (listing or {}).get("items") or []
        if (csv.get("status") or {}).get("phase") == "Succeeded"
    )


def five_operators(side: Side, progress: Progress) -> dict[str, Any]:
    """1,000 namespaces, then 5 AllNamespaces operators in `operators`, copies on: RSS and
    the seconds from the first apply until the originals succeed and every copy exists."""
    _create_tenants(side, 0, FIVE_NAMESPACES)
    namespaces = listed_count(side.get("/api/v1/namespaces?limit=1") or {})
    want = expected_csvs(FIVE_OPERATORS, namespaces)
    progress.say(f"{side.name}: {namespaces} namespaces; applying {FIVE_OPERATORS} operators")
    started = time.monotonic()
    for index in range(FIVE_OPERATORS):
        side.apply(global_csv(index), OPERATORS_NAMESPACE)
    peak, succeeded_at, done_at, csvs, said = 0.0, None, None, 0, 0.0
    while True:
        peak = max(peak, side.rss()[0])
        elapsed = time.monotonic() - started
        if succeeded_at is None and _succeeded(side) == FIVE_OPERATORS:
            succeeded_at = elapsed
        csvs = listed_count(side.get(f"{CSV_PATH}/clusterserviceversions?limit=1") or {})
        if succeeded_at is not None and csvs >= want:
            done_at = elapsed
            break
        if elapsed > FIVE_TIMEOUT:
            break
        if elapsed - said >= 60:
            said = elapsed
            progress.say(f"{side.name}: {csvs}/{want} CSVs after {elapsed:.0f} s")
        time.sleep(1.0)
    settle_until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < settle_until:
        peak = max(peak, side.rss()[0])
        time.sleep(0.5)
    total, each = side.rss()
    progress.say(
        f"{side.name}: {FIVE_OPERATORS} operators x {namespaces} namespaces: {csvs}/{want} CSVs"
        + (f" after {done_at:.1f} s" if done_at is not None else " (timed out)")
        + f"; RSS {total:.0f} MiB (peak {peak:.0f})"
    )
    return {
        "namespaces": FIVE_NAMESPACES,
        "operators": FIVE_OPERATORS,
        "namespaces_in_cluster": namespaces,
        "csvs": csvs,
        "csvs_wanted": want,
        "complete": done_at is not None,
        "seconds_until_succeeded": None if succeeded_at is None else round(succeeded_at, 1),
        "seconds_until_copies": None if done_at is None else round(done_at, 1),
        "rss_mib": round(total, 1),
        "peak_rss_mib": round(max(peak, total), 1),
        "by_process_mib": {name: round(value, 1) for name, value in each.items()},
        "load": load(),
    }


# ----- the run ----------------------------------------------------------------------------------


def _on_both_sides(
    state: Path,
    progress: Progress,
    phase_name: str,
    body: Callable[[Side], Any],
    phases: list[dict[str, Any]],
) -> dict[str, Any]:
    """Run `body` on a fresh cluster of each side in turn; its results by side."""
    results: dict[str, Any] = {}
    for side_name in SIDES:
        started = time.monotonic()
        before = load()
        progress.say(f"== {phase_name} on a fresh {side_name} cluster")
        with SIDE_STARTERS[side_name](state / phase_name, progress) as side:
            results[side_name] = body(side)
        phases.append(
            {
                "phase": phase_name,
                "side": side_name,
                "seconds": round(time.monotonic() - started, 1),
                "load_before": before,
                "load_after": load(),
            }
        )
    return results


def run(
    results_dir: Path,
    repetitions: int = REPETITIONS,
    scale: Sequence[int] = SCALE,
    write: bool = True,
    five: bool = True,
) -> dict[str, Any]:
    progress = Progress()
    summary: dict[str, Any] = {
        "benchmark": "reference_olm",
        "reference": REFERENCE,
        "repetitions": repetitions,
        "load_at_start": load(),
        "timings": {},
        "memory": {},
        "phases": [],
    }
    with tempfile.TemporaryDirectory(prefix="olm-bench-ref-") as state:
        phases = summary["phases"]
        summary["timings"] = _on_both_sides(
            Path(state), progress, "stories", lambda s: stories(s, progress, repetitions), phases
        )
        summary["memory"] = _on_both_sides(
            Path(state), progress, "memory", lambda s: memory(s, progress, scale), phases
        )
        if five:
            summary[FIVE_KEY] = _on_both_sides(
                Path(state), progress, FIVE_KEY, lambda s: five_operators(s, progress), phases
            )
    summary["timing_rows"] = timing_rows(summary["timings"])
    summary["memory_rows"] = memory_rows(summary["memory"])
    summary["five_operators_row"] = five_operators_row(summary.get(FIVE_KEY) or {})
    summary["load_at_end"] = load()
    if write:
        _write(results_dir, summary)
    print(markdown(summary), file=sys.stderr)
    return summary


def _only(results_dir: Path, key: str, body: Callable[[Side, Progress], Any]) -> dict[str, Any]:
    """One step alone, on both sides, merged into the last full run's results under `key`."""
    progress = Progress()
    phases: list[dict[str, Any]] = []
    path = results_dir / "reference_olm.json"
    previous = json.loads(path.read_text()) if path.exists() else {"benchmark": "reference_olm"}
    with tempfile.TemporaryDirectory(prefix="olm-bench-ref-") as state:
        step = _on_both_sides(Path(state), progress, key, lambda s: body(s, progress), phases)
    return merge_step(previous, key, step, phases)


def run_ten_thousand(results_dir: Path) -> dict[str, Any]:
    """Only the 10,000-namespace step (benchmarks/ten_thousand.py), on both sides."""
    from benchmarks.ten_thousand import ten_thousand

    summary = _only(results_dir, TEN_KEY, ten_thousand)
    (results_dir / "reference_olm.json").write_text(json.dumps(summary, indent=2))
    return summary


def run_five_operators(results_dir: Path, write: bool = True) -> dict[str, Any]:
    """Only the five-operator step, on both sides; merged into the last full run's results."""
    summary = _only(results_dir, FIVE_KEY, five_operators)
    summary["five_operators_row"] = five_operators_row(summary[FIVE_KEY])
    if write:
        _write(results_dir, summary)
    print(markdown({"timing_rows": [], "memory_rows": [], **summary}), file=sys.stderr)
    return summary


def _write(results_dir: Path, summary: dict[str, Any]) -> None:
    (results_dir / "reference_olm.json").write_text(json.dumps(summary, indent=2))
    bars: list[tuple[str, float]] = []
    for row in summary["timing_rows"]:
        for side_name in SIDES:
            median = row[side_name]["median"]
            if median is not None:
                bars.append((f"{row['story']} · {side_name}", median))
    bar_chart(
        results_dir / "reference-olm-timings.svg",
        f"olm-py beside the real {REFERENCE}: median seconds",
        "s",
        bars,
    )
    memory_bars: list[tuple[str, float]] = []
    for row in summary["memory_rows"]:
        for side_name in SIDES:
            value = row[f"{side_name}_rss_mib"]
            if value is not None:
                memory_bars.append((f"{row['namespaces']} ns · {side_name}", value))
    five = summary.get("five_operators_row")
    if five:
        for side_name in SIDES:
            value = five[f"{side_name}_rss_mib"]
            if value is not None:
                memory_bars.append(
                    (f"{five['namespaces']} ns x {five['operators']} ops · {side_name}", value)
                )
    bar_chart(
        results_dir / "reference-olm-memory.svg",
        f"RSS, AllNamespaces operators, copies on: olm run vs {REFERENCE} olm + catalog",
        "MiB",
        memory_bars,
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.reference_olm [--quick | --only five-operators]`: --quick is 1
    repetition and 10 namespaces, without the five-operator step, written to a temporary
    directory (a smoke run of the bench itself); --only five-operators runs that step alone
    and merges it into benchmarks/results/reference_olm.json."""
    command = parser(
        "benchmarks.reference_olm",
        __doc__,
        takes="15-25 minutes for the one-operator steps and 15-20 more for the five-operator "
        "step (fresh local clusters of olm-py and of the real OLM, one after the other; needs "
        "the built binaries and the reference OLM); --quick well under that",
        writes="benchmarks/results/reference_olm.json, reference-olm-timings.svg and "
        "reference-olm-memory.svg (--quick: a temporary directory, removed)",
    )
    command.add_argument(
        "--quick",
        action="store_true",
        help="1 repetition and 10 namespaces, without the five-operator step (a smoke run)",
    )
    command.add_argument(
        "--only",
        metavar="STEP",
        # only_step says what is wrong with a name, listing the known ones
        type=lambda name: only_step(["--only", name]),
        help=f"run this step alone and merge it into the results: {', '.join(ONLY_STEPS)}",
    )
    args = command.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the clusters of the run are taken down.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.only == FIVE_KEY:
        summary = run_five_operators(RESULTS)
    elif args.only == TEN_KEY:
        summary = run_ten_thousand(RESULTS)
    elif args.quick:
        with tempfile.TemporaryDirectory() as out:
            summary = run(Path(out), repetitions=1, scale=(10,), five=False)
    else:
        summary = run(RESULTS)
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
