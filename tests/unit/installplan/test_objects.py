"""What a step writes over an existing object: owners merged, a ServiceAccount's secrets and
annotations kept, nothing written when nothing is missing (OLM's step_ensurer)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.installplan.objects import (
    contains,
    generated_by,
    is_established,
    merge_owner_references,
    resolve_owners,
    update_for,
    with_resource_version,
)


def owner(name: str, uid: str, controller: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "name": name,
        "uid": uid,
        "controller": controller,
        "blockOwnerDeletion": False,
    }


@pytest.mark.parametrize(
    ("case", "sets", "merged"),
    [
        ("empty", [], []),
        (
            "different uids",
            [[owner("a", "x"), owner("a", "y")]],
            [owner("a", "x"), owner("a", "y")],
        ),
        (
            "live first, then new",
            [[owner("old", "x")], [owner("new", "y")]],
            [owner("old", "x"), owner("new", "y")],
        ),
        ("duplicates combined", [[owner("a", "x")], [owner("a", "x")]], [owner("a", "x")]),
        (
            "one entry per uid: the live one wins",
            [[owner("a", "x", True)], [owner("a", "x")]],
            [owner("a", "x", True)],
        ),
        (
            "an owner without uid is added",
            [[owner("a", "x")], [owner("b", "")]],
            [owner("a", "x"), owner("b", "")],
        ),
    ],
)
def test_merge_owner_references(
    case: str, sets: list[list[dict[str, Any]]], merged: list[dict[str, Any]]
) -> None:
    assert merge_owner_references(*sets) == merged, case


def test_resolve_owners_fills_csv_uids_and_drops_unknown_ones() -> None:
    manifest = {
        "kind": "Role",
        "metadata": {"name": "r", "ownerReferences": [owner("known", ""), owner("unknown", "")]},
    }
    body = resolve_owners(manifest, {"known": "uid-k"})
    assert body["metadata"]["ownerReferences"] == [owner("known", "uid-k")]
    assert manifest["metadata"]["ownerReferences"][0]["uid"] == "", "input untouched"
    assert "ownerReferences" not in resolve_owners(manifest, {})["metadata"]


def test_a_service_account_update_keeps_owners_secrets_and_annotations() -> None:
    existing = {
        "kind": "ServiceAccount",
        "metadata": {
            "name": "sa",
            "ownerReferences": [owner("old", "x")],
            "annotations": {"kept": "1", "replaced": "old"},
        },
        "secrets": [{"name": "token"}],
    }
    desired = {
        "kind": "ServiceAccount",
        "metadata": {
            "name": "sa",
            "ownerReferences": [owner("new", "y")],
            "annotations": {"replaced": "new"},
        },
        "secrets": [{"name": "other"}],
    }
    body = update_for(existing, desired)
    assert body["metadata"]["ownerReferences"] == [owner("old", "x"), owner("new", "y")]
    assert body["metadata"]["annotations"] == {"kept": "1", "replaced": "new"}
    assert "secrets" not in body


def test_other_kinds_keep_their_owners_and_take_the_steps_content() -> None:
    existing = {
        "kind": "Role",
        "metadata": {"name": "r", "ownerReferences": [owner("old", "x")]},
        "rules": [1],
    }
    desired = {
        "kind": "Role",
        "metadata": {"name": "r", "ownerReferences": [owner("new", "y")]},
        "rules": [2],
    }
    body = update_for(existing, desired)
    assert body["metadata"]["ownerReferences"] == [owner("old", "x"), owner("new", "y")]
    assert body["rules"] == [2] and "annotations" not in body["metadata"]


@pytest.mark.parametrize(
    ("live", "desired", "expected"),
    [
        ({"a": 1, "b": 2}, {"a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ({"a": {"b": [1, {"c": 1, "d": 2}]}}, {"a": {"b": [1, {"c": 1}]}}, True),
        ({"a": [1, 2]}, {"a": [1]}, False),
        ({"a": "1"}, {"a": 1}, False),
        ({"a": None}, {"a": {}}, False),
    ],
)
def test_contains(live: Any, desired: Any, expected: bool) -> None:
    assert contains(live, desired) is expected


def test_with_resource_version() -> None:
    body = {"metadata": {"name": "x"}}
    assert with_resource_version(body, {"metadata": {"resourceVersion": "9"}})["metadata"] == {
        "name": "x",
        "resourceVersion": "9",
    }
    assert body == {"metadata": {"name": "x"}}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        (
            [
                {"type": "Established", "status": "True"},
                {"type": "NamesAccepted", "status": "True"},
            ],
            True,
        ),
        ([{"type": "Established", "status": "True"}], False),
        (
            [
                {"type": "Established", "status": "False"},
                {"type": "NamesAccepted", "status": "True"},
            ],
            False,
        ),
    ],
)
def test_is_established(conditions: list[dict[str, str]], expected: bool) -> None:
    assert is_established({"status": {"conditions": conditions}}) is expected
    assert is_established(None) is False


def test_a_subscription_step_names_the_plan_that_writes_it() -> None:
    """OLM's ExecutePlan annotates a dependency's Subscription `olm.generated-by: <plan>`."""
    sub = {"kind": "Subscription", "metadata": {"name": "s", "annotations": {"keep": "me"}}}
    assert generated_by(sub, "install-abcde")["metadata"]["annotations"] == {
        "keep": "me",
        "olm.generated-by": "install-abcde",
    }
    role = {"kind": "Role", "metadata": {"name": "r"}}
    assert generated_by(role, "install-abcde") == {"kind": "Role", "metadata": {"name": "r"}}
