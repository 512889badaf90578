"""Benchmark: `olm install` on a fresh local cluster until olm-py is ready.

Ready is what `olm install` waits for: OLM's CRDs Established, the olm-py Deployment
Available (2 replicas) and one replica holding the leader Lease, i.e. reconciling. On the
local cluster the pods run as local `olm run` processes (the pod runner), so the time includes
their start. Measured as the user runs it: `olm install` in a new process. Goal: 30 s.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
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

GOAL_SECONDS = 30


def one_run(progress: Progress) -> dict[str, Any]:
    binaries = ensure_binaries()
    with tempfile.TemporaryDirectory(prefix="olm-bench-install-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=binaries)
        try:
            cluster.up()
            started = time.monotonic()
            # The local cluster runs any `.../olm-py` image as this venv's `olm` (podrunner).
            subprocess.run(
                [sys.executable, "-m", "olm.cli", "install", "--image", "localhost/olm-py:dev"],
                env={**os.environ, **cluster.env()},
                check=True,
                capture_output=True,
                timeout=300,
            )
            ready = time.monotonic() - started
        finally:
            cluster.down()
    result = {"install_seconds": round(ready, 2)}
    progress.say(f"run: {result}")
    return result


def run(results_dir: Path, runs: int = 3) -> dict[str, Any]:
    progress = Progress()
    samples = [one_run(progress) for _ in range(runs)]
    times = sorted(s["install_seconds"] for s in samples)
    summary = {
        "benchmark": "olm_install",
        "machine": {"cpus": len(os.sched_getaffinity(0)), "python": platform.python_version()},
        "runs": samples,
        "install_seconds_median": times[len(times) // 2],
        "install_seconds_goal": GOAL_SECONDS,
    }
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "olm_install.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "olm-install.svg",
        "`olm install` on a fresh local cluster until olm-py leads",
        "s",
        [(f"run {i + 1}", s["install_seconds"]) for i, s in enumerate(samples)],
        goal=GOAL_SECONDS,
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.olm_install`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.olm_install",
        __doc__,
        run,
        argv,
        takes="several minutes (3 runs of `olm install`, each on a fresh local cluster)",
        writes="benchmarks/results/olm_install.json and olm-install.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
