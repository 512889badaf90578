"""TooManyOperatorGroups and provided-API conflicts between OperatorGroups, as OLM v0 decides."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.csv import CsvPhase, CsvReason
from olm.api.views import Gvk
from olm.scope.conflicts import (
    ApiReconciliation,
    GroupSurface,
    decide_provided_apis,
    membership_problem,
    providers_of,
    pruned_provided_apis,
    reconcile_api_intersection,
    recovery,
)

ETCD = "EtcdCluster.v1beta2.etcd.database.coreos.com"
MEMCACHED = "Memcached.v1alpha1.cache.example.com"
ETCD_GVK = Gvk("etcd.database.coreos.com", "v1beta2", "EtcdCluster")
ETCD_OWNED = {
    "name": "etcdclusters.etcd.database.coreos.com",
    "version": "v1beta2",
    "kind": "EtcdCluster",
}


def og(
    namespace: str,
    targets: list[str] | None,
    provided: str | None = None,
    *,
    name: str = "og",
    static: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if provided is not None:
        meta["annotations"] = {"olm.providedAPIs": provided}
    status: dict[str, Any] = {"lastUpdated": "2026-01-01T00:00:00Z"}
    if targets:
        status["namespaces"] = targets
    return {"metadata": meta, "spec": {"staticProvidedAPIs": static}, "status": status}


def csv(
    namespace: str = "team-a",
    *,
    phase: str = "Succeeded",
    reason: str = "InstallSucceeded",
    owned: list[dict[str, str]] | None = None,
    copied: bool = False,
    name: str = "etcd.v1",
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if copied:
        meta["labels"] = {"olm.copiedFrom": "elsewhere"}
    return {
        "metadata": meta,
        "spec": {"customresourcedefinitions": {"owned": [ETCD_OWNED] if owned is None else owned}},
        "status": {"phase": phase, "reason": reason},
    }


@pytest.mark.parametrize(
    ("groups", "reason", "expected"),
    [
        (0, None, (CsvReason.NO_OPERATOR_GROUP, "csv in namespace with no operatorgroups")),
        (1, None, None),
        (
            2,
            "InstallSucceeded",
            (
                CsvReason.TOO_MANY_OPERATOR_GROUPS,
                "csv created in namespace with multiple operatorgroups, can't pick one automatically",
            ),
        ),
        (3, "TooManyOperatorGroups", None),  # OLM writes it once
    ],
)
def test_membership(
    groups: int, reason: str | None, expected: tuple[CsvReason, str] | None
) -> None:
    assert membership_problem(groups, reason) == expected


def test_surface_adds_own_namespace_unless_all() -> None:
    assert GroupSurface.of(og("team-a", ["x"])).targets == {"x", "team-a"}
    assert GroupSurface.of(og("operators", [""])).targets == {""}
    assert GroupSurface.of(og("team-a", None)).targets == frozenset()  # nothing computed/matched


GLOBAL_WITH_ETCD = og("operators", [""], ETCD, name="global-operators")


@pytest.mark.parametrize(
    ("mine", "others", "result"),
    [
        # nobody else provides it, not yet in my annotation: add
        (og("team-a", ["team-a"]), [], ApiReconciliation.ADD_APIS),
        (og("team-a", ["team-a"], ETCD), [], ApiReconciliation.NO_API_CONFLICT),
        # a global group already provides it: conflict (all namespaces meets everything)
        (og("team-a", ["team-a"]), [GLOBAL_WITH_ETCD], ApiReconciliation.API_CONFLICT),
        # ...unless it is already in my annotation: then I give it up
        (og("team-a", ["team-a"], ETCD), [GLOBAL_WITH_ETCD], ApiReconciliation.REMOVE_APIS),
        # disjoint targets do not meet
        (
            og("team-a", ["team-a"]),
            [og("team-b", ["team-b"], ETCD, name="b")],
            ApiReconciliation.ADD_APIS,
        ),
        # a group targeting my namespace meets mine
        (
            og("team-a", ["team-a"]),
            [og("team-b", ["team-a"], ETCD, name="b")],
            ApiReconciliation.API_CONFLICT,
        ),
        # other APIs do not conflict
        (
            og("team-a", ["team-a"]),
            [og("operators", [""], MEMCACHED, name="g")],
            ApiReconciliation.ADD_APIS,
        ),
        # a group is never compared with itself
        (
            og("team-a", ["team-a"], ETCD),
            [og("team-a", ["team-a"], ETCD)],
            ApiReconciliation.NO_API_CONFLICT,
        ),
    ],
)
def test_reconcile_api_intersection(
    mine: dict[str, Any], others: list[dict[str, Any]], result: ApiReconciliation
) -> None:
    surfaces = [GroupSurface.of(g) for g in others]
    assert (
        reconcile_api_intersection(frozenset({ETCD_GVK}), GroupSurface.of(mine), surfaces) == result
    )


def test_conflict_fails_the_csv_and_removes_its_deployments() -> None:
    group = og("team-a", ["team-a"])
    decision = decide_provided_apis(csv(), group, [group, GLOBAL_WITH_ETCD])
    assert decision.failure == (
        CsvPhase.FAILED,
        CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT,
        "intersecting operatorgroups provide the same apis",
    )
    assert decision.remove_deployments and decision.stop
    # already failed for it: nothing new
    again = decide_provided_apis(
        csv(phase="Failed", reason="InterOperatorGroupOwnerConflict"), group, [GLOBAL_WITH_ETCD]
    )
    assert (again.failure, again.stop) == (None, True)


def test_add_and_remove_write_the_annotation() -> None:
    group = og("team-a", ["team-a"], MEMCACHED)
    added = decide_provided_apis(csv(), group, [group])
    assert added.result == ApiReconciliation.ADD_APIS
    assert added.provided_apis == f"{ETCD},{MEMCACHED}"
    assert added.requeue and added.stop
    mine = og("team-a", ["team-a"], f"{ETCD},{MEMCACHED}")
    removed = decide_provided_apis(csv(), mine, [mine, GLOBAL_WITH_ETCD])
    assert removed.result == ApiReconciliation.REMOVE_APIS
    assert removed.provided_apis == MEMCACHED
    # the next pass sees the conflict
    after = og("team-a", ["team-a"], MEMCACHED)
    assert (
        decide_provided_apis(csv(), after, [after, GLOBAL_WITH_ETCD]).result
        == ApiReconciliation.API_CONFLICT
    )


def test_static_groups_refuse_changes() -> None:
    group = og("team-a", ["team-a"], MEMCACHED, static=True)
    decision = decide_provided_apis(csv(), group, [group])
    assert decision.failure == (
        CsvPhase.FAILED,
        CsvReason.CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS,
        "static provided api operatorgroup cannot be modified by these apis",
    )
    assert decision.provided_apis is None
    fits = og("team-a", ["team-a"], ETCD, static=True)
    assert decide_provided_apis(csv(), fits, [fits]).failure is None


def test_a_csv_providing_nothing_never_conflicts() -> None:
    group = og("team-a", ["team-a"])
    decision = decide_provided_apis(csv(owned=[]), group, [group, GLOBAL_WITH_ETCD])
    assert decision.result == ApiReconciliation.NO_API_CONFLICT
    assert decision.failure is None and not decision.stop


@pytest.mark.parametrize(
    ("phase", "reason", "expected"),
    [
        (
            "Failed",
            "InterOperatorGroupOwnerConflict",
            "OperatorGroup no longer intersecting with conflicting owner",
        ),
        (
            "Failed",
            "CannotModifyStaticOperatorGroupProvidedAPIs",
            "static OperatorGroup and intersecting groups now support providedAPIs",
        ),
        ("Failed", "ComponentUnhealthy", None),
        ("Succeeded", "InstallSucceeded", None),
    ],
)
def test_recovery(phase: str, reason: str, expected: str | None) -> None:
    result = recovery(csv(phase=phase, reason=reason))
    if expected is None:
        assert result is None
    else:
        assert result == (CsvPhase.PENDING, CsvReason.REQUIREMENTS_UNKNOWN, expected)


@pytest.mark.parametrize(
    ("annotation", "csvs", "static", "expected"),
    [
        # a member was deleted: its API goes
        (f"{ETCD},{MEMCACHED}", [csv()], False, ETCD),
        (f"{ETCD},{MEMCACHED}", [], False, ""),
        # in step: nothing to write
        (ETCD, [csv()], False, None),
        # never adds: that is the CSV's job (AddAPIs)
        ("", [csv()], False, None),
        # a member providing an API the annotation lacks is still Pending: wait
        (MEMCACHED, [csv(phase="Pending", reason="RequirementsUnknown")], False, None),
        # ...but a Succeeded one does not hold the prune back
        (MEMCACHED, [csv()], False, ""),
        # copies are not members
        (ETCD, [csv(copied=True)], False, ""),
        (f"{ETCD},{MEMCACHED}", [], True, None),
    ],
)
def test_pruned_provided_apis(
    annotation: str, csvs: list[dict[str, Any]], static: bool, expected: str | None
) -> None:
    assert (
        pruned_provided_apis(og("team-a", ["team-a"], annotation, static=static), csvs) == expected
    )


def test_providers_of() -> None:
    csvs = [
        csv(),
        csv("team-b", name="etcd.v2"),
        csv(copied=True, namespace="x"),
        csv(owned=[], name="other"),
    ]
    assert providers_of([ETCD_GVK], csvs) == [("team-a", "etcd.v1"), ("team-b", "etcd.v2")]
