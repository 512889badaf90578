"""Benchmark: the PackageManifest API of olm-py (`olm run`) beside OLM v0.38.0's packageserver
(issue 22), on the generated operatorhub-sized catalog (benchmarks/catalogs.py `generate`: 300
packages, 2,100 bundles).

Both sides get the same catalog the same way: `opm serve` of the generated folder on a free
127.0.0.1 port, registered as CatalogSource olm/bench by address. One run, one machine, the
two clusters one after the other (the real OLM binds fixed ports, and 2 cores are shared):

- olm-py (`olm dev up`, olm-py's CRDs): first `olm run --no-package-server` until the catalog
  is READY and its RSS has settled (the memory `olm run` needs anyway: the catalogs are held
  for resolution); then stopped, and `olm run` with the package server until the API lists
  every package, then the calls, then its RSS. Memory added = with - without.
- OLM (`olm dev up --reference-olm`: olm, catalog and package-server as OLM's chart runs them):
  the calls once the API lists every package, then package-server's RSS.

Latency (`measure_calls`): `kubectl get packagemanifests -A` (what the user types: a Table
through the aggregator), `CALLS` timed calls after `WARMUP` untimed ones, p50 and p99 (nearest
rank); beside it `kubectl get namespaces` (the floor: kubectl's start-up and a kube-apiserver
round trip) and the same list GETs without kubectl (as a Table, and as JSON with every
manifest) through the API client. Goals (issue 22): olm-py's kubectl p50 and p99 at most half
of packageserver's; memory added under a third of package-server's RSS. Nothing is asserted:
results go to benchmarks/results/packagemanifests.json and an SVG, docs/performance.md quotes
them.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.catalogs import BUNDLES_PER_PACKAGE, PACKAGES, generate
from benchmarks.cli import RESULTS, parser
from benchmarks.devcluster import rss_mib
from benchmarks.plot import bar_chart
from benchmarks.reference_olm import load, reference_side
from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.devcluster.ports import LOOPBACK, free_ports
from olm.devcluster.process import is_running, stop
from olm.devcluster.reference_build import OLM_VERSION
from olm.devcluster.reference_packageserver import PACKAGE_SERVER
from olm.kube.client import api_client
from olm.progress import Progress

OLM_PY, REFERENCE = "olm-py", f"OLM {OLM_VERSION} packageserver"
CALLS = 50
WARMUP = 3
CATALOG = "bench"
SAMPLES_PACKAGES = 2  # olm/samples is served on both sides too
WANTED = PACKAGES + SAMPLES_PACKAGES
READY_TIMEOUT = 600.0
SETTLE_SECONDS = 10.0
SETTLE_TIMEOUT = 120.0
LIST_PATH = "/apis/packages.operators.coreos.com/v1/packagemanifests"
# What kubectl asks for (a server-side Table, falling back to JSON).
TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)
LATENCY_GOAL = 0.5  # olm-py / packageserver
MEMORY_GOAL = 1 / 3  # memory added by serving / packageserver's RSS
KINDS = {  # what measure_calls times, as the table names it
    "kubectl": "`kubectl get packagemanifests -A`",
    "kubectl_floor": "floor: `kubectl get namespaces`",
    "table": "GET list as a Table (what kubectl asks)",
    "json": "GET list as JSON (every manifest)",
}


# ----- pure helpers ---------------------------------------------------------------------------


def percentile(samples: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (p99 of 50 calls is the 50th smallest: the slowest)."""
    if not samples:
        return None
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def latency(seconds: Sequence[float]) -> dict[str, Any]:
    """p50/p99/min/max in milliseconds, and the samples."""

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value * 1000, 1)

    return {
        "calls": len(seconds),
        "p50_ms": ms(percentile(seconds, 0.50)),
        "p99_ms": ms(percentile(seconds, 0.99)),
        "min_ms": ms(min(seconds)) if seconds else None,
        "max_ms": ms(max(seconds)) if seconds else None,
        "samples_ms": [round(s * 1000, 1) for s in seconds],
    }


def ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or theirs <= 0:
        return None
    return round(ours / theirs, 2)


def _p(side: dict[str, Any], kind: str, q: str = "p50") -> float | None:
    value = (side.get(kind) or {}).get(f"{q}_ms")
    return float(value) if value is not None else None


def above_floor(side: dict[str, Any]) -> float | None:
    """kubectl's p50 for PackageManifests less its p50 for namespaces (the part a
    PackageManifest server and the aggregator's route to it account for)."""
    total, floor = _p(side, "kubectl"), _p(side, "kubectl_floor")
    return None if total is None or floor is None else round(total - floor, 1)


def verdict(olm_py: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals, from both sides' results, and the ratios that explain them."""
    added = olm_py.get("added_mib")
    server = reference.get("package_server_rss_mib")
    out: dict[str, Any] = {
        f"{kind}_{q}_ratio": ratio(_p(olm_py, kind, q), _p(reference, kind, q))
        for kind in KINDS
        for q in ("p50", "p99")
    }
    out["above_floor_ms"] = {OLM_PY: above_floor(olm_py), REFERENCE: above_floor(reference)}
    out["above_floor_ratio"] = ratio(above_floor(olm_py), above_floor(reference))
    out["memory_added_mib"] = added
    out["package_server_rss_mib"] = server
    out["memory_fraction"] = ratio(added, server)
    out["latency_goal_met"] = all(
        r is not None and r <= LATENCY_GOAL
        for r in (out["kubectl_p50_ratio"], out["kubectl_p99_ratio"])
    )
    out["memory_goal_met"] = out["memory_fraction"] is not None and (
        out["memory_fraction"] < MEMORY_GOAL
    )
    return out


def listed(table: str) -> int:
    """Rows of `kubectl get packagemanifests -A` (its header left out)."""
    return max(0, len([line for line in table.splitlines() if line.strip()]) - 1)


def _cell(value: Any, unit: str = "", digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{digits}f}{unit}"


def markdown(summary: dict[str, Any]) -> str:
    """The table docs/performance.md shows."""
    ours, theirs = summary[OLM_PY], summary[REFERENCE]
    goals = summary["goals"]
    lines = [
        f"| measure | olm-py (`olm run`) | {REFERENCE} | ratio | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for kind, what in KINDS.items():
        for q in ("p50", "p99"):
            a, b = _p(ours, kind, q), _p(theirs, kind, q)
            goal = f"≤ {LATENCY_GOAL}x" if kind == "kubectl" else ""
            lines.append(
                f"| {what} {q} | {_cell(a, ' ms')} | {_cell(b, ' ms')} "
                f"| {_cell(ratio(a, b), 'x', 2)} | {goal} |"
            )
    floors = goals["above_floor_ms"]
    lines.append(
        f"| kubectl p50 above its floor | {_cell(floors[OLM_PY], ' ms')} "
        f"| {_cell(floors[REFERENCE], ' ms')} | {_cell(goals['above_floor_ratio'], 'x', 2)} | |"
    )
    lines.append(
        f"| memory | +{_cell(goals['memory_added_mib'], ' MiB')} added to `olm run` "
        f"({_cell(ours.get('without_mib'), ' MiB')} → {_cell(ours.get('with_mib'), ' MiB')}) "
        f"| {_cell(goals['package_server_rss_mib'], ' MiB')} package-server RSS "
        f"| {_cell(goals['memory_fraction'], 'x', 2)} | < {MEMORY_GOAL:.2f}x |"
    )
    return "\n".join(lines)


# ----- measuring ------------------------------------------------------------------------------


@dataclass
class Target:
    """One cluster serving the PackageManifest API, as the calls see it."""

    name: str
    cluster: DevCluster
    kubectl: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "KUBECONFIG": str(self.cluster.kubeconfig_path)}

    def table(self) -> str:
        result = subprocess.run(
            [str(self.kubectl), "get", "packagemanifests", "-A"],
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=120,
            check=False,
        )
        return result.stdout if result.returncode == 0 else ""


def _timed(call: Callable[[], Any]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def _await(check: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not reached in {timeout:.0f} s")
        time.sleep(0.5)


def measure_calls(target: Target, progress: Progress) -> dict[str, Any]:
    """WARMUP untimed rounds, then CALLS timed calls of each kind, one kind after the other:
    - `kubectl`: `kubectl get packagemanifests -A`, what the user types and waits for;
    - `kubectl_floor`: `kubectl get namespaces`, kubectl's start-up and one kube-apiserver
      round trip, which no PackageManifest server can make shorter;
    - `table`: the GET kubectl makes (a Table), through the API client: the server's answer
      through the aggregator, without kubectl's start-up;
    - `json`: the whole list as JSON (every manifest), the same way.
    A timed API call is the request and reading the body; its content is checked afterwards."""
    api = api_client(target.cluster.kubeconfig_path)

    def get(path: str, accept: str) -> bytes:
        method, url, headers, _, _ = api.param_serialize(
            "GET", path, header_params={"Accept": accept}, auth_settings=["BearerToken"]
        )
        response = api.call_api(method, url, header_params=headers)
        body: bytes = response.read()
        if response.status != 200:
            raise RuntimeError(f"{target.name}: GET {path} answered {response.status}")
        return body

    def kubectl(*args: str) -> str:
        result = subprocess.run(
            [str(target.kubectl), "get", *args],
            capture_output=True,
            text=True,
            env=target.env(),
            timeout=120,
            check=True,
        )
        return result.stdout

    kinds: dict[str, Callable[[], Any]] = {
        "kubectl": lambda: kubectl("packagemanifests", "-A"),
        "kubectl_floor": lambda: kubectl("namespaces"),
        "table": lambda: get(LIST_PATH, TABLE_ACCEPT),
        "json": lambda: get(LIST_PATH, "application/json"),
    }
    if listed(kubectl("packagemanifests", "-A")) < WANTED:
        raise RuntimeError(f"{target.name}: kubectl listed fewer than {WANTED} packages")
    if len(json.loads(get(LIST_PATH, "application/json"))["items"]) < WANTED:
        raise RuntimeError(f"{target.name}: the JSON list has fewer than {WANTED} items")
    if len(json.loads(get(LIST_PATH, TABLE_ACCEPT))["rows"]) < WANTED:
        raise RuntimeError(f"{target.name}: the Table has fewer than {WANTED} rows")
    for _ in range(WARMUP):
        for call in kinds.values():
            call()
    result = {kind: latency([_timed(call) for _ in range(CALLS)]) for kind, call in kinds.items()}
    progress.say(
        f"{target.name}: "
        + "; ".join(
            f"{kind} p50 {result[kind]['p50_ms']} ms, p99 {result[kind]['p99_ms']} ms"
            for kind in kinds
        )
    )
    return result


def settled_rss(pid: int) -> float:
    """RSS (MiB) once it moved less than 1 MiB over SETTLE_SECONDS (or after SETTLE_TIMEOUT)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT
    window: list[tuple[float, float]] = []
    while True:
        now, value = time.monotonic(), rss_mib(pid)
        window = [(t, v) for t, v in window if now - t <= SETTLE_SECONDS] + [(now, value)]
        values = [v for _, v in window]
        if now - window[0][0] >= SETTLE_SECONDS - 0.5 and max(values) - min(values) < 1.0:
            return round(value, 1)
        if now > deadline:
            return round(value, 1)
        time.sleep(0.5)


@contextmanager
def served_catalog(directory: Path, log: Path) -> Iterator[int]:
    """`opm serve` of the generated catalog on a free 127.0.0.1 port (stopped by its PID)."""
    opm = ensure_binaries().path("opm")
    port = free_ports(1)[0]
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(opm), "serve", str(directory), "-p", str(port), "--pprof-addr=", "-t",
             str(log.with_suffix(".term"))],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        yield port
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _register(cluster: DevCluster, port: int) -> None:
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": CATALOG, "namespace": "olm"},
        "spec": {
            "sourceType": "grpc",
            "address": f"{LOOPBACK}:{port}",
            "displayName": "Generated catalog",
            "publisher": "benchmarks",
        },
    }
    cluster.kubectl("apply", "-f", "-", stdin=json.dumps(source))


def _ready(cluster: DevCluster) -> bool:
    try:
        state = cluster.kubectl(
            "get", "catalogsource", CATALOG, "-n", "olm", "-o",
            "jsonpath={.status.connectionState.lastObservedState}",
        )  # fmt: skip
    except Exception:
        return False
    return state.strip() == "READY"


def _pid(cluster: DevCluster, name: str) -> int:
    return next(r.pid for r in cluster.processes() if r.name == name and is_running(r))


def olm_py(state: Path, catalog: Path, progress: Progress) -> dict[str, Any]:
    cluster = DevCluster(state / "olm-py", binaries=ensure_binaries(), progress=progress)
    cluster.up()
    try:
        manifests.install(cluster)
        kubectl = ensure_binaries().path("kubectl")
        target = Target(OLM_PY, cluster, kubectl)
        with served_catalog(catalog, state / "opm-olm-py.log") as port:
            _register(cluster, port)
            run = [sys.executable, "-m", "olm.cli", "run"]
            cluster.start_process("olm-run", [*run, "--no-package-server"])
            _await(lambda: _ready(cluster), "olm/bench READY (olm run --no-package-server)", 300)
            without = settled_rss(_pid(cluster, "olm-run"))
            progress.say(f"olm-py: olm run --no-package-server settled at {without} MiB")
            stop(next(r for r in cluster.processes() if r.name == "olm-run"))
            started = time.monotonic()
            cluster.start_process("olm-run", run)
            _await(lambda: listed(target.table()) >= WANTED, "every package listed", READY_TIMEOUT)
            seconds = round(time.monotonic() - started, 1)
            progress.say(f"olm-py: {WANTED} PackageManifests listed {seconds} s after start")
            calls = measure_calls(target, progress)
            pid = _pid(cluster, "olm-run")
            with_server = settled_rss(pid)
        return {
            **calls,
            "seconds_until_listed": seconds,
            "without_mib": without,
            "with_mib": with_server,
            "added_mib": round(with_server - without, 1),
            "load": load(),
        }
    finally:
        cluster.down()


def reference(state: Path, catalog: Path, progress: Progress) -> dict[str, Any]:
    with (
        reference_side(state, progress) as side,
        served_catalog(catalog, state / "opm-reference.log") as port,
    ):
        cluster = side.cluster
        started = time.monotonic()
        _register(cluster, port)
        target = Target(REFERENCE, cluster, ensure_binaries().path("kubectl"))
        _await(lambda: listed(target.table()) >= WANTED, "every package listed", READY_TIMEOUT)
        seconds = round(time.monotonic() - started, 1)
        progress.say(f"reference: {WANTED} PackageManifests listed {seconds} s after the apply")
        calls = measure_calls(target, progress)
        pid = _pid(cluster, PACKAGE_SERVER)
        server = settled_rss(pid)
        total, each = side.rss()
        return {
            **calls,
            "seconds_until_listed": seconds,
            "package_server_rss_mib": server,
            "olm_and_catalog_rss_mib": round(total, 1),
            "by_process_mib": {k: round(v, 1) for k, v in each.items()},
            "load": load(),
        }


def run(results_dir: Path, write: bool = True) -> dict[str, Any]:
    progress = Progress()
    summary: dict[str, Any] = {
        "benchmark": "packagemanifests",
        "catalog": {"packages": PACKAGES, "bundles": PACKAGES * BUNDLES_PER_PACKAGE},
        "calls": CALLS,
        "warmup": WARMUP,
        "load_at_start": load(),
    }
    with tempfile.TemporaryDirectory(prefix="olm-bench-pm-") as directory:
        root = Path(directory)
        catalog = root / "catalog"
        catalog.mkdir()
        summary["catalog"]["megabytes"] = round(generate(catalog) / 1e6, 1)
        summary[OLM_PY] = olm_py(root / "olm-py-side", catalog, progress)
        summary[REFERENCE] = reference(root / "reference-side", catalog, progress)
    summary["goals"] = verdict(summary[OLM_PY], summary[REFERENCE])
    summary["load_at_end"] = load()
    if write:
        _write(results_dir, summary)
    print(markdown(summary), file=sys.stderr)
    return summary


def _write(results_dir: Path, summary: dict[str, Any]) -> None:
    (results_dir / "packagemanifests.json").write_text(json.dumps(summary, indent=2))
    bars: list[tuple[str, float]] = []
    for key in KINDS:
        for side in (OLM_PY, REFERENCE):
            for q in ("p50", "p99"):
                value = (summary[side].get(key) or {}).get(f"{q}_ms")
                if value is not None:
                    bars.append((f"{key} {q} · {side}", value))
    bar_chart(
        results_dir / "packagemanifests-latency.svg",
        f"kubectl get packagemanifests -A, {PACKAGES} packages: olm-py vs {REFERENCE}",
        "ms",
        bars,
    )


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.packagemanifests`: one run, written to benchmarks/results/."""
    parser(
        "benchmarks.packagemanifests",
        __doc__,
        takes="tens of minutes (two fresh local clusters one after the other, olm-py's and the "
        "real OLM's; needs the built binaries and the reference OLM)",
        writes="benchmarks/results/packagemanifests.json and packagemanifests-latency.svg",
    ).parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind: clusters go down
    print(json.dumps(run(RESULTS), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
