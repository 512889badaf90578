"""Benchmark: API economy (issue 28). The requests each side makes for three stories, counted
from the local API server's audit log (benchmarks/api_requests.py), and the CPU its processes
spend while idle.

On a fresh local cluster per side (`--side olm-py`, `reference` or `both`, one after the
other, never two at once; the reference side is the real OLM v0.38 of
benchmarks/reference_olm.py and needs its fixed ports):
1. "subscription": a Subscription to the samples catalog (Manual, each plan approved as soon as
   it asks), 0.0.1 installed, then the upgrade plan approved and 0.0.2 Succeeded;
2. "new-namespace": with 5 AllNamespaces operators installed and copied everywhere,
   `kubectl create namespace`, until the namespace holds its 5 copies;
3. "idle": then `--namespaces` tenant namespaces (default 1,000) are created and copied, and
   the side is left alone for `--idle-seconds` (default 600): requests and CPU seconds per
   minute of the side's own processes (`olm run`; OLM's `olm` and `catalog`).
Each story's window ends `TAIL_SECONDS` after its end state, so requests that follow it count.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import api_requests
from benchmarks.cli import RESULTS, parser
from benchmarks.global_operators import global_csv
from benchmarks.reference_olm import (
    OLM_PY,
    SAMPLE,
    SIDE_STARTERS,
    SIDES,
    Side,
    _await,
    _create_tenants,
    _subscription_story,
    listed_count,
)
from olm.devcluster.components import APISERVER
from olm.progress import Progress

OPERATORS = 5
TAIL_SECONDS = 5.0
COPY_TIMEOUT = 1800.0
CSV_PATH = "/apis/operators.coreos.com/v1alpha1"


def cpu_seconds(pids: dict[str, int]) -> float:
    """User + system CPU seconds of these processes so far."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids.values():
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def _window(side: Side, log: Path, story: Callable[[], Any]) -> dict[str, Any]:
    since = api_requests.now()
    story()
    time.sleep(TAIL_SECONDS)
    counted = api_requests.summarize(log, since, api_requests.now())
    key = "olm-py" if side.name == OLM_PY else "reference"
    return {"requests": counted["by_side"][key], **counted}


def _settled(side: Side) -> bool:
    csvs = listed_count(side.get(f"{CSV_PATH}/clusterserviceversions?limit=1") or {})
    namespaces = listed_count(side.get("/api/v1/namespaces?limit=1") or {})
    return csvs >= OPERATORS * namespaces


def _new_namespace(side: Side) -> None:
    side.kubectl("create", "namespace", "economy-new")
    path = f"{CSV_PATH}/namespaces/economy-new/clusterserviceversions"
    _await(
        lambda: len((side.get(path) or {}).get("items") or []) >= OPERATORS,
        "the new namespace's copies",
        COPY_TIMEOUT,
    )


def stories(
    side: Side, log: Path, progress: Progress, namespaces: int, idle: float
) -> dict[str, Any]:
    side.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    side.kubectl(
        "wait", "--for=condition=Established", "crd/memcacheds.cache.example.com", "--timeout=60s"
    )
    result: dict[str, Any] = {}
    result["subscription"] = _window(side, log, lambda: _subscription_story(side, "economy-sub"))
    progress.say(f"{side.name}: subscription: {result['subscription']['requests']} requests")
    for index in range(OPERATORS):
        side.apply(global_csv(index), "operators")
    _await(lambda: _settled(side), "5 operators copied everywhere", COPY_TIMEOUT)
    result["new_namespace"] = _window(side, log, lambda: _new_namespace(side))
    progress.say(f"{side.name}: new namespace: {result['new_namespace']['requests']} requests")
    _create_tenants(side, 0, namespaces)
    _await(lambda: _settled(side), f"copies in {namespaces} namespaces", COPY_TIMEOUT)
    time.sleep(TAIL_SECONDS)
    cpu_before = cpu_seconds(side.processes)
    result["idle"] = _window(side, log, lambda: time.sleep(idle))
    minutes = (idle + TAIL_SECONDS) / 60
    result["idle"]["cpu_seconds_per_minute"] = round(
        (cpu_seconds(side.processes) - cpu_before) / minutes, 2
    )
    result["idle"]["requests_per_minute"] = round(result["idle"]["requests"] / minutes, 1)
    progress.say(
        f"{side.name}: idle {idle:.0f} s at {namespaces} namespaces: "
        f"{result['idle']['requests']} requests, "
        f"{result['idle']['cpu_seconds_per_minute']} CPU s/min"
    )
    return result


def run(results_dir: Path, sides: tuple[str, ...], namespaces: int, idle: float) -> dict[str, Any]:
    progress = Progress()
    summary: dict[str, Any] = {
        "benchmark": "api_economy",
        "namespaces": namespaces,
        "idle_seconds": idle,
        "sides": {},
    }
    with tempfile.TemporaryDirectory(prefix="olm-bench-economy-") as state:
        for name in sides:
            log = Path(state) / name.replace(" ", "-") / "audit" / "audit.log"
            extra = {APISERVER: api_requests.audit_args(log)}
            with SIDE_STARTERS[name](Path(state) / name.replace(" ", "-"), progress, extra) as side:
                summary["sides"][name] = stories(side, log, progress, namespaces, idle)
    (results_dir / "api_economy.json").write_text(json.dumps(summary, indent=2))
    return summary


def main(argv: list[str] | None = None) -> int:
    cli = parser(
        "benchmarks.api_economy",
        __doc__,
        takes="15-30 minutes per side at 1,000 namespaces and 10 idle minutes",
        writes="benchmarks/results/api_economy.json",
    )
    cli.add_argument(
        "--side", choices=("olm-py", "reference", "both"), default="both", help="which side(s)"
    )
    cli.add_argument("--namespaces", type=int, default=1000, help="tenants during idle")
    cli.add_argument("--idle-seconds", type=float, default=600.0, help="the idle window")
    cli.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = cli.parse_args(argv)
    chosen = {"olm-py": (SIDES[0],), "reference": (SIDES[1],), "both": SIDES}[args.side]
    print(json.dumps(run(args.out, chosen, args.namespaces, args.idle_seconds), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
