"""OLM's namespace sets and the olm.operatorgroup.uid/<uid> namespace labels."""

from __future__ import annotations

from typing import Any

import pytest

from olm.scope.namespaces import (
    ALL,
    build_target_namespaces,
    contains,
    from_annotation,
    intersection,
    namespace_label_patch,
    namespaces_to_relabel,
    status_namespaces,
)


def group(uid: str, namespaces: list[str] | None, *, computed: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if computed:
        status["lastUpdated"] = "2026-01-01T00:00:00Z"
    if namespaces is not None:
        status["namespaces"] = namespaces
    return {"metadata": {"name": f"og-{uid}", "namespace": "own", "uid": uid}, "status": status}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ALL),
        ("", ALL),
        ("a", frozenset({"a"})),
        ("b,a", frozenset({"a", "b"})),
    ],
)
def test_target_annotation_reads_as_olm(value: str | None, expected: frozenset[str]) -> None:
    assert from_annotation(value) == expected


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (ALL, frozenset({"a"}), frozenset({"a"})),
        (frozenset({"a", "b"}), ALL, frozenset({"a", "b"})),
        (frozenset({"a", "b"}), frozenset({"b", "c"}), frozenset({"b"})),
        (ALL, frozenset(), frozenset()),
    ],
)
def test_intersection_treats_all_namespaces_as_everything(
    left: frozenset[str], right: frozenset[str], expected: frozenset[str]
) -> None:
    assert intersection(left, right) == expected


def test_contains_and_targets_string() -> None:
    assert contains(ALL, "anything")
    assert not contains(frozenset({"a"}), "b")
    assert build_target_namespaces(["b", "a"]) == "a,b"
    assert build_target_namespaces([""]) == ""


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (group("u", ["a"]), ("a",)),
        (group("u", None), ()),  # computed, matched nothing (the field is omitted)
        (group("u", None, computed=False), None),  # not computed yet
    ],
)
def test_status_namespaces(obj: dict[str, Any], expected: tuple[str, ...] | None) -> None:
    assert status_namespaces(obj) == expected


GROUPS = [group("u1", ["a", "b"]), group("u2", [""]), group("u3", ["b"])]


@pytest.mark.parametrize(
    ("namespace", "labels", "patch"),
    [
        # a target of a named-namespace group gets its label
        ("a", {}, {"olm.operatorgroup.uid/u1": ""}),
        # two groups target b; an all-namespaces group labels nothing
        ("b", {"team": "x"}, {"olm.operatorgroup.uid/u1": "", "olm.operatorgroup.uid/u3": ""}),
        # in step: nothing to write
        ("a", {"olm.operatorgroup.uid/u1": "", "team": "x"}, None),
        # stale labels of groups that no longer target it go; other labels stay
        ("c", {"olm.operatorgroup.uid/u1": "", "team": "x"}, {"olm.operatorgroup.uid/u1": None}),
        # a wrong value is corrected
        ("a", {"olm.operatorgroup.uid/u1": "x"}, {"olm.operatorgroup.uid/u1": ""}),
    ],
)
def test_namespace_label_patch(
    namespace: str, labels: dict[str, str], patch: dict[str, str | None] | None
) -> None:
    assert namespace_label_patch(namespace, labels, GROUPS) == patch


def test_group_without_uid_labels_nothing() -> None:
    nameless = {"metadata": {"name": "og"}, "status": {"namespaces": ["a"]}}
    assert namespace_label_patch("a", {}, [nameless]) is None


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (["a", "b"], ["b", "c"], ["a", "c"]),
        ([""], ["a"], ["a"]),
        (["a"], None, ["a"]),  # the group was deleted
        (None, ["a"], ["a"]),
    ],
)
def test_namespaces_to_relabel(
    before: list[str] | None, after: list[str] | None, expected: list[str]
) -> None:
    assert namespaces_to_relabel(before, after) == expected
