"""The provided-API check between OperatorGroups, wired into the CSV phase machine: a conflict
fails the CSV (InterOperatorGroupOwnerConflict) and removes its Deployments; AddAPIs writes the
group's olm.providedAPIs first; a conflict that went away starts the CSV over."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from olm.controllers.store import Store
from olm.controllers.wake.scope import conflict_keys, scoped_install_keys
from olm.csv.phase import GroupApiCheck, decide
from olm.scope.conflicts import decide_provided_apis, recovery
from tests.unit.csv.world import csv, world

OWNED = {"name": "things.x.io", "version": "v1", "kind": "Thing"}


def with_api(obj: dict[str, Any], **status: str) -> dict[str, Any]:
    obj = {**obj, "spec": {**obj["spec"], "customresourcedefinitions": {"owned": [OWNED]}}}
    if status:
        obj["status"] = status
    return obj


def og(name: str, namespace: str, targets: list[str], provided: str = "") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "annotations": {"olm.providedAPIs": provided} if provided else {},
        },
        "status": {"namespaces": targets, "lastUpdated": "2026-01-01T00:00:00Z"},
    }


def check(subject: dict[str, Any], group: dict[str, Any], others: list[dict[str, Any]]):  # type: ignore[no-untyped-def]
    d = decide_provided_apis(subject, group, [group, *others])
    return GroupApiCheck(
        d.failure, d.remove_deployments, d.provided_apis, d.stop, recovery(subject)
    )


def test_a_conflict_with_another_group_fails_the_csv_and_removes_its_deployments() -> None:
    subject = with_api(csv())
    mine = og("og", "ns", ["ns"])
    global_group = og("global", "operators", [""], "Thing.v1.x.io")
    base = world(
        subject,
        deployments={
            "op": {
                "metadata": {"name": "op", "labels": {"olm.owner": subject["metadata"]["name"]}}
            },
            "theirs": {"metadata": {"name": "theirs", "labels": {"olm.owner": "other"}}},
        },
    )
    plan = decide(replace(base, api_check=check(subject, mine, [global_group])))
    assert plan.status is not None
    assert (plan.status["phase"], plan.status["reason"]) == (
        "Failed",
        "InterOperatorGroupOwnerConflict",
    )
    assert plan.delete_deployments == ["op"]


def test_a_csv_adds_its_apis_to_its_group_first() -> None:
    subject = with_api(csv())
    plan = decide(replace(world(subject), api_check=check(subject, og("og", "ns", ["ns"]), [])))
    assert plan.group_provided_apis == "Thing.v1.x.io"
    assert plan.status is None


def test_a_conflict_that_went_away_starts_the_csv_over() -> None:
    subject = with_api(csv(), phase="Failed", reason="InterOperatorGroupOwnerConflict")
    mine = og("og", "ns", ["ns"], "Thing.v1.x.io")
    plan = decide(replace(world(subject), api_check=check(subject, mine, [])))
    assert plan.status is not None
    assert (plan.status["phase"], plan.status["reason"]) == ("Pending", "RequirementsUnknown")


def test_what_group_and_rbac_changes_wake() -> None:
    store = Store()
    failed = with_api(csv("w.v1"), phase="Failed", reason="InterOperatorGroupOwnerConflict")
    failed["metadata"]["namespace"] = "b"
    store.upsert("csv", failed)
    plan = {
        "metadata": {"name": "install-x", "namespace": "a"},
        "status": {"phase": "Installing", "attenuatedServiceAccountRef": {"name": "sa"}},
    }
    store.upsert("installplan", plan)
    group = {**og("og", "a", ["a"], "Thing.v1.x.io"), "spec": {"serviceAccountName": "sa"}}
    store.upsert("operatorgroup", group)

    # A group whose olm.providedAPIs changes wakes the CSVs failed by a conflict; a status-only
    # change of something else does not.
    pruned = og("og", "a", ["a"])
    assert conflict_keys("operatorgroup", pruned, store, group) == [("csv", "b", "w.v1")]
    assert conflict_keys("operatorgroup", group, store, group) == []
    assert conflict_keys("operatorgroup", group, store, group, deleted=True) == [
        ("csv", "b", "w.v1")
    ]
    # The ServiceAccount a group names wakes the group; RBAC in the plan's namespace wakes
    # the plan that acts as a ServiceAccount; a ClusterRole edit does not.
    sa = {"metadata": {"name": "sa", "namespace": "a"}}
    assert scoped_install_keys("serviceaccount", sa, store) == [("operatorgroup", "a", "og")]
    binding = {"metadata": {"name": "rb", "namespace": "a"}}
    assert scoped_install_keys("rolebinding", binding, store) == [("installplan", "a", "install-x")]
    assert scoped_install_keys("rolebinding", {"metadata": {"namespace": "z"}}, store) == []
    assert scoped_install_keys("clusterrole", {"metadata": {"name": "r"}}, store) == []
