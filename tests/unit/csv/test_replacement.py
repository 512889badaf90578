"""The replacement chain as plain data: cycles, the chosen replacer, lineage, and the
explained problems (olm/csv/replacement.py)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.replacement import (
    chosen_replacer,
    cycle,
    deployment_owner_problem,
    lineage,
    replacement_problem,
    replaces,
)


def csv(name: str, replaces: str | None = None, born: int = 0, **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "creationTimestamp": f"2026-11-22T11:00:{born:02d}Z",
            **meta,
        },
        "spec": {"replaces": replaces} if replaces is not None else {},
    }


def ns(*csvs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["metadata"]["name"]: c for c in csvs}


COPY = {"labels": {"olm.copiedFrom": "elsewhere"}}
GOING = {"deletionTimestamp": "2026-11-22T12:00:00Z"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, ""), ("", ""), ("a", ""), ("old", "old"), (7, "")],
    ids=["unset", "empty", "itself", "another", "not a string"],
)
def test_replaces_ignores_self_and_junk(value: Any, expected: str) -> None:
    body = csv("a")
    body["spec"]["replaces"] = value
    assert replaces(body) == expected


@pytest.mark.parametrize(
    ("csvs", "start", "expected"),
    [
        (ns(csv("a", "b"), csv("b", "a")), "a", ["a", "b"]),
        (ns(csv("a", "b"), csv("b", "a")), "b", ["b", "a"]),
        (ns(csv("a", "b"), csv("b", "c"), csv("c", "a")), "a", ["a", "b", "c"]),
        (ns(csv("a", "b"), csv("b", "c"), csv("c")), "a", None),
        (ns(csv("a", "gone")), "a", None),
        (ns(csv("a", "a")), "a", None),
        (ns(csv("d", "a"), csv("a", "b"), csv("b", "a")), "d", None),
        (ns(csv("a", "b"), csv("b", "a", **COPY)), "a", None),
        (ns(csv("a", "b"), csv("b", "a", **GOING)), "a", None),
    ],
    ids=[
        "two",
        "two from the other end",
        "three",
        "a chain",
        "replaces a missing CSV",
        "replaces itself",
        "leads into a cycle",
        "through a copy",
        "through a CSV being deleted",
    ],
)
def test_cycle(csvs: dict[str, dict[str, Any]], start: str, expected: list[str] | None) -> None:
    assert cycle(start, csvs) == expected


@pytest.mark.parametrize(
    ("csvs", "expected"),
    [
        (ns(csv("old"), csv("new", "old")), "new"),
        (ns(csv("old"), csv("b", "old", born=2), csv("c", "old", born=1)), "c"),
        (ns(csv("old"), csv("b", "old", born=1), csv("c", "old", born=1)), "b"),
        (ns(csv("old"), csv("b", "old", born=1, **COPY), csv("c", "old", born=2)), "c"),
        (ns(csv("old"), csv("b", "old", born=1, **GOING), csv("c", "old", born=2)), "c"),
        (ns(csv("old")), None),
    ],
    ids=["one", "the older", "same second: by name", "not a copy", "not one being deleted", "none"],
)
def test_chosen_replacer(csvs: dict[str, dict[str, Any]], expected: str | None) -> None:
    chosen = chosen_replacer("old", csvs)
    assert (chosen["metadata"]["name"] if chosen else None) == expected


@pytest.mark.parametrize(
    ("csvs", "start", "expected"),
    [
        (ns(csv("a"), csv("b", "a"), csv("c", "b"), csv("other")), "b", {"a", "b", "c"}),
        (ns(csv("a", "b"), csv("b", "a")), "a", {"a", "b"}),
        (ns(csv("old"), csv("b", "old"), csv("c", "old")), "b", {"old", "b", "c"}),
        (ns(csv("a", "gone"), csv("b", "gone")), "a", {"a"}),  # no CSV links them
        (ns(csv("a"), csv("b", "a", **COPY)), "a", {"a"}),
    ],
    ids=["a chain", "a cycle", "siblings", "a missing common ancestor", "a copy"],
)
def test_lineage(csvs: dict[str, dict[str, Any]], start: str, expected: set[str]) -> None:
    assert lineage(start, csvs) == expected


@pytest.mark.parametrize(
    ("csvs", "subject", "fragments"),
    [
        (ns(csv("a", "b"), csv("b", "a")), "a", ["forms a cycle (a replaces b, b replaces a)"]),
        (
            ns(csv("old"), csv("b", "old", born=1), csv("c", "old", born=2)),
            "c",
            ["names old, which ClusterServiceVersion b already replaces", "Delete c"],
        ),
        (ns(csv("old"), csv("b", "old", born=1), csv("c", "old", born=2)), "b", None),
        (ns(csv("b", "gone", born=1), csv("c", "gone", born=2)), "c", ["b already replaces"]),
        (ns(csv("a", "a")), "a", None),
        (ns(csv("a", "missing")), "a", None),
    ],
    ids=["cycle", "second replacer", "first replacer", "rivals of a missing CSV", "self", "fresh"],
)
def test_replacement_problem(
    csvs: dict[str, dict[str, Any]], subject: str, fragments: list[str] | None
) -> None:
    problem = replacement_problem(csvs[subject], csvs)
    if fragments is None:
        assert problem is None
    else:
        assert problem is not None
        for fragment in fragments:
            assert fragment in problem


def owned_by(owner: str, namespace: str = "ns") -> dict[str, Any]:
    return {"metadata": {"labels": {"olm.owner": owner, "olm.owner.namespace": namespace}}}


@pytest.mark.parametrize(
    ("csvs", "owner", "conflict"),
    [
        (ns(csv("me"), csv("other")), "other", True),
        (ns(csv("me", "other"), csv("other")), "other", False),  # an upgrade takes it over
        (ns(csv("me"), csv("newer", "me")), "newer", False),  # my own replacement has it
        (ns(csv("old"), csv("me", "old"), csv("rival", "old")), "rival", False),  # settled
        # by the one-replacer rule, which fails the younger before it installs anything
        (ns(csv("me")), "gone", False),  # the owner is gone: adopt
        (ns(csv("me"), csv("other", **GOING)), "other", False),
        (ns(csv("me"), csv("other", **COPY)), "other", False),
        (ns(csv("me")), "me", False),
    ],
    ids=[
        "unrelated",
        "replaced",
        "replacement",
        "rival",
        "gone",
        "being deleted",
        "copy",
        "mine",
    ],
)
def test_deployment_owner_problem(
    csvs: dict[str, dict[str, Any]], owner: str, conflict: bool
) -> None:
    problem = deployment_owner_problem(csvs["me"], csvs, ["op"], {"op": owned_by(owner)})
    assert (problem is not None) is conflict
    if conflict:
        assert problem is not None and "Deployment op" in problem and owner in problem


def test_a_deployment_owned_in_another_namespace_is_not_a_conflict() -> None:
    csvs = ns(csv("me"), csv("other"))
    assert (
        deployment_owner_problem(csvs["me"], csvs, ["op"], {"op": owned_by("other", "x")}) is None
    )
