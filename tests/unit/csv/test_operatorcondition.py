"""The OperatorCondition of a CSV and the Role/RoleBinding on it, shaped as OLM v0.38's
(operatorconditiongenerator_controller.go, operatorcondition_controller.go)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.operatorcondition import (
    condition_role,
    condition_role_binding,
    needs_apply,
    not_upgradeable,
    operator_condition,
    service_accounts,
    synced_conditions,
)

NS = "ns1"


def csv(install_spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "op.v1", "namespace": NS, "uid": "csv-uid"},
        "spec": {"install": {"strategy": "deployment", "spec": install_spec}},
    }


def perms(*names: str) -> list[dict[str, Any]]:
    return [{"serviceAccountName": n, "rules": []} for n in names]


@pytest.mark.parametrize(
    ("install_spec", "expected"),
    [
        ({"permissions": perms("a")}, ["a"]),
        # clusterPermissions first, then permissions; an account with both is listed twice
        ({"permissions": perms("a"), "clusterPermissions": perms("a")}, ["a", "a"]),
        ({"permissions": perms("b", "a"), "clusterPermissions": perms("c")}, ["c", "b", "a"]),
        ({"deployments": []}, ["default"]),
        ({"permissions": [{"serviceAccountName": ""}, "junk"]}, ["default"]),
        (None, ["default"]),
        ("not an object", ["default"]),
    ],
)
def test_service_accounts_are_listed_per_permission_entry(
    install_spec: Any, expected: list[str]
) -> None:
    assert service_accounts(csv(install_spec)) == expected


def test_the_operator_condition_has_no_labels_and_is_owned_by_the_csv() -> None:
    body = operator_condition(
        csv({"deployments": [{"name": "d1"}, {"name": ""}], "permissions": perms("sa")})
    )
    assert body == {
        "apiVersion": "operators.coreos.com/v2",
        "kind": "OperatorCondition",
        "metadata": {
            "name": "op.v1",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "ClusterServiceVersion",
                    "name": "op.v1",
                    "uid": "csv-uid",
                    "controller": True,
                    "blockOwnerDeletion": False,
                }
            ],
        },
        "spec": {"deployments": ["d1"], "serviceAccounts": ["sa"]},
    }


CONDITION = {
    "apiVersion": "operators.coreos.com/v2",
    "kind": "OperatorCondition",
    "metadata": {"name": "op.v1", "namespace": NS, "uid": "oc-uid"},
    "spec": {"deployments": ["d1"], "serviceAccounts": ["sa", "sa", "other"]},
}
OWNED_META = {
    "name": "op.v1",
    "namespace": NS,
    "labels": {"olm.managed": "true"},
    "ownerReferences": [
        {
            "apiVersion": "operators.coreos.com/v2",
            "kind": "OperatorCondition",
            "name": "op.v1",
            "uid": "oc-uid",
            "controller": True,
            "blockOwnerDeletion": False,
        }
    ],
}


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (
            condition_role,
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "Role",
                "metadata": OWNED_META,
                "rules": [
                    {
                        "verbs": ["get", "update", "patch"],
                        "apiGroups": ["operators.coreos.com"],
                        "resources": ["operatorconditions"],
                        "resourceNames": ["op.v1"],
                    }
                ],
            },
        ),
        (
            condition_role_binding,
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "RoleBinding",
                "metadata": OWNED_META,
                "subjects": [
                    {"kind": "ServiceAccount", "name": "sa"},
                    {"kind": "ServiceAccount", "name": "sa"},
                    {"kind": "ServiceAccount", "name": "other"},
                ],
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "Role",
                    "name": "op.v1",
                },
            },
        ),
    ],
)
def test_role_and_binding_on_the_condition(build: Any, expected: dict[str, Any]) -> None:
    assert build(CONDITION) == expected


DESIRED_OC = operator_condition(csv({"permissions": perms("sa")}))
ROLE = condition_role(CONDITION)


def with_meta(obj: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "uid": "u", "resourceVersion": "7", **meta}}


@pytest.mark.parametrize(
    ("desired", "existing", "expected"),
    [
        (DESIRED_OC, None, True),
        (DESIRED_OC, with_meta(DESIRED_OC), False),
        # users' conditions and status are theirs: not a reason to write
        (
            DESIRED_OC,
            with_meta({**DESIRED_OC, "spec": {**DESIRED_OC["spec"], "conditions": []}}),
            False,
        ),
        (
            DESIRED_OC,
            with_meta({**DESIRED_OC, "spec": {"deployments": ["old"], "serviceAccounts": ["sa"]}}),
            True,
        ),
        (DESIRED_OC, with_meta(DESIRED_OC, ownerReferences=[]), True),
        # an earlier olm-py labelled OperatorConditions olm.managed: removed once
        (DESIRED_OC, with_meta(DESIRED_OC, labels={"olm.managed": "true"}), True),
        (DESIRED_OC, with_meta(DESIRED_OC, labels={"team": "x"}), False),
        (ROLE, with_meta(ROLE), False),
        (ROLE, with_meta(ROLE, labels={}), True),
        (ROLE, with_meta({**ROLE, "rules": []}), True),
    ],
)
def test_needs_apply(
    desired: dict[str, Any], existing: dict[str, Any] | None, expected: bool
) -> None:
    assert needs_apply(desired, existing) is expected


def upgradeable(status: str, generation: int | None = None, when: str = "T1") -> dict[str, Any]:
    cond = {"type": "Upgradeable", "status": status, "reason": "r", "message": "m"}
    cond["lastTransitionTime"] = when
    if generation is not None:
        cond["observedGeneration"] = generation
    return cond


def condition_object(
    generation: int,
    spec: list[dict[str, Any]] | None = None,
    status: list[dict[str, Any]] | None = None,
    overrides: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "metadata": {"name": "c", "namespace": "ns", "generation": generation},
        "spec": {"conditions": spec or [], "overrides": overrides or []},
        "status": {"conditions": status or []},
    }


def test_reported_conditions_are_synced_to_status_at_the_current_generation() -> None:
    # The operator wrote the generation it had read, one behind the object's after its write.
    obj = condition_object(3, spec=[upgradeable("True", 2, "T2")], status=[upgradeable("False", 2)])
    assert synced_conditions(obj) == [upgradeable("True", 3, "T2")]
    assert not_upgradeable(obj) is None
    same = condition_object(3, spec=[upgradeable("True", 2, "T2")], status=[upgradeable("True", 2)])
    assert synced_conditions(same) == [upgradeable("True", 3, "T1")]  # status unchanged: no move
    synced = condition_object(3, spec=[upgradeable("True")], status=[upgradeable("True", 3)])
    assert synced_conditions(synced) is None


def test_a_status_condition_of_another_generation_blocks_until_overridden() -> None:
    stale = condition_object(2, status=[upgradeable("True", 3)])
    assert not_upgradeable(stale) is not None
    stale["spec"]["overrides"] = [upgradeable("True")]
    assert not_upgradeable(stale) is None


def test_a_reported_false_blocks() -> None:
    assert not_upgradeable(condition_object(1, spec=[upgradeable("False", 0)])) == "m"
