"""Benchmark: global operators at scale. 1,000 namespaces (`--namespaces`) and 5
AllNamespaces operators in `operators` (the global OperatorGroup): how soon the operators'
own installs finish while their copies go out, how fast the copies go out beside a bare
client's ceiling, and the memory of `olm run` (issues 10 and 28; the real OLM is measured
beside olm-py by benchmarks/reference_olm.py).

Rounds (`--rounds`, default all), each family on a fresh local cluster:
- "install" (issue 28): `olm run` is up with copies on, then the 5 CSVs are applied at once:
  seconds until the 5 originals read Succeeded, until every copy exists, and the copies'
  rate (from the first copy to the last). With `--requests` the API server keeps an audit
  log and the round counts olm-py's requests by verb and resource
  (benchmarks/api_requests.py).
- "ceiling" (after "install", on its cluster, `olm run` stopped): a bare client makes the same
  copies under other names (a create and a status write each, as many at once as olm-py
  writes): the API server's own rate for these writes (benchmarks/copy_ceiling.py).
- "off" then "on" (issue 10): OLMConfig disables copies, `olm run` starts, the 5 CSVs
  install; then a fresh `olm run` with copies enabled, timed until the API server holds all
  5 x N copies.
RSS is sampled every half second (peak) and read again once settled.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import api_requests, copy_ceiling
from benchmarks.cli import RESULTS, parser
from benchmarks.devcluster import rss_mib
from benchmarks.plot import bar_chart
from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.components import APISERVER
from olm.devcluster.process import is_running, stop
from olm.progress import Progress

NAMESPACES = 1000
ROUNDS = ("install", "ceiling", "off", "on")
OPERATORS = 5
OPERATOR_NAMESPACE = "operators"
GOALS_MIB = {"copies_on": 300.0, "copies_off": 150.0}
SETTLE_SECONDS = 10.0
TIMEOUT_SECONDS = 900.0
READY_TIMEOUT = 600.0  # `olm run` start -> the global group's status (the wake-up of every key)
CSV_PATH = "/apis/operators.coreos.com/v1alpha1/clusterserviceversions"


def global_csv(index: int) -> dict[str, Any]:
    """An AllNamespaces operator with one Deployment (kwok runs its pods) and a description of
    the size real CSVs carry."""
    name = f"global-{index}"
    labels = {"app": name}
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": f"{name}.v1.0.0"},
        "spec": {
            "displayName": f"Global operator {index}",
            "description": ("A global operator used by the benchmark. " * 100).strip(),
            "version": "1.0.0",
            "installModes": [
                {"type": "OwnNamespace", "supported": True},
                {"type": "SingleNamespace", "supported": True},
                {"type": "MultiNamespace", "supported": False},
                {"type": "AllNamespaces", "supported": True},
            ],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": f"{name}-controller",
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": labels},
                                "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {
                                        "containers": [
                                            {"name": "manager", "image": "registry.invalid/op:1"}
                                        ]
                                    },
                                },
                            },
                        }
                    ]
                },
            },
        },
    }


def _apply(cluster: DevCluster, obj: dict[str, Any], namespace: str | None = None) -> None:
    where = ["-n", namespace] if namespace else []
    cluster.kubectl("apply", *where, "-f", "-", stdin=json.dumps(obj), timeout=300)


def _create_namespaces(cluster: DevCluster, progress: Progress, count: int) -> None:
    for start in range(0, count, 100):
        items = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"tenant-{i:04d}"}}
            for i in range(start, min(start + 100, count))
        ]
        _apply(cluster, {"apiVersion": "v1", "kind": "List", "items": items})
    progress.say(f"{count} namespaces created")


def _csv_count(cluster: DevCluster) -> int:
    """Every CSV in the cluster (originals and copies), from one cheap paged list."""
    listing = json.loads(cluster.kubectl("get", "--raw", f"{CSV_PATH}?limit=1"))
    return len(listing.get("items") or []) + int(
        (listing.get("metadata") or {}).get("remainingItemCount") or 0
    )


def _succeeded(cluster: DevCluster) -> int:
    try:
        phases = cluster.kubectl(
            "get", "csv", "-n", OPERATOR_NAMESPACE, "-o", "jsonpath={.items[*].status.phase}"
        )
    except ClusterError:
        return 0
    return phases.split().count("Succeeded")


def _olm_run(cluster: DevCluster) -> int:
    cluster.start_process("olm-run", [sys.executable, "-m", "olm.cli", "run"])
    return next(p.pid for p in cluster.processes() if p.name == "olm-run" and is_running(p))


def _stop_olm_run(cluster: DevCluster) -> None:
    for record in cluster.processes():
        if record.name == "olm-run" and is_running(record):
            stop(record)


def _round(
    cluster: DevCluster, progress: Progress, copies: bool, namespaces: int
) -> dict[str, Any]:
    """Start `olm run`; wait until the 5 CSVs succeed and the copies are all there (or all
    gone); sample RSS meanwhile."""
    want = OPERATORS + (OPERATORS * (namespaces + _other_namespaces(cluster)) if copies else 0)
    started = time.monotonic()
    pid = _olm_run(cluster)
    peak, done_at = 0.0, None
    while done_at is None:
        peak = max(peak, rss_mib(pid))
        if _succeeded(cluster) == OPERATORS and _csv_count(cluster) == want:
            done_at = time.monotonic() - started
            break
        if time.monotonic() - started > TIMEOUT_SECONDS:
            raise RuntimeError(
                f"copies={copies}: {_csv_count(cluster)} CSVs of {want} after {TIMEOUT_SECONDS} s"
            )
        time.sleep(0.5)
    peak, settled = _settle(pid, peak)
    name = "copies_on" if copies else "copies_off"
    progress.say(
        f"{name}: {want} CSVs after {done_at:.1f} s; RSS {settled:.0f} MiB (peak {peak:.0f})"
    )
    return {
        "csvs": want,
        "seconds_until_done": round(done_at, 1),
        "rss_mib": round(settled, 1),
        "peak_rss_mib": round(peak, 1),
        "goal_mib": GOALS_MIB[name],
    }


def _settle(pid: int, peak: float) -> tuple[float, float]:
    """Sample RSS for SETTLE_SECONDS: (peak, settled)."""
    settle_until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < settle_until:
        peak = max(peak, rss_mib(pid))
        time.sleep(0.5)
    settled = rss_mib(pid)
    return max(peak, settled), settled


def _group_ready(cluster: DevCluster) -> bool:
    """`olm run` has synced: the global OperatorGroup's status names its namespaces."""
    try:
        out = cluster.kubectl(
            "get",
            "operatorgroup",
            "global-operators",
            "-n",
            OPERATOR_NAMESPACE,
            "-o",
            "jsonpath={.status.lastUpdated}",
        )
    except ClusterError:
        return False
    return bool(out.strip())


def copy_rate(samples: list[tuple[float, int]], first: int, want: int) -> float | None:
    """Copies a second from the first sample above `first` CSVs to the first at `want`."""
    began = next((t for t, n in samples if n > first), None)
    ended = next(((t, n) for t, n in samples if n >= want), None)
    if began is None or ended is None or ended[0] <= began:
        return None
    return (want - first) / (ended[0] - began)


def _install_round(
    cluster: DevCluster, progress: Progress, namespaces: int, audit: Path | None
) -> dict[str, Any]:
    """`olm run` up with copies on, then the 5 CSVs at once: until Succeeded and all copies."""
    want = OPERATORS * (1 + namespaces + _other_namespaces(cluster))
    booted = time.monotonic()
    pid = _olm_run(cluster)
    while not _group_ready(cluster):
        if time.monotonic() - booted > READY_TIMEOUT:
            raise RuntimeError(
                f"olm run did not sync the global OperatorGroup in {READY_TIMEOUT:.0f} s"
            )
        time.sleep(0.5)
    ready = time.monotonic() - booted
    progress.say(f"install: the global OperatorGroup's status after {ready:.1f} s")
    since = api_requests.now()
    started = time.monotonic()
    items = [
        {
            **global_csv(i),
            "metadata": {**global_csv(i)["metadata"], "namespace": OPERATOR_NAMESPACE},
        }
        for i in range(OPERATORS)
    ]
    _apply(cluster, {"apiVersion": "v1", "kind": "List", "items": items})
    peak, succeeded_at, samples = 0.0, None, []
    while True:
        peak = max(peak, rss_mib(pid))
        elapsed = time.monotonic() - started
        if succeeded_at is None and _succeeded(cluster) == OPERATORS:
            succeeded_at = elapsed
            progress.say(f"install: originals Succeeded after {elapsed:.1f} s")
        count = _csv_count(cluster)
        samples.append((elapsed, count))
        if succeeded_at is not None and count >= want:
            break
        if elapsed > TIMEOUT_SECONDS:
            raise RuntimeError(f"install: {count} CSVs of {want} after {TIMEOUT_SECONDS} s")
        time.sleep(0.5)
    done_at = samples[-1][0]
    until = api_requests.now()
    peak, settled = _settle(pid, peak)
    rate = copy_rate(samples, OPERATORS, want)
    progress.say(
        f"install: {want} CSVs after {done_at:.1f} s ({rate or 0:.1f} copies/s); "
        f"RSS {settled:.0f} MiB (peak {peak:.0f})"
    )
    result: dict[str, Any] = {
        "csvs": want,
        "seconds_until_group_status": round(ready, 1),
        "seconds_until_succeeded": round(succeeded_at or 0.0, 1),
        "seconds_until_copies": round(done_at, 1),
        "copies_per_second": None if rate is None else round(rate, 1),
        "rss_mib": round(settled, 1),
        "peak_rss_mib": round(peak, 1),
        "load": list(round(x, 2) for x in __import__("os").getloadavg()),
    }
    if audit is not None:
        result["requests"] = api_requests.summarize(audit, since, until)
    return result


def _other_namespaces(cluster: DevCluster) -> int:
    """Namespaces besides the tenants and `operators` (default, kube-system, olm, ...)."""
    names = cluster.kubectl("get", "namespaces", "-o", "name").split()
    return len([n for n in names if not n.startswith("namespace/tenant-")]) - 1


def _cluster(state: str, name: str, progress: Progress, audit: Path | None) -> DevCluster:
    cluster = DevCluster(Path(state) / name, binaries=ensure_binaries(), progress=progress)
    extra = {APISERVER: api_requests.audit_args(audit)} if audit is not None else None
    cluster.up(extra_args=extra)
    return cluster


def _install_family(
    state: str, progress: Progress, namespaces: int, rounds: set[str], requests: bool
) -> dict[str, Any]:
    audit = Path(state) / "audit" / "audit.log" if requests else None
    cluster = _cluster(state, "install", progress, audit)
    results: dict[str, Any] = {}
    try:
        manifests.install(cluster)
        _create_namespaces(cluster, progress, namespaces)
        results["install"] = _install_round(cluster, progress, namespaces, audit)
        _stop_olm_run(cluster)
        if "ceiling" in rounds:
            results["ceiling"] = copy_ceiling.measure(
                cluster, OPERATORS, progress, workers=copy_ceiling.olm_py_concurrency()
            )
            rate = results["install"]["copies_per_second"]
            ceiling = results["ceiling"]["copies_per_second"]
            if rate and ceiling:
                results["install"]["fraction_of_ceiling"] = round(rate / ceiling, 2)
    finally:
        cluster.down()
    return results


def _restart_family(state: str, progress: Progress, namespaces: int) -> dict[str, Any]:
    cluster = _cluster(state, "restart", progress, None)
    try:
        manifests.install(cluster)
        _create_namespaces(cluster, progress, namespaces)
        for index in range(OPERATORS):
            _apply(cluster, global_csv(index), OPERATOR_NAMESPACE)
        olm_config = {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OLMConfig",
            "metadata": {"name": "cluster"},
            "spec": {"features": {"disableCopiedCSVs": True}},
        }
        _apply(cluster, olm_config)
        off = _round(cluster, progress, False, namespaces)
        _stop_olm_run(cluster)
        olm_config["spec"] = {"features": {"disableCopiedCSVs": False}}
        _apply(cluster, olm_config)
        on = _round(cluster, progress, True, namespaces)
        _stop_olm_run(cluster)
    finally:
        cluster.down()
    return {"copies_off": off, "copies_on": on}


def run(
    results_dir: Path,
    namespaces: int = NAMESPACES,
    rounds: tuple[str, ...] = ROUNDS,
    requests: bool = False,
) -> dict[str, Any]:
    progress = Progress()
    summary: dict[str, Any] = {
        "benchmark": "global_operators",
        "namespaces": namespaces,
        "operators": OPERATORS,
    }
    with tempfile.TemporaryDirectory(prefix="olm-bench-") as state:
        if "install" in rounds:
            summary.update(_install_family(state, progress, namespaces, set(rounds), requests))
        if "off" in rounds or "on" in rounds:
            summary.update(_restart_family(state, progress, namespaces))
    complete = namespaces == NAMESPACES and set(rounds) == set(ROUNDS)
    name = "global_operators" if complete else f"global_operators-{namespaces}"
    (results_dir / f"{name}.json").write_text(json.dumps(summary, indent=2))
    if complete:
        on, off = summary["copies_on"], summary["copies_off"]
        bar_chart(
            results_dir / "global-operators.svg",
            f"olm run RSS, {namespaces} namespaces x {OPERATORS} global operators",
            "MiB",
            [
                ("install (copies on)", summary["install"]["rss_mib"]),
                ("install (peak)", summary["install"]["peak_rss_mib"]),
                ("copies on", on["rss_mib"]),
                ("copies on (peak)", on["peak_rss_mib"]),
                ("copies off", off["rss_mib"]),
                ("copies off (peak)", off["peak_rss_mib"]),
            ],
        )
    return summary


def _rounds(text: str) -> tuple[str, ...]:
    chosen = tuple(part for part in text.split(",") if part)
    unknown = [part for part in chosen if part not in ROUNDS]
    if unknown or not chosen:
        raise argparse.ArgumentTypeError(f"rounds are a comma list of {', '.join(ROUNDS)}")
    if "ceiling" in chosen and "install" not in chosen:
        raise argparse.ArgumentTypeError("the ceiling round runs on the install round's cluster")
    return chosen


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.global_operators`: one run, written to benchmarks/results/."""
    cli = parser(
        "benchmarks.global_operators",
        __doc__,
        takes="15-40 minutes at 1,000 namespaces (two local clusters, one after the other)",
        writes=(
            "benchmarks/results/global_operators.json and global-operators.svg (a run with "
            "other --namespaces or --rounds: global_operators-N.json only)"
        ),
    )
    cli.add_argument("--namespaces", type=int, default=NAMESPACES, help="tenant namespaces")
    cli.add_argument("--rounds", type=_rounds, default=ROUNDS, help="comma list of rounds")
    cli.add_argument(
        "--requests",
        action="store_true",
        help="audit-log the install round's API requests and count olm-py's",
    )
    cli.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = cli.parse_args(argv)
    print(json.dumps(run(args.out, args.namespaces, args.rounds, args.requests), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
