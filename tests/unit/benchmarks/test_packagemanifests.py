"""The PackageManifest benchmark's pure parts: percentiles, goals, the table it prints."""

from __future__ import annotations

from benchmarks import packagemanifests as bench


def test_nearest_rank_percentiles() -> None:
    samples = [0.01 * i for i in range(1, 51)]  # 10 ms .. 500 ms, 50 calls
    assert bench.percentile(samples, 0.5) == samples[24]
    assert bench.percentile(samples, 0.99) == samples[49]  # of 50: the slowest
    assert bench.percentile([], 0.5) is None
    summary = bench.latency(list(reversed(samples)))
    assert (summary["calls"], summary["p50_ms"], summary["p99_ms"]) == (50, 250.0, 500.0)
    assert (summary["min_ms"], summary["max_ms"]) == (10.0, 500.0)


def _side(p50: float, p99: float, **more: float) -> dict[str, object]:
    return {
        "kubectl": {"p50_ms": p50, "p99_ms": p99},
        "kubectl_floor": {"p50_ms": 60.0, "p99_ms": 70.0},
        "table": {"p50_ms": p50 / 4, "p99_ms": p99 / 4},
        "json": {"p50_ms": p50 / 2, "p99_ms": p99 / 2},
        **more,
    }


def test_the_goals_are_half_the_latency_and_a_third_of_the_memory() -> None:
    ours = _side(100, 180, added_mib=20.0, without_mib=80.0, with_mib=100.0)
    theirs = _side(250, 400, package_server_rss_mib=90.0)
    goals = bench.verdict(ours, theirs)
    assert (goals["kubectl_p50_ratio"], goals["kubectl_p99_ratio"]) == (0.4, 0.45)
    assert goals["latency_goal_met"] and goals["memory_goal_met"]
    assert goals["memory_fraction"] == 0.22
    assert goals["table_p50_ratio"] == 0.4 and goals["json_p99_ratio"] == 0.45
    # Above kubectl's floor (its p50 for namespaces): 40 ms against 190 ms.
    assert goals["above_floor_ms"] == {bench.OLM_PY: 40.0, bench.REFERENCE: 190.0}
    assert goals["above_floor_ratio"] == 0.21
    slower = bench.verdict(_side(130, 180, added_mib=40.0), theirs)
    assert not slower["latency_goal_met"] and not slower["memory_goal_met"]
    missing = bench.verdict({}, {})
    assert not missing["latency_goal_met"] and missing["memory_fraction"] is None


def test_rows_listed_by_kubectl_leave_the_header_out() -> None:
    table = "NAMESPACE NAME CATALOG AGE\nolm a x 1m\nolm b x 1m\n"
    assert bench.listed(table) == 2
    assert bench.listed("") == 0


def test_the_markdown_table_names_both_sides_and_the_goals() -> None:
    ours = _side(100, 180, added_mib=20.0, without_mib=80.0, with_mib=100.0)
    theirs = _side(250, 400, package_server_rss_mib=90.0)
    summary = {
        bench.OLM_PY: ours,
        bench.REFERENCE: theirs,
        "goals": bench.verdict(ours, theirs),
    }
    text = bench.markdown(summary)
    assert (
        "| `kubectl get packagemanifests -A` p50 | 100.0 ms | 250.0 ms | 0.40x | ≤ 0.5x |" in text
    )
    assert "+20.0 MiB added to `olm run` (80.0 MiB → 100.0 MiB)" in text
    assert "90.0 MiB package-server RSS | 0.22x | < 0.33x |" in text
    assert "| floor: `kubectl get namespaces` p50 | 60.0 ms | 60.0 ms | 1.00x |  |" in text
    assert "| kubectl p50 above its floor | 40.0 ms | 190.0 ms | 0.21x | |" in text
