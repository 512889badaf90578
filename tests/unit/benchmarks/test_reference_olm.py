"""The pure helpers of the olm-py vs real OLM bench (benchmarks/reference_olm.py), on plain dicts."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.reference_olm import (
    OLM_PY,
    REFERENCE,
    STORIES,
    awaits_approval,
    deployment_back,
    expected_csvs,
    five_operators_row,
    listed_count,
    markdown,
    memory_rows,
    merge_step,
    only_step,
    plan_for,
    ratio,
    spread,
    timing_rows,
)


def plan(name: str, csvs: list[str], approved: bool, created: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"clusterServiceVersionNames": csvs, "approved": approved},
    }


@pytest.mark.parametrize(
    ("samples", "median", "low", "high"),
    [
        ([1.0], 1.0, 1.0, 1.0),
        ([3.0, 1.0, 2.0], 2.0, 1.0, 3.0),
        ([1.0, 2.0, 3.0, 10.0], 2.5, 1.0, 10.0),
        ([], None, None, None),
    ],
)
def test_spread(samples: list[float], median: float | None, low: Any, high: Any) -> None:
    result = spread(samples)
    assert (result["median"], result["min"], result["max"]) == (median, low, high)
    assert len(result["samples"]) == len(samples)


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [(1.0, 4.0, 0.25), (4.0, 1.0, 4.0), (None, 1.0, None), (1.0, None, None), (1.0, 0.0, None)],
)
def test_ratio(ours: float | None, theirs: float | None, expected: float | None) -> None:
    assert ratio(ours, theirs) == expected


@pytest.mark.parametrize(
    ("plans", "csv", "expected"),
    [
        ([], "a.v1", None),
        ([plan("p1", ["b.v1"], False, "2026-01-01T00:00:00Z")], "a.v1", None),
        ([plan("p1", ["a.v1"], False, "2026-01-01T00:00:00Z")], "a.v1", "p1"),
        (
            [
                plan("old", ["a.v1"], True, "2026-01-01T00:00:00Z"),
                plan("new", ["a.v1"], False, "2026-01-01T00:00:05Z"),
            ],
            "a.v1",
            "new",
        ),
        ([{"metadata": {"name": "bare"}}], "a.v1", None),
    ],
)
def test_plan_for(plans: list[dict[str, Any]], csv: str, expected: str | None) -> None:
    found = plan_for(plans, csv)
    assert (found["metadata"]["name"] if found else None) == expected


@pytest.mark.parametrize(
    ("candidate", "expected"),
    [
        (None, False),
        (plan("p", ["a"], False, ""), True),
        (plan("p", ["a"], True, ""), False),
        ({"metadata": {"name": "p"}, "spec": {}}, True),
    ],
)
def test_awaits_approval(candidate: dict[str, Any] | None, expected: bool) -> None:
    assert awaits_approval(candidate) is expected


@pytest.mark.parametrize(
    ("deployment", "expected"),
    [
        (None, False),
        ({"metadata": {"uid": "old"}, "status": {"availableReplicas": 1}}, False),
        ({"metadata": {"uid": "new"}, "status": {}}, False),
        ({"metadata": {"uid": "new"}, "status": {"availableReplicas": 0}}, False),
        ({"metadata": {"uid": "new"}, "status": {"availableReplicas": 1}}, True),
    ],
)
def test_deployment_back(deployment: dict[str, Any] | None, expected: bool) -> None:
    assert deployment_back(deployment, "old") is expected


@pytest.mark.parametrize(
    ("listing", "expected"),
    [
        ({}, 0),
        ({"items": []}, 0),
        ({"items": [{}]}, 1),
        ({"items": [{}], "metadata": {"remainingItemCount": 999}}, 1000),
    ],
)
def test_listed_count(listing: dict[str, Any], expected: int) -> None:
    assert listed_count(listing) == expected


def test_rows_and_table() -> None:
    timings = {
        OLM_PY: {"kubectl_csv": spread([0.5, 0.4, 0.6])},
        REFERENCE: {"kubectl_csv": spread([2.0, 1.0, 3.0]), "upgrade": spread([5.0])},
    }
    rows = timing_rows(timings)
    assert [row["story"] for row in rows] == list(STORIES)
    assert rows[0]["ratio"] == 0.25
    upgrade = next(row for row in rows if row["story"] == "upgrade")
    assert upgrade["ratio"] is None
    memory = {
        OLM_PY: [{"namespaces": 10, "rss_mib": 100.0, "seconds_until_copies": 1.0}],
        REFERENCE: [
            {"namespaces": 10, "rss_mib": 200.0, "seconds_until_copies": 2.0},
            {
                "namespaces": 1000,
                "rss_mib": 900.0,
                "seconds_until_copies": None,
                "by_process_mib": {"samples-catalog": 50.0},
            },
        ],
    }
    mem = memory_rows(memory)
    assert [(row["namespaces"], row["ratio"]) for row in mem] == [(10, 0.5), (1000, None)]
    assert [row["opm_serve_mib"] for row in mem] == [None, 50.0]
    text = markdown({"timing_rows": rows, "memory_rows": mem})
    assert (
        "| kubectl apply CSV -> Succeeded | 0.50 s (0.40-0.60) | 2.00 s (1.00-3.00) | 0.25x |"
        in text
    )
    assert "| 1,000 | — | 900.0 MiB | — | 50.0 MiB | — / — |" in text


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], None),
        (["--quick"], None),
        (["--only", "five-operators"], "five_operators"),
        (["--only=five-operators"], "five_operators"),
    ],
)
def test_only_step(args: list[str], expected: str | None) -> None:
    assert only_step(args) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [(["--only"], "needs a step"), (["--only", "memory"], "unknown step")],
)
def test_only_step_usage_errors(args: list[str], message: str) -> None:
    with pytest.raises(SystemExit, match=message) as raised:
        only_step(args)
    assert "five-operators" in str(raised.value)


@pytest.mark.parametrize(
    ("operators", "namespaces", "expected"),
    [(1, 1006, 1006), (5, 1006, 5030), (5, 1, 5), (0, 10, 0)],
)
def test_expected_csvs(operators: int, namespaces: int, expected: int) -> None:
    assert expected_csvs(operators, namespaces) == expected


def test_five_operators_row_and_table() -> None:
    assert five_operators_row({}) is None
    five = {
        OLM_PY: {
            "namespaces": 1000,
            "operators": 5,
            "rss_mib": 150.0,
            "peak_rss_mib": 160.0,
            "seconds_until_copies": 90.0,
        },
        REFERENCE: {
            "namespaces": 1000,
            "operators": 5,
            "rss_mib": 300.0,
            "peak_rss_mib": 320.0,
            "seconds_until_copies": None,
            "by_process_mib": {"samples-catalog": 53.0},
        },
    }
    row = five_operators_row(five)
    assert row is not None
    assert (row["ratio"], row["opm_serve_mib"], row[f"{REFERENCE}_peak_rss_mib"]) == (
        0.5,
        53.0,
        320.0,
    )
    text = markdown({"timing_rows": [], "memory_rows": [], "five_operators_row": row})
    assert "| 1,000 x 5 operators | 150.0 MiB | 300.0 MiB | 0.50x | 53.0 MiB | 90.0 s / — |" in text
    only_ours = five_operators_row({OLM_PY: five[OLM_PY]})
    assert only_ours is not None and only_ours["ratio"] is None


@pytest.mark.parametrize(
    ("previous_phases", "expected_phases"),
    [
        ([], ["five_operators"]),
        ([{"phase": "stories"}, {"phase": "memory"}], ["stories", "memory", "five_operators"]),
        ([{"phase": "memory"}, {"phase": "five_operators"}], ["memory", "five_operators"]),
    ],
)
def test_merge_step(previous_phases: list[dict[str, Any]], expected_phases: list[str]) -> None:
    previous = {"timings": {"a": 1}, "memory": {"b": 2}, "phases": previous_phases}
    merged = merge_step(previous, "five_operators", {"x": 3}, [{"phase": "five_operators"}])
    assert merged["five_operators"] == {"x": 3}
    assert (merged["timings"], merged["memory"]) == ({"a": 1}, {"b": 2})
    assert [phase["phase"] for phase in merged["phases"]] == expected_phases
    assert previous["phases"] == previous_phases  # the previous results are left as they were
