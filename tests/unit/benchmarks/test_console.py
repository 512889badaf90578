"""The console benchmark's table (docs/performance.md quotes it)."""

from __future__ import annotations

from benchmarks.console import markdown


def test_the_table_has_a_row_per_page() -> None:
    page = {
        "path": "/catalog",
        "first_view_ms": 120.5,
        "first_view_max_ms": 150.0,
        "p50_ms": 40.0,
        "p99_ms": 90.0,
        "size_kb": 30.2,
    }
    text = markdown({"pages": {"catalog": page}})
    assert text.splitlines()[0].startswith("| page | first view (median, max) |")
    assert "| catalog (`/catalog`) | 120.5 ms, 150.0 ms | 40.0 ms | 90.0 ms | 30.2 KB |" in text
