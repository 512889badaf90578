"""Encoded list answers kept while the catalogs are unchanged (olm/packages/answers.py)."""

from __future__ import annotations

import datetime

from olm.packages import query
from olm.packages.answers import Answers


def test_an_answer_is_kept_for_its_request_and_snapshot_only() -> None:
    answers = Answers(budget=100)
    answers.put(1, ("ns", "table"), b"one")
    assert answers.get(1, ("ns", "table")) == b"one"
    assert answers.get(1, ("ns", "json")) is None
    assert answers.get(2, ("ns", "table")) is None  # the catalogs changed since
    answers.put(2, ("ns", "json"), b"two")
    assert len(answers) == 1 and answers.get(1, ("ns", "table")) is None
    answers.put(1, ("ns", "table"), b"stale")  # built from a snapshot replaced meanwhile
    assert answers.get(1, ("ns", "table")) is None and len(answers) == 1


def test_the_budget_drops_the_least_recently_used_first() -> None:
    answers = Answers(budget=10)
    answers.put(1, "a", b"aaaa")
    answers.put(1, "b", b"bbbb")
    assert answers.get(1, "a") == b"aaaa"  # now the most recent
    answers.put(1, "c", b"cccc")
    assert answers.get(1, "b") is None
    assert answers.get(1, "a") == b"aaaa" and answers.get(1, "c") == b"cccc"
    assert answers.size == 8
    answers.put(1, "huge", b"x" * 11)  # larger than the budget: never kept
    assert answers.get(1, "huge") is None and answers.size == 8
    answers.put(1, "a", b"a")  # replaced: the size follows
    assert answers.size == 5


def test_a_table_depends_on_each_catalogs_age() -> None:
    def manifest(created: str) -> dict[str, object]:
        return {"metadata": {"name": "p", "creationTimestamp": created}, "status": {}}

    catalogs = [
        query.Visible("olm", "a", [manifest("2026-01-01T00:00:00Z")]),
        query.Visible("olm", "empty", []),
        query.Visible("team", "b", [manifest("2026-01-01T00:59:00Z")]),
    ]
    now = datetime.datetime(2026, 1, 1, 1, 0, tzinfo=datetime.UTC)
    assert query.catalog_ages(catalogs, now) == ("60m", "", "60s")
    later = now + datetime.timedelta(seconds=1)
    assert query.catalog_ages(catalogs, later) == ("60m", "", "61s")
