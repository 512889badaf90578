"""Benchmark: global operators at scale. 1,000 namespaces and 5 AllNamespaces operators in
`operators` (the global OperatorGroup): the memory of `olm run` and the time until every
namespace holds a copy of every CSV, with copied CSVs on, and with OLMConfig's
`disableCopiedCSVs` (issue 10: goals 300 MB and 150 MB; the real OLM, with one operator,
is measured beside olm-py by benchmarks/reference_olm.py).

Round "off" runs first (OLMConfig disables copies, `olm run` starts, the 5 CSVs install),
then `olm run` is stopped, copies are enabled and a fresh `olm run` starts: the clock runs
from its start until the API server holds all 5 x 1,000 copies. RSS is sampled every half
second (peak) and read again once settled.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import run_once
from benchmarks.devcluster import rss_mib
from benchmarks.plot import bar_chart
from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.process import is_running, stop
from olm.progress import Progress

NAMESPACES = 1000
OPERATORS = 5
OPERATOR_NAMESPACE = "operators"
GOALS_MIB = {"copies_on": 300.0, "copies_off": 150.0}
SETTLE_SECONDS = 10.0
TIMEOUT_SECONDS = 900.0
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


def _create_namespaces(cluster: DevCluster, progress: Progress) -> None:
    for start in range(0, NAMESPACES, 100):
        items = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"tenant-{i:04d}"}}
            for i in range(start, min(start + 100, NAMESPACES))
        ]
        _apply(cluster, {"apiVersion": "v1", "kind": "List", "items": items})
    progress.say(f"{NAMESPACES} namespaces created")


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


def _round(cluster: DevCluster, progress: Progress, copies: bool) -> dict[str, Any]:
    """Start `olm run`; wait until the 5 CSVs succeed and the copies are all there (or all
    gone); sample RSS meanwhile."""
    want = OPERATORS + (OPERATORS * (NAMESPACES + _other_namespaces(cluster)) if copies else 0)
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
    settle_until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < settle_until:
        peak = max(peak, rss_mib(pid))
        time.sleep(0.5)
    settled = rss_mib(pid)
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


def _other_namespaces(cluster: DevCluster) -> int:
    """Namespaces besides the tenants and `operators` (default, kube-system, olm, ...)."""
    names = cluster.kubectl("get", "namespaces", "-o", "name").split()
    return len([n for n in names if not n.startswith("namespace/tenant-")]) - 1


def run(results_dir: Path) -> dict[str, Any]:
    progress = Progress()
    with tempfile.TemporaryDirectory(prefix="olm-bench-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=ensure_binaries(), progress=progress)
        cluster.up()
        try:
            manifests.install(cluster)
            _create_namespaces(cluster, progress)
            for index in range(OPERATORS):
                _apply(cluster, global_csv(index), OPERATOR_NAMESPACE)
            olm_config = {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OLMConfig",
                "metadata": {"name": "cluster"},
                "spec": {"features": {"disableCopiedCSVs": True}},
            }
            _apply(cluster, olm_config)
            off = _round(cluster, progress, copies=False)
            _stop_olm_run(cluster)
            olm_config["spec"] = {"features": {"disableCopiedCSVs": False}}
            _apply(cluster, olm_config)
            on = _round(cluster, progress, copies=True)
            _stop_olm_run(cluster)
        finally:
            cluster.down()
    summary = {
        "benchmark": "global_operators",
        "namespaces": NAMESPACES,
        "operators": OPERATORS,
        "copies_on": on,
        "copies_off": off,
    }
    (results_dir / "global_operators.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "global-operators.svg",
        f"olm run RSS, {NAMESPACES} namespaces x {OPERATORS} global operators",
        "MiB",
        [
            ("copies on", on["rss_mib"]),
            ("copies on (peak)", on["peak_rss_mib"]),
            ("copies off", off["rss_mib"]),
            ("copies off (peak)", off["peak_rss_mib"]),
        ],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.global_operators`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.global_operators",
        __doc__,
        run,
        argv,
        takes="15-30 minutes (one local cluster, 1,000 namespaces, two rounds)",
        writes="benchmarks/results/global_operators.json and global-operators.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
