"""Benchmark: warm `olm dev up` to a usable cluster, and the control plane's memory.

"Usable" is the issue's definition: `/readyz` answers ok and a one-replica Deployment is
Available. Memory is the resident set (VmRSS) of each component once that Deployment is up.
"""

from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import run_once
from benchmarks.plot import bar_chart
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.progress import Progress

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "bench", "namespace": "default"},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "bench"}},
        "template": {
            "metadata": {"labels": {"app": "bench"}},
            "spec": {"containers": [{"name": "c", "image": "bench:1"}]},
        },
    },
}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def one_run(progress: Progress) -> dict[str, Any]:
    binaries = ensure_binaries()
    with tempfile.TemporaryDirectory(prefix="olm-bench-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=binaries)
        started = time.monotonic()
        try:
            cluster.up()
            up_done = time.monotonic()
            cluster.kubectl("apply", "-f", "-", stdin=json.dumps(DEPLOYMENT))
            cluster.kubectl(
                "wait",
                "--for=condition=Available",
                "deployment/bench",
                "--timeout=120s",
                timeout=150,
            )
            usable = time.monotonic()
            again = time.monotonic()
            assert cluster.is_up()
            already_up = time.monotonic() - again
            memory = {p.name: round(rss_mib(p.pid), 1) for p in cluster.processes()}
        finally:
            cluster.down()
    result = {
        "up_seconds": round(up_done - started, 2),
        "usable_seconds": round(usable - started, 2),
        "already_up_check_seconds": round(already_up, 3),
        "rss_mib": memory,
        "rss_total_mib": round(sum(memory.values()), 1),
    }
    progress.say(f"run: {result}")
    return result


def run(results_dir: Path, runs: int = 3) -> dict[str, Any]:
    progress = Progress()
    samples = [one_run(progress) for _ in range(runs)]
    usable = sorted(s["usable_seconds"] for s in samples)
    summary = {
        "benchmark": "devcluster",
        "machine": {
            "cpus": len(__import__("os").sched_getaffinity(0)),
            "python": platform.python_version(),
        },
        "runs": samples,
        "usable_seconds_median": usable[len(usable) // 2],
        "usable_seconds_goal": 60,
        "rss_total_mib_median": sorted(s["rss_total_mib"] for s in samples)[len(samples) // 2],
    }
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "devcluster.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "devcluster-up.svg",
        "Warm `olm dev up` until a Deployment is Available",
        "s",
        [(f"run {i + 1}: up", s["up_seconds"]) for i, s in enumerate(samples)]
        + [(f"run {i + 1}: usable", s["usable_seconds"]) for i, s in enumerate(samples)],
        goal=60,
    )
    bar_chart(
        results_dir / "devcluster-memory.svg",
        "Control-plane memory (RSS, last run)",
        "MiB",
        [*samples[-1]["rss_mib"].items(), ("total", samples[-1]["rss_total_mib"])],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.devcluster`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.devcluster",
        __doc__,
        run,
        argv,
        takes="a few minutes (3 warm `olm dev up` runs; needs the built control-plane binaries)",
        writes="benchmarks/results/devcluster.json, devcluster-up.svg and devcluster-memory.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
