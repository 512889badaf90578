"""The 10,000-namespace step of benchmarks/reference_olm.py (issue 28, item 4), and its dry
plan. `python -m benchmarks.reference_olm --only ten-thousand` runs it on both sides, one
fresh cluster after the other; `python -m benchmarks.ten_thousand --plan` prints what a run
would do and need, and starts nothing.

On each side's cluster: `NAMESPACES` tenant namespaces first, then four phases, each timed
from its first write until its end state, with RSS of the side's processes sampled meanwhile
(peak) and read once settled, and the API server's and etcd's memory beside them:
1. copies off (OLMConfig `disableCopiedCSVs: true`), 1 AllNamespaces operator -> Succeeded;
2. copies on -> its copy in every namespace (10,000 copies);
3. copies off (the copies go), 4 more operators -> all 5 Succeeded;
4. copies on -> every namespace holds all 5 (50,000 copies).
A phase that does not finish in `PHASE_TIMEOUT` ends the side's run; what ran out is recorded
(the machine's available memory, etcd's database size against its quota, the API server's
RSS, the counts reached), and the later phases are reported as not run.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.cli import parser
from benchmarks.global_operators import global_csv

NAMESPACES = 10_000
OPERATORS = 5
PHASE_TIMEOUT = 3600.0
# What one copy costs, measured at 1,000 namespaces (docs/performance.md): bytes in etcd (the
# benchmark CSV's JSON with managed fields), and seconds per copy at olm-py's and OLM's rates.
COPY_BYTES = 9_000
ETCD_QUOTA_BYTES = 4 * 2**30  # --quota-backend-bytes of the local cluster's etcd
PHASES = (
    ("one_operator_copies_off", 1, False),
    ("one_operator_copies_on", 1, True),
    ("five_operators_copies_off", 5, False),
    ("five_operators_copies_on", 5, True),
)


def mem_available_mib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def plan(namespaces: int = NAMESPACES, rates: dict[str, float] | None = None) -> dict[str, Any]:
    """What a run does and needs, from the measured per-copy cost (pure but for /proc)."""
    rates = rates or {"olm-py": 80.0, "reference": 22.0}
    copies = {name: namespaces * operators if on else 0 for name, operators, on in PHASES}
    most = max(copies.values())
    etcd_bytes = most * COPY_BYTES * 2  # the live copies and as much again of history
    steps = []
    for name, operators, on in PHASES:
        step: dict[str, Any] = {"phase": name, "operators": operators, "copies": copies[name]}
        if on:
            step["minutes_at_rate"] = {
                side: round(copies[name] / rate / 60, 1) for side, rate in rates.items()
            }
        steps.append(step)
    return {
        "namespaces": namespaces,
        "objects_before_any_operator": {
            "namespaces": namespaces,
            "serviceaccounts (default)": namespaces,
            "configmaps (kube-root-ca.crt)": namespaces,
        },
        "phases": steps,
        "etcd_estimate_mib": round(etcd_bytes / 2**20),
        "etcd_quota_mib": ETCD_QUOTA_BYTES // 2**20,
        "etcd_fits": etcd_bytes < ETCD_QUOTA_BYTES,
        "machine_mem_available_mib": round(mem_available_mib()),
        "phase_timeout_seconds": PHASE_TIMEOUT,
        "copy_rates_assumed_per_second": rates,
        "order": "olm-py's cluster, then the reference cluster (never both at once)",
    }


def _csv_total(side: Any) -> int:
    from benchmarks.reference_olm import CSV_PATH, listed_count

    return listed_count(side.get(f"{CSV_PATH}/clusterserviceversions?limit=1") or {})


def _olm_config(side: Any, copies: bool) -> None:
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OLMConfig",
            "metadata": {"name": "cluster"},
            "spec": {"features": {"disableCopiedCSVs": not copies}},
        }
    )


def _what_ran_out(side: Any) -> dict[str, Any]:
    from benchmarks.devcluster import rss_mib

    apiserver = [r.pid for r in side.cluster.processes() if r.name == "kube-apiserver"]
    return {
        "machine_mem_available_mib": round(mem_available_mib()),
        "apiserver_rss_mib": round(rss_mib(apiserver[0]), 1) if apiserver else None,
        "csvs": _csv_total(side),
    }


def _phase(side: Any, done: Callable[[], bool], progress: Any, label: str) -> dict[str, Any]:
    from benchmarks.reference_olm import SETTLE_SECONDS, load

    started = time.monotonic()
    peak, said = 0.0, 0.0
    while not done():
        peak = max(peak, side.rss()[0])
        elapsed = time.monotonic() - started
        if elapsed > PHASE_TIMEOUT:
            return {"complete": False, "seconds": round(elapsed, 1), "ran_out": _what_ran_out(side)}
        if elapsed - said >= 60:
            said = elapsed
            progress.say(f"{side.name}: {label}: {_csv_total(side)} CSVs after {elapsed:.0f} s")
        time.sleep(1.0)
    seconds = time.monotonic() - started
    until = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < until:
        peak = max(peak, side.rss()[0])
        time.sleep(0.5)
    total, each = side.rss()
    progress.say(f"{side.name}: {label}: {seconds:.1f} s; RSS {total:.0f} MiB (peak {peak:.0f})")
    return {
        "complete": True,
        "seconds": round(seconds, 1),
        "rss_mib": round(total, 1),
        "peak_rss_mib": round(max(peak, total), 1),
        "by_process_mib": {k: round(v, 1) for k, v in each.items()},
        "load": load(),
    }


def ten_thousand(side: Any, progress: Any, namespaces: int = NAMESPACES) -> dict[str, Any]:
    """The four phases on one side's cluster (see the module's docstring)."""
    from benchmarks.reference_olm import (
        OPERATORS_NAMESPACE,
        _create_tenants,
        _succeeded,
        listed_count,
    )

    _olm_config(side, copies=False)
    started = time.monotonic()
    _create_tenants(side, 0, namespaces)
    result: dict[str, Any] = {"namespaces_created_seconds": round(time.monotonic() - started, 1)}
    total = listed_count(side.get("/api/v1/namespaces?limit=1") or {})
    applied = 0
    for name, operators, copies in PHASES:
        _olm_config(side, copies)
        for index in range(applied, operators):
            side.apply(global_csv(index), OPERATORS_NAMESPACE)
        applied = operators
        want = operators * total if copies else operators

        def done(want: int = want, operators: int = operators) -> bool:
            return _succeeded(side) == operators and _csv_total(side) == want

        result[name] = _phase(side, done, progress, name)
        if not result[name]["complete"]:
            for later, _, _ in PHASES[PHASES.index((name, operators, copies)) + 1 :]:
                result[later] = {"complete": False, "not_run": True}
            break
    return result


def main(argv: list[str] | None = None) -> int:
    cli = parser(
        "benchmarks.ten_thousand",
        __doc__,
        takes="a moment with --plan; a run (reference_olm --only ten-thousand) hours",
        writes="nothing with --plan (it prints the plan)",
    )
    cli.add_argument("--plan", action="store_true", required=True, help="print the dry plan")
    cli.add_argument("--namespaces", type=int, default=NAMESPACES)
    args = cli.parse_args(argv)
    print(json.dumps(plan(args.namespaces), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
