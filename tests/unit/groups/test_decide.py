"""The OperatorGroup decision, branch by branch, on plain dicts."""

from __future__ import annotations

import datetime
from dataclasses import replace
from typing import Any

import pytest

from olm.api.operatorgroup import OperatorGroupConditionType, OperatorGroupReason
from olm.groups.decide import GroupPlan, GroupSnapshot, csvs_to_wake, decide, is_copy
from olm.scope.conflicts import pruned_provided_apis
from tests.unit.groups.world import EARLIER, NAMESPACES, NOW, STAMP, group, snapshot


def csv(
    name: str,
    *,
    annotations: dict[str, str] | None = None,
    reason: str = "",
    owned: list[dict[str, str]] | None = None,
    copied: bool = False,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "own", "annotations": annotations or {}}
    if copied:
        meta["labels"] = {"olm.copiedFrom": "elsewhere"}
    if deleting:
        meta["deletionTimestamp"] = EARLIER
    return {
        "metadata": meta,
        "spec": {"customresourcedefinitions": {"owned": owned or []}},
        "status": {"reason": reason} if reason else {},
    }


IN_STEP = {
    "olm.operatorGroup": "og",
    "olm.operatorNamespace": "own",
    "olm.targetNamespaces": "own",
}
SYNCED = {"namespaces": ["own"], "lastUpdated": EARLIER}
MEMCACHED = {"name": "memcacheds.cache.example.com", "version": "v1alpha1", "kind": "Memcached"}


# ----- targets and status.namespaces ----------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "status", "expected"),
    [
        pytest.param({}, None, {"namespaces": [""], "lastUpdated": STAMP}, id="new-all-namespaces"),
        pytest.param(
            {"targetNamespaces": ["own"]},
            None,
            {"namespaces": ["own"], "lastUpdated": STAMP},
            id="new-own-namespace",
        ),
        pytest.param(
            {"targetNamespaces": ["b", "a", "a"]},
            None,
            {"namespaces": ["a", "b"], "lastUpdated": STAMP},
            id="explicit-sorted-deduplicated",
        ),
        pytest.param(
            {"selector": {"matchLabels": {"team": "x"}}},
            None,
            {"namespaces": ["a"], "lastUpdated": STAMP},
            id="selector",
        ),
        pytest.param(
            {"selector": {"matchLabels": {"team": "nobody"}}},
            None,
            {"namespaces": None, "lastUpdated": STAMP},
            id="selector-matches-none-is-omitted",
        ),
        pytest.param(
            {"targetNamespaces": ["a"], "selector": {"matchLabels": {"team": "y"}}},
            None,
            {"namespaces": ["a"], "lastUpdated": STAMP},
            id="target-namespaces-win-over-selector",
        ),
        pytest.param(
            {"targetNamespaces": ["own"]},
            {"namespaces": ["own"], "lastUpdated": EARLIER},
            None,
            id="unchanged-writes-nothing",
        ),
        pytest.param(
            {"targetNamespaces": ["a", "b"]},
            {"namespaces": ["b", "a"], "lastUpdated": EARLIER},
            None,
            id="order-does-not-matter",
        ),
        pytest.param(
            {"targetNamespaces": ["a"]},
            {"namespaces": ["own"], "lastUpdated": EARLIER},
            {"namespaces": ["a"], "lastUpdated": STAMP},
            id="targets-changed",
        ),
        pytest.param(
            {"targetNamespaces": ["own"]},
            {"namespaces": ["own"]},
            {"namespaces": ["own"], "lastUpdated": STAMP},
            id="missing-lastUpdated-is-written",
        ),
    ],
)
def test_status_namespaces(
    spec: dict[str, Any], status: dict[str, Any] | None, expected: dict[str, Any] | None
) -> None:
    assert decide(snapshot(group(spec, status))).status == expected


def test_a_group_already_in_step_gets_an_empty_plan() -> None:
    plan = decide(
        snapshot(
            group({"targetNamespaces": ["own"]}, SYNCED),
            csvs=(csv("op.v1", annotations=IN_STEP, reason="InstallSucceeded"),),
        )
    )
    assert plan == GroupPlan()


def test_deciding_twice_over_the_written_result_writes_nothing() -> None:
    first = decide(snapshot(group({"targetNamespaces": ["own", "gone"]})))
    assert first.status is not None
    written = group({"targetNamespaces": ["own", "gone"]}, first.status)
    assert decide(snapshot(written)).status is None


# ----- the namespace itself --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snap", "expected"),
    [
        pytest.param(snapshot(group(), terminating=True), GroupPlan(), id="terminating-namespace"),
        pytest.param(
            snapshot(group(), namespaces={"a": {}}),
            GroupPlan(requeue_after=1.0),
            id="namespaces-not-listed-yet",
        ),
        pytest.param(
            snapshot(None, csvs=(csv("b.v1"), csv("a.v1"), csv("c", copied=True))),
            GroupPlan(wake_csvs=["a.v1", "b.v1"]),
            id="deleted-group-wakes-its-csvs",
        ),
        pytest.param(
            snapshot(group(deleting=True), csvs=(csv("a.v1"), csv("x", deleting=True))),
            GroupPlan(wake_csvs=["a.v1"]),
            id="deleting-group-wakes-live-csvs",
        ),
    ],
)
def test_no_writes(snap: GroupSnapshot, expected: GroupPlan) -> None:
    assert decide(snap) == expected


# ----- conditions ------------------------------------------------------------------------------


def conditions_of(plan: GroupPlan) -> dict[str, dict[str, Any]]:
    assert plan.status is not None
    return {c["type"]: c for c in plan.status.get("conditions") or []}


def test_multiple_groups_set_the_condition_and_an_event() -> None:
    plan = decide(
        snapshot(group({}, {"namespaces": [""], "lastUpdated": EARLIER}), siblings=("og", "og2"))
    )
    condition = conditions_of(plan)[OperatorGroupConditionType.MULTIPLE_OPERATOR_GROUP]
    assert condition["status"] == "True"
    assert condition["reason"] == OperatorGroupReason.MULTIPLE_OPERATOR_GROUPS_FOUND
    assert condition["message"].startswith("Multiple OperatorGroup found in the same namespace")
    assert '"og", "og2"' in condition["message"] and "delete the others" in condition["message"]
    assert condition["lastTransitionTime"] == STAMP
    assert [(e.type, e.reason) for e in plan.events] == [("Warning", "MultipleOperatorGroupsFound")]


def test_multiple_groups_condition_is_kept_then_cleared() -> None:
    first = decide(
        snapshot(group({}, {"namespaces": [""], "lastUpdated": EARLIER}), siblings=("og", "og2"))
    )
    assert first.status is not None
    kept = group({}, {"namespaces": [""], "lastUpdated": EARLIER, **first.status})
    assert decide(snapshot(kept, siblings=("og", "og2"))).status is None, "no churn"
    cleared = decide(snapshot(kept))
    assert cleared.status == {"conditions": None}
    assert cleared.events == []


def test_other_conditions_are_left_alone() -> None:
    foreign = {"type": "Example", "status": "True", "reason": "R", "message": "m"}
    status = {"namespaces": [""], "lastUpdated": EARLIER, "conditions": [foreign]}
    assert decide(snapshot(group({}, status))).status is None
    plan = decide(snapshot(group({}, status), siblings=("og", "z")))
    assert plan.status is not None
    assert plan.status["conditions"][0] == foreign


def test_a_missing_target_namespace_is_explained() -> None:
    plan = decide(snapshot(group({"targetNamespaces": ["own", "nowhere"]})))
    assert plan.status is not None
    assert plan.status["namespaces"] == ["nowhere", "own"], "OLM keeps it in status.namespaces"
    condition = conditions_of(plan)[OperatorGroupConditionType.MISSING_TARGET_NAMESPACES]
    assert condition["status"] == "True"
    assert condition["reason"] == OperatorGroupReason.TARGET_NAMESPACE_NOT_FOUND
    assert condition["message"] == (
        'spec.targetNamespaces names namespace "nowhere", which does not exist: create it '
        "(kubectl create namespace nowhere) or remove it from spec.targetNamespaces"
    )
    assert [e.reason for e in plan.events] == ["TargetNamespaceNotFound"]
    assert plan.events[0].message == condition["message"]


def test_several_missing_namespaces_are_named_together() -> None:
    plan = decide(snapshot(group({"targetNamespaces": ["z", "y"]})))
    message = conditions_of(plan)[OperatorGroupConditionType.MISSING_TARGET_NAMESPACES]["message"]
    assert message.startswith('spec.targetNamespaces names namespaces "y", "z", which do not')
    assert "kubectl create namespace y z" in message


def test_the_missing_namespace_condition_follows_the_cluster() -> None:
    first = decide(snapshot(group({"targetNamespaces": ["late"]})))
    assert first.status is not None
    waiting = group({"targetNamespaces": ["late"]}, first.status)
    assert decide(snapshot(waiting)).status is None, "no churn while it is missing"
    created = decide(snapshot(waiting, namespaces={**NAMESPACES, "late": {}}))
    assert created.status == {"conditions": None}
    other = decide(snapshot(group({"targetNamespaces": ["later"]}, first.status)))
    assert other.status is not None and [e.reason for e in other.events] == [
        "TargetNamespaceNotFound"
    ], "a different missing namespace is a new Event"
    time = conditions_of(other)[OperatorGroupConditionType.MISSING_TARGET_NAMESPACES]
    assert time["lastTransitionTime"] == first.status["conditions"][0]["lastTransitionTime"]


def test_an_empty_target_namespace_is_explained_and_dropped() -> None:
    plan = decide(snapshot(group({"targetNamespaces": ["", "own"]})))
    assert plan.status is not None
    assert plan.status["namespaces"] == ["own"]
    condition = conditions_of(plan)[OperatorGroupConditionType.INVALID_TARGET_NAMESPACES]
    assert condition["reason"] == OperatorGroupReason.EMPTY_TARGET_NAMESPACE
    assert 'empty name ("")' in condition["message"]
    only_empty = decide(snapshot(group({"targetNamespaces": [""]})))
    assert only_empty.status is not None and only_empty.status["namespaces"] is None


# ----- olm.providedAPIs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "annotations", "csvs", "expected"),
    [
        pytest.param(
            {},
            None,
            (csv("a", owned=[MEMCACHED]),),
            None,
            id="added-by-the-csv-not-the-group",
        ),
        pytest.param(
            {},
            {"olm.providedAPIs": "Memcached.v1alpha1.cache.example.com"},
            (csv("a", owned=[MEMCACHED]),),
            None,
            id="unchanged",
        ),
        pytest.param(
            {}, {"olm.providedAPIs": "Memcached.v1alpha1.cache.example.com"}, (), "", id="pruned"
        ),
        pytest.param({}, None, (), None, id="none-and-none"),
        pytest.param(
            {}, None, (csv("a", owned=[MEMCACHED], copied=True),), None, id="copies-ignored"
        ),
        pytest.param(
            {"staticProvidedAPIs": True},
            {"olm.providedAPIs": "Static.v1.x.io"},
            (csv("a", owned=[MEMCACHED]),),
            None,
            id="static-left-alone",
        ),
    ],
)
def test_provided_apis(
    spec: dict[str, Any],
    annotations: dict[str, str] | None,
    csvs: tuple[dict[str, Any], ...],
    expected: str | None,
) -> None:
    g = group(spec, {"namespaces": [""], "lastUpdated": EARLIER}, annotations)
    snap = replace(snapshot(g, csvs=csvs), pruned_provided_apis=pruned_provided_apis(g, csvs))
    assert decide(snap).provided_apis == expected


# ----- which CSVs to wake ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snap", "expected"),
    [
        pytest.param(
            snapshot(
                group({"targetNamespaces": ["own"]}, SYNCED), csvs=(csv("a", annotations=IN_STEP),)
            ),
            [],
            id="in-step",
        ),
        pytest.param(
            snapshot(group({"targetNamespaces": ["own"]}, SYNCED), csvs=(csv("a"),)),
            ["a"],
            id="not-annotated-yet",
        ),
        pytest.param(
            snapshot(
                group({}, {"namespaces": [""], "lastUpdated": EARLIER}),
                csvs=(csv("a", annotations=IN_STEP),),
            ),
            ["a"],
            id="targets-moved",
        ),
        pytest.param(
            snapshot(
                group({"targetNamespaces": ["own"]}, SYNCED),
                csvs=(csv("a", annotations=IN_STEP, reason="NoOperatorGroup"),),
            ),
            ["a"],
            id="group-failure-rechecks",
        ),
        pytest.param(
            snapshot(group({"targetNamespaces": ["own"]}), csvs=(csv("a"),)),
            [],
            id="status-not-written-yet",
        ),
        pytest.param(
            snapshot(
                group({"targetNamespaces": ["own"]}, SYNCED),
                siblings=("og", "og2"),
                csvs=(csv("a", reason="TooManyOperatorGroups"), csv("b", annotations=IN_STEP)),
            ),
            ["b"],
            id="too-many-groups",
        ),
        pytest.param(
            snapshot(
                group({"targetNamespaces": ["own"]}, SYNCED),
                csvs=(csv("copy", copied=True), csv("gone", deleting=True)),
            ),
            [],
            id="copies-and-deleting-skipped",
        ),
    ],
)
def test_csvs_to_wake(snap: GroupSnapshot, expected: list[str]) -> None:
    assert csvs_to_wake(snap, snap.group) == expected
    assert decide(snap).wake_csvs == expected


def test_is_copy() -> None:
    assert is_copy(csv("a", copied=True))
    assert is_copy({"metadata": {"name": "a"}, "status": {"reason": "Copied"}})
    assert not is_copy(csv("a"))


def test_decide_does_not_modify_its_input() -> None:
    g = group({"targetNamespaces": ["nowhere"]}, {"conditions": []})
    before = repr(g)
    snap = snapshot(g, siblings=("og", "og2"), csvs=(csv("a", owned=[MEMCACHED]),))
    decide(snap)
    decide(replace(snap, group=None))
    assert repr(g) == before


@pytest.mark.parametrize(
    ("age", "reported", "requeue"),
    [
        pytest.param(2, False, 3.0, id="just-created-looks-again"),
        pytest.param(5, True, None, id="after-the-grace"),
        pytest.param(3600, True, None, id="old-group"),
    ],
)
def test_a_missing_namespace_gets_a_grace_period(
    age: int, reported: bool, requeue: float | None
) -> None:
    g = group({"targetNamespaces": ["own", "soon"]})
    created = NOW - datetime.timedelta(seconds=age)
    g["metadata"]["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    plan = decide(snapshot(g))
    assert plan.status is not None
    assert ("conditions" in plan.status) is reported
    assert bool(plan.events) is reported
    assert plan.requeue_after == requeue
