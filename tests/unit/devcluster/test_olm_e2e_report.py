"""The table of OLM's e2e suite in docs/olm-e2e.md (olm/devcluster/olm_e2e_report.py)."""

from __future__ import annotations

import json
from pathlib import Path

from olm.devcluster.olm_e2e_report import load_outcomes, markdown, rows, totals


def _write(directory: Path, *outcomes: tuple[str, str]) -> None:
    directory.mkdir(parents=True)
    items = [
        {"name": name, "state": state, "seconds": 1.0, "message": ""} for name, state in outcomes
    ]
    (directory / "outcomes.json").write_text(json.dumps(items))


def test_a_rerun_replaces_an_earlier_outcome_and_setup_nodes_are_not_specs(tmp_path: Path) -> None:
    _write(tmp_path / "shard-1", ("[BeforeSuite]", "passed"), ("[It] a", "failed"))
    _write(tmp_path / "shard-1" / "rerun", ("[It] a", "passed"))
    _write(tmp_path / "shard-2", ("[It] a", "skipped"), ("[It] b", "skipped"))
    assert load_outcomes(tmp_path) == {"a": "passed", "b": "skipped"}, "not selected is no run"


def test_the_totals_count_what_passes_on_the_reference_and_every_active_spec() -> None:
    table = rows(
        {"a": "passed", "b": "failed", "c": "passed", "p": "pending"},
        {"a": "passed", "b": "passed", "c": "failed", "p": "pending"},
        [{"match": "^b$", "note": "why | not"}, {"match": "b", "note": "never this one"}],
    )
    assert totals(table) == [
        "olm-py passes 1 of 2 specs that pass on the reference OLM",
        "olm-py passes 2 of 3 active specs",
    ]
    assert "| b | failed | passed | why \\| not |" in markdown(table)
    assert "| a | passed | passed |  |" in markdown(table), "no note for a spec that passes"
