"""Benchmark: `kubectl apply` of a CSV (requirements already met) to Succeeded, and the
memory of `olm run`, on the local cluster.

Each sample is a fresh namespace with the sample operator's OperatorGroup, CRD and RBAC in
place; the clock starts at `kubectl apply` of the CSV and stops when the CSV reads Succeeded.
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
from olm.progress import Progress

SAMPLE = manifests.MANIFESTS / "samples" / "memcached-operator"


def _phase(cluster: DevCluster, namespace: str, name: str) -> str:
    try:
        return cluster.kubectl(
            "get", "csv", name, "-n", namespace, "-o", "jsonpath={.status.phase}"
        )
    except ClusterError:
        return ""


def run(results_dir: Path, samples: int = 8) -> dict[str, Any]:
    progress = Progress()
    with tempfile.TemporaryDirectory(prefix="olm-bench-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=ensure_binaries(), progress=progress)
        cluster.up()
        try:
            manifests.install(cluster)
            cluster.start_process("olm-run", [sys.executable, "-m", "olm.cli", "run"])
            cluster.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
            timings = []
            for index in range(samples):
                namespace = f"bench-{index}"
                cluster.kubectl("create", "namespace", namespace)
                group = {
                    "apiVersion": "operators.coreos.com/v1",
                    "kind": "OperatorGroup",
                    "metadata": {"name": "og"},
                    "spec": {"targetNamespaces": [namespace]},
                }
                cluster.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(group))
                cluster.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
                time.sleep(1.0)  # let the group's status settle, as it would for an admin
                started = time.monotonic()
                cluster.kubectl(
                    "apply",
                    "-n",
                    namespace,
                    "-f",
                    str(SAMPLE / "memcached-operator.v0.0.1.csv.yaml"),
                )
                while (
                    cluster.kubectl(
                        "get",
                        "csv",
                        "memcached-operator.v0.0.1",
                        "-n",
                        namespace,
                        "-o",
                        "jsonpath={.status.phase}",
                    )
                    != "Succeeded"
                ):
                    if time.monotonic() - started > 120:
                        raise RuntimeError(f"{namespace}: CSV did not succeed in 120 s")
                    time.sleep(0.05)
                timings.append(round(time.monotonic() - started, 2))
                progress.say(f"{namespace}: CSV Succeeded after {timings[-1]} s")
            subscription_timings = []
            for index in range(5):
                namespace = f"bench-sub-{index}"
                cluster.kubectl("create", "namespace", namespace)
                group = {
                    "apiVersion": "operators.coreos.com/v1",
                    "kind": "OperatorGroup",
                    "metadata": {"name": "og"},
                    "spec": {"targetNamespaces": [namespace]},
                }
                cluster.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(group))
                time.sleep(1.0)
                subscription = {
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "Subscription",
                    "metadata": {"name": "memcached"},
                    "spec": {
                        "name": "memcached-operator",
                        "channel": "alpha",
                        "source": "samples",
                        "sourceNamespace": "olm",
                        "startingCSV": "memcached-operator.v0.0.2",
                    },
                }
                started = time.monotonic()
                cluster.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(subscription))
                while _phase(cluster, namespace, "memcached-operator.v0.0.2") != "Succeeded":
                    if time.monotonic() - started > 120:
                        raise RuntimeError(f"{namespace}: Subscription did not install in 120 s")
                    time.sleep(0.05)
                subscription_timings.append(round(time.monotonic() - started, 2))
                progress.say(
                    f"{namespace}: Subscription -> CSV Succeeded after {subscription_timings[-1]} s"
                )
            olm_run = next(p for p in cluster.processes() if p.name == "olm-run")
            memory = round(rss_mib(olm_run.pid), 1)
        finally:
            cluster.down()
    ordered = sorted(timings)
    summary = {
        "benchmark": "olm_operator",
        "csv_apply_to_succeeded_seconds": timings,
        "csv_apply_to_succeeded_median": ordered[len(ordered) // 2],
        "csv_apply_to_succeeded_max": ordered[-1],
        "olm_run_rss_mib": memory,
        "subscription_to_succeeded_seconds": subscription_timings,
        "subscription_to_succeeded_median": sorted(subscription_timings)[
            len(subscription_timings) // 2
        ],
        "subscription_to_succeeded_goal": 5.0,
    }
    (results_dir / "olm_operator.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "olm-operator-install.svg",
        "kubectl apply CSV -> Succeeded (requirements met)",
        "s",
        [(f"namespace {i}", t) for i, t in enumerate(timings)],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.olm_operator`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.olm_operator",
        __doc__,
        run,
        argv,
        takes="a few minutes (one local cluster, 8 samples)",
        writes="benchmarks/results/olm_operator.json and olm-operator-install.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
