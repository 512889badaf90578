"""Copied CSVs: the copy OLM writes, which copies to create, update and delete, and the
OLMConfig disableCopiedCSVs toggle."""

from __future__ import annotations

import datetime
from dataclasses import replace
from typing import Any

import pytest

from olm.scope.copies import (
    CopyMeta,
    CopySnapshot,
    copy_prototype,
    dangling_reason,
    plan_copies,
    skip_reason,
    status_edited,
)
from olm.scope.olmconfig import OlmConfigSnapshot, copied_csvs_enabled, plan_olm_config

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
STATUS = {
    "phase": "Succeeded",
    "reason": "InstallSucceeded",
    "message": "install strategy completed with no errors",
    "lastUpdateTime": "2026-01-01T00:00:00Z",
    "requirementStatus": [
        {"group": "", "kind": "ServiceAccount", "name": "etcd", "status": "Present"}
    ],
}


def group(namespaces: list[str] | None = None, name: str = "global-operators") -> dict[str, Any]:
    status: dict[str, Any] = {"lastUpdated": "2026-01-01T00:00:00Z"}
    if namespaces is not None:
        status["namespaces"] = namespaces
    return {"metadata": {"name": name, "namespace": "operators", "uid": "og"}, "status": status}


def original(
    targets: str = "",
    status: dict[str, Any] | None = None,
    *,
    deleting: bool = False,
    group_name: str = "global-operators",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "etcd.v1",
        "namespace": "operators",
        "uid": "csv-uid",
        "resourceVersion": "42",
        "labels": {"operators.coreos.com/etcd.operators": "", "app": "etcd"},
        "annotations": {
            "olm.operatorGroup": group_name,
            "olm.operatorNamespace": "operators",
            "olm.targetNamespaces": targets,
            "kubectl.kubernetes.io/last-applied-configuration": "{...}",
            "alm-examples": "[]",
        },
        "finalizers": ["operators.coreos.com/csv-cleanup"],
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": meta,
        "spec": {"displayName": "etcd", "version": "1.0.0", "installModes": []},
        "status": dict(STATUS if status is None else status),
    }


def existing(namespace: str, csv: dict[str, Any] | None = None) -> CopyMeta:
    """A copy as OLM-py wrote it for `csv` (in step: its status written too)."""
    proto = copy_prototype(csv or original())
    body = proto.body(namespace)
    return CopyMeta.of(
        {
            **body,
            "metadata": {**body["metadata"], "uid": f"uid-{namespace}"},
            "status": dict(proto.status),
        }
    )


def snapshot(**changes: Any) -> CopySnapshot:
    base = CopySnapshot(
        original=original(),
        group=group([""]),
        namespaces=("operators", "a", "b", "c"),
        copies={},
    )
    return replace(base, **changes)


def test_the_copy_is_olms() -> None:
    proto = copy_prototype(original())
    body = proto.body("a")
    assert body["apiVersion"] == "operators.coreos.com/v1alpha1"
    assert body["kind"] == "ClusterServiceVersion"
    assert body["metadata"]["name"] == "etcd.v1"
    assert body["metadata"]["namespace"] == "a"
    assert body["metadata"]["labels"] == {"app": "etcd", "olm.copiedFrom": "operators"}
    annotations = body["metadata"]["annotations"]
    assert "olm.targetNamespaces" not in annotations
    assert "kubectl.kubernetes.io/last-applied-configuration" not in annotations
    assert annotations["olm.operatorGroup"] == "global-operators"
    assert annotations["olm.operatorNamespace"] == "operators"
    assert annotations["alm-examples"] == "[]"
    assert annotations["olm.operatorframework.io/nonStatusCopyHash"] == proto.spec_hash
    assert annotations["olm.operatorframework.io/statusCopyHash"] == proto.status_hash
    assert set(body["metadata"]) == {"name", "namespace", "labels", "annotations"}
    assert body["spec"] == original()["spec"]
    assert "status" not in body
    assert proto.status == {
        **STATUS,
        "reason": "Copied",
        "message": "The operator is running in operators but is managing this namespace",
    }


def test_hashes_follow_what_the_copy_shows() -> None:
    base = copy_prototype(original())
    moved = copy_prototype(original(status={**STATUS, "phase": "Failed"}))
    assert (moved.spec_hash, moved.status_hash != base.status_hash) == (base.spec_hash, True)
    retargeted = copy_prototype(original(targets="a,b"))  # olm.targetNamespaces is not copied
    assert (retargeted.spec_hash, retargeted.status_hash) == (base.spec_hash, base.status_hash)
    edited = original()
    edited["spec"] = {**edited["spec"], "version": "1.0.1"}
    assert copy_prototype(edited).spec_hash != base.spec_hash


@pytest.mark.parametrize(
    ("csv", "grp", "reason"),
    [
        (original(), group([""]), None),
        (original(targets="a,b"), group(["a", "b"]), None),
        (original(status={"phase": "Pending", "reason": "RequirementsNotMet"}), group([""]), None),
        (
            original(targets="operators"),
            group(["operators"]),
            "its OperatorGroup targets only its own namespace",
        ),
        (
            original(targets="a"),
            group([""]),
            "its OperatorGroup annotations are not in step with the group yet",
        ),
        (
            original(group_name="other"),
            group([""]),
            "its OperatorGroup annotations are not in step with the group yet",
        ),
        (
            original(),
            group(None) | {"status": {}},
            "its OperatorGroup has not computed status.namespaces yet",
        ),
        (original(), None, "its OperatorGroup is missing"),
        (original(status={}), group([""]), "its phase or reason is one OLM does not copy"),
        (
            original(status={"phase": "Failed", "reason": "TooManyOperatorGroups"}),
            group([""]),
            "its phase or reason is one OLM does not copy",
        ),
        (original(deleting=True), group([""]), "it is being deleted"),
    ],
)
def test_which_csvs_are_copied(
    csv: dict[str, Any], grp: dict[str, Any] | None, reason: str | None
) -> None:
    assert skip_reason(csv, grp) == reason


def test_a_copy_is_never_copied() -> None:
    body = copy_prototype(original()).body("a")
    copied = {**body, "status": {"phase": "Succeeded", "reason": "Copied"}}
    assert skip_reason(copied, group([""])) == "it is a copy"
    assert plan_copies(snapshot(original=copied)).empty


def names(plan: Any) -> list[tuple[str, bool, bool]]:
    return [(w.namespace, w.create, w.status is not None) for w in plan.writes]


def test_all_namespaces_copies_into_every_other_namespace() -> None:
    plan = plan_copies(snapshot())
    assert names(plan) == [("a", True, True), ("b", True, True), ("c", True, True)]
    assert plan.deletes == []
    assert plan.clear_disabled_events is True
    assert plan.disabled_event is None


def test_copies_in_step_are_left_alone() -> None:
    copies = {ns: existing(ns) for ns in ("a", "b", "c")}
    assert plan_copies(snapshot(copies=copies)).writes == []


def test_a_new_namespace_gets_its_copy() -> None:
    copies = {ns: existing(ns) for ns in ("a", "b", "c")}
    plan = plan_copies(snapshot(copies=copies, namespaces=("operators", "a", "b", "c", "new")))
    assert names(plan) == [("new", True, True)]


def test_status_change_rewrites_status_then_hash() -> None:
    copies = {"a": existing("a")}
    failed = original(status={**STATUS, "phase": "Failed", "reason": "ComponentUnhealthy"})
    plan = plan_copies(snapshot(original=failed, namespaces=("operators", "a"), copies=copies))
    [write] = plan.writes
    steps = write.steps()
    assert [kind for kind, _ in steps] == ["status", "apply"]
    assert steps[0][1]["phase"] == "Failed"
    assert steps[0][1]["reason"] == "Copied"


def test_spec_change_applies_the_body_only() -> None:
    copies = {"a": existing("a")}
    upgraded = original()
    upgraded["spec"] = {**upgraded["spec"], "version": "1.0.1"}
    [write] = plan_copies(
        snapshot(original=upgraded, namespaces=("operators", "a"), copies=copies)
    ).writes
    assert [kind for kind, _ in write.steps()] == ["apply"]
    assert write.body["spec"]["version"] == "1.0.1"


def test_create_carries_both_hashes_and_then_writes_the_status() -> None:
    [write] = plan_copies(snapshot(namespaces=("operators", "a"))).writes
    (first_kind, first), (second_kind, status) = write.steps()
    assert (first_kind, second_kind) == ("apply", "status")
    assert "olm.operatorframework.io/statusCopyHash" in first["metadata"]["annotations"]
    assert status["reason"] == "Copied"


def test_a_created_copy_whose_status_write_failed_is_not_in_step() -> None:
    """The create carries the status hash; until the status is written the copy has none, and
    that is read as out of step, so the next pass writes the status again."""
    proto = copy_prototype(original())
    created = {**proto.body("a"), "metadata": {**proto.body("a")["metadata"], "uid": "u"}}
    assert status_edited(created)
    plan = plan_copies(snapshot(namespaces=("operators", "a"), copies={"a": CopyMeta.of(created)}))
    [write] = plan.writes
    assert write.status is not None and not write.create


def test_multi_namespace_group_copies_to_targets_and_prunes_the_rest() -> None:
    csv = original(targets="a,b")
    copies = {ns: existing(ns, original()) for ns in ("a", "c")}  # c was a target before
    plan = plan_copies(snapshot(original=csv, group=group(["a", "b"]), copies=copies))
    assert names(plan) == [("b", True, True)]  # a is in step: olm.targetNamespaces is not copied
    assert plan.deletes == ["c"]
    assert plan.clear_disabled_events is False


def test_targets_that_do_not_exist_or_are_terminating_get_no_copy() -> None:
    csv = original(targets="a,gone")
    plan = plan_copies(
        snapshot(original=csv, group=group(["a", "gone"]), namespaces=("operators", "a"))
    )
    assert names(plan) == [("a", True, True)]


def test_own_namespace_group_removes_copies() -> None:
    csv = original(targets="operators")
    plan = plan_copies(
        snapshot(original=csv, group=group(["operators"]), copies={"a": existing("a")})
    )
    assert plan.writes == []
    assert plan.deletes == ["a"]


@pytest.mark.parametrize(
    ("csv", "deletes"),
    [
        (original(deleting=True), ["a", "b"]),
        (
            original(status={"phase": "Failed", "reason": "InterOperatorGroupOwnerConflict"}),
            ["a", "b"],
        ),
        # uncopiable, but its copies still target their namespaces: kept, not updated
        (original(status={"phase": "Failed", "reason": "TooManyOperatorGroups"}), []),
    ],
)
def test_copies_of_an_original_that_cannot_be_copied(
    csv: dict[str, Any], deletes: list[str]
) -> None:
    copies = {ns: existing(ns) for ns in ("a", "b")}
    plan = plan_copies(snapshot(original=csv, copies=copies))
    assert plan.writes == []
    assert plan.deletes == deletes


def test_a_namespace_holding_its_own_install_is_reported_not_overwritten() -> None:
    plan = plan_copies(snapshot(namespaces=("operators", "a", "b"), occupied=("b",)))
    assert names(plan) == [("a", True, True)]
    [(namespace, message)] = plan.blocked
    assert namespace == "b"
    assert "also installed in namespace b" in message


def test_disabled_copies_are_removed_except_in_protected_namespaces() -> None:
    copies = {ns: existing(ns) for ns in ("a", "b", "c")}
    plan = plan_copies(
        snapshot(copies=copies, copies_enabled=False, protected_namespaces=frozenset({"b", "p"}))
    )
    assert plan.deletes == ["a", "c"]
    assert plan.writes == []  # b is in step; p does not exist
    assert plan.disabled_event == (
        "Warning",
        "DisabledCopiedCSVs",
        "CSV copying disabled for operators/etcd.v1",
    )
    assert plan.clear_disabled_events is False


def test_disabling_copies_does_not_touch_named_namespace_groups() -> None:
    csv = original(targets="a")
    plan = plan_copies(snapshot(original=csv, group=group(["a"]), copies_enabled=False))
    assert names(plan) == [("a", True, True)]
    assert plan.disabled_event is None


def test_enabling_again_brings_them_back() -> None:
    plan = plan_copies(snapshot(copies={"b": existing("b")}))
    assert names(plan) == [("a", True, True), ("c", True, True)]
    assert plan.clear_disabled_events is True


@pytest.mark.parametrize(
    ("copy", "parent", "reason"),
    [
        (existing("a"), original(), None),
        (
            CopyMeta("a", "etcd.v1", labels={"olm.copiedFrom": "operators"}),
            original(),
            "it has no olm.operatorNamespace annotation",
        ),
        (existing("a"), None, "its original operators/etcd.v1 is gone"),
        (existing("a"), original(targets="b"), "its original no longer targets namespace a"),
        (existing("a"), original(targets="a,b"), None),
        (existing("operators"), original(), "it sits in its original's namespace"),
    ],
)
def test_garbage_collection_of_copies(
    copy: CopyMeta, parent: dict[str, Any] | None, reason: str | None
) -> None:
    assert dangling_reason(copy, parent) == reason


@pytest.mark.parametrize(
    ("config", "enabled"),
    [
        (None, True),
        ({"spec": {}}, True),
        ({"spec": {"features": {"disableCopiedCSVs": False}}}, True),
        ({"spec": {"features": {"disableCopiedCSVs": True}}}, False),
    ],
)
def test_copied_csvs_enabled(config: dict[str, Any] | None, enabled: bool) -> None:
    assert copied_csvs_enabled(config) is enabled


@pytest.mark.parametrize(
    ("enabled", "copies", "status", "reason", "message", "wake"),
    [
        (
            True,
            frozenset({"a", "b", "c"}),
            "False",
            "CopiedCSVsEnabled",
            "Copied CSVs are enabled and present across the cluster",
            [],
        ),
        (
            True,
            frozenset({"a"}),
            "False",
            "CopiedCSVsEnabled",
            "Copied CSVs are enabled and at least one copied CSVs is missing",
            [("operators", "etcd.v1")],
        ),
        (
            False,
            frozenset({"p"}),
            "True",
            "CopiedCSVsDisabled",
            "Copied CSVs are disabled and no unexpected copied CSVs were found for operators installed in AllNamespace mode",
            [],
        ),
        (
            False,
            frozenset({"a", "p"}),
            "False",
            "CopiedCSVsDisabled",
            "Copied CSVs are disabled and at least one unexpected copied CSV was found for an operator installed in AllNamespace mode",
            [("operators", "etcd.v1")],
        ),
    ],
)
def test_olm_config_condition(
    enabled: bool,
    copies: frozenset[str],
    status: str,
    reason: str,
    message: str,
    wake: list[tuple[str, str]],
) -> None:
    snap = OlmConfigSnapshot(
        enabled=enabled,
        active_namespaces=4,  # operators, a, b, c
        protected_namespaces=frozenset({"p"}),
        global_csvs={("operators", "etcd.v1"): copies},
        now=NOW,
    )
    plan = plan_olm_config({"metadata": {"name": "cluster"}}, snap)
    assert plan.wake_csvs == wake
    assert plan.status is not None
    [condition] = plan.status["conditions"]
    assert condition == {
        "type": "DisabledCopiedCSVs",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": "2026-01-02T03:04:05Z",
    }
    # written once: the same snapshot over the written status changes nothing
    again = plan_olm_config({"status": plan.status}, snap)
    assert again.status is None
