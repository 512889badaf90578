"""Benchmark: one namespace's resolution against an operatorhub.io-size catalog (2,100
candidates), three Subscriptions to random packages per run; p50 and p99 over 200 runs."""

from __future__ import annotations

import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.catalogs import PACKAGES, generate
from benchmarks.cli import run_once
from benchmarks.plot import bar_chart
from olm.catalog.fbc import load_fbc
from olm.resolution.catalogs import candidates
from olm.resolution.model import Source, Wanted
from olm.resolution.resolver import Resolver

RUNS = 200


def run(results_dir: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="olm-bench-resolve-") as directory:
        generate(Path(directory))
        catalog = load_fbc(Path(directory))
    source = Source("operatorhub", "olm", own_namespace=False)
    pool = candidates(catalog, source)
    rng = random.Random(7)
    timings = []
    for _ in range(RUNS):
        wanted = [
            Wanted(
                f"sub-{i}", f"operator-{rng.randrange(PACKAGES):03d}", source.name, source.namespace
            )
            for i in range(3)
        ]
        started = time.perf_counter()
        decision = Resolver(pool, [], [source]).resolve(wanted)
        timings.append((time.perf_counter() - started) * 1000)
        assert decision.ok, decision.failures
    timings.sort()
    summary = {
        "benchmark": "resolution",
        "candidates": len(pool),
        "subscriptions_per_namespace": 3,
        "runs": RUNS,
        "p50_ms": round(timings[len(timings) // 2], 1),
        "p99_ms": round(timings[int(len(timings) * 0.99) - 1], 1),
        "max_ms": round(timings[-1], 1),
        "goal_p99_ms": 100,
    }
    (results_dir / "resolution.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "resolution.svg",
        f"Resolving a namespace against {len(pool)} candidates",
        "ms",
        [("p50", summary["p50_ms"]), ("p99", summary["p99_ms"]), ("max", summary["max_ms"])],
        goal=100,
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.resolution`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.resolution",
        __doc__,
        run,
        argv,
        takes="about a minute (generates the catalog, then 200 resolutions)",
        writes="benchmarks/results/resolution.json and resolution.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
