"""Parity with the real OLM v0: every scenario runs on a reference cluster (the real OLM
v0.38) and on an olm-py cluster, one after the other; the snapshots are normalized and diffed
field by field, and any difference not in known_differences.yaml fails the scenario.

The full report of each run (every difference, listed or not, and each side's raw snapshots)
is written to ~/.local/state/olm-py/parity/report/ for triage.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.parity.harness import (
    reference_available,
    reference_kind,
    started,
    state_root,
    sweep_crashed_runs,
)
from tests.parity.known import KNOWN, load_known, unlisted
from tests.parity.normalize import Difference, diff_runs
from tests.parity.scenarios import SCENARIOS, Scenario, Snapshots

pytestmark = pytest.mark.parity

SIDES = ("reference", "olm-py")
Results = dict[str, dict[str, Any]]  # scenario -> side -> Snapshots | error text, + timings


def _selected(session: pytest.Session) -> list[Scenario]:
    wanted = {
        item.callspec.params["scenario"].name
        for item in session.items
        if hasattr(item, "callspec") and "scenario" in item.callspec.params
    }
    return [s for s in SCENARIOS if s.name in wanted]


def _report_dir() -> Path:
    path = state_root() / "report"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Results:
    ok, why = reference_available()
    if not ok:
        pytest.skip(why)
    sweep_crashed_runs()
    scenarios = _selected(request.session)
    results: Results = {s.name: {"seconds": {}} for s in scenarios}
    for side in SIDES:
        began = time.monotonic()
        try:
            with started(side, reference_kind()) as running:
                results["*startup*"] = {side: time.monotonic() - began}
                for scenario in scenarios:
                    t0 = time.monotonic()
                    try:
                        results[scenario.name][side] = scenario.run(running)
                    except Exception:  # recorded; the scenario's test reports it
                        results[scenario.name][side] = traceback.format_exc()
                    results[scenario.name]["seconds"][side] = round(time.monotonic() - t0, 1)
        except Exception:
            error = f"{side} cluster did not start:\n{traceback.format_exc()}"
            for scenario in scenarios:
                results[scenario.name].setdefault(side, error)
            if side == "reference":
                break  # nothing to compare with: do not spend the olm-py run
    return results


def _write_report(
    name: str, result: dict[str, Any], differences: list[Difference], open_: list[Difference]
) -> Path:
    path = _report_dir() / f"{name}.json"
    path.write_text(
        json.dumps(
            {
                "scenario": name,
                "reference": reference_kind(),
                "seconds": result.get("seconds"),
                "unlisted": [str(d) for d in open_],
                "differences": [d.__dict__ for d in differences],
                "snapshots": {side: result.get(side) for side in SIDES},
            },
            indent=1,
            default=str,
        )
    )
    return path


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_parity(scenario: Scenario, runs: Results) -> None:
    result = runs[scenario.name]
    errors = {side: result[side] for side in SIDES if isinstance(result.get(side), str)}
    if errors:  # kept apart, so the last complete report stays for `rediff`
        _write_report(scenario.name + ".failed", result, [], [])
        pytest.fail("\n".join(f"--- {side}:\n{text}" for side, text in errors.items()))
    reference: Snapshots = result["reference"]
    olm_py: Snapshots = result["olm-py"]
    differences = diff_runs(reference, olm_py)
    known = load_known(yaml.safe_load(KNOWN.read_text()) or [])
    open_ = unlisted(scenario.name, differences, known)
    report = _write_report(scenario.name, result, differences, open_)
    assert not open_, (
        f"{len(open_)} difference(s) not in tests/parity/known_differences.yaml "
        f"(full report: {report}):\n" + "\n".join(str(d) for d in open_)
    )
