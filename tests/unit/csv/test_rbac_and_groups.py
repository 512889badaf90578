"""RBAC rule evaluation and OperatorGroup target math (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.rbac import RbacSnapshot, granted_rules, rule_satisfied
from olm.groups.targets import install_mode_problem, provided_apis, target_namespaces


def binding(
    kind: str, role: str, subjects: list[dict[str, Any]], namespace: str | None = "ns"
) -> dict[str, Any]:
    return {
        "metadata": {"name": f"b-{role}", "namespace": namespace},
        "roleRef": {"kind": kind, "name": role},
        "subjects": subjects,
    }


SNAPSHOT = RbacSnapshot(
    roles={
        "r": {
            "rules": [
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]}
            ]
        }
    },
    role_bindings=[binding("Role", "r", [{"kind": "ServiceAccount", "name": "sa"}])],
    cluster_roles={
        "c": {"rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["*"]}]},
        "g": {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]},
    },
    cluster_role_bindings=[
        binding(
            "ClusterRole", "c", [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}], None
        ),
        binding("ClusterRole", "g", [{"kind": "Group", "name": "system:serviceaccounts"}], None),
    ],
)


@pytest.mark.parametrize(
    ("rule", "cluster", "held"),
    [
        ({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}, False, True),
        (
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "delete"]},
            False,
            False,
        ),
        ({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}, True, False),
        ({"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}, True, True),
        (
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"]},
            False,
            False,
        ),  # group bindings don't count
    ],
)
def test_rules_are_checked_against_bound_roles(
    rule: dict[str, Any], cluster: bool, held: bool
) -> None:
    assert rule_satisfied(rule, granted_rules(SNAPSHOT, "ns", "sa", cluster)) is held


def test_resource_names_and_subresources() -> None:
    granted = [
        {
            "apiGroups": ["apps"],
            "resources": ["deployments/finalizers"],
            "resourceNames": ["op"],
            "verbs": ["update"],
        }
    ]
    assert rule_satisfied(
        {
            "apiGroups": ["apps"],
            "resources": ["deployments/finalizers"],
            "resourceNames": ["op"],
            "verbs": ["update"],
        },
        granted,
    )
    assert not rule_satisfied(
        {"apiGroups": ["apps"], "resources": ["deployments/finalizers"], "verbs": ["update"]},
        granted,
    )


def test_targets() -> None:
    namespaces = {"a": {"team": "x"}, "b": {"team": "y"}, "c": {}}
    assert target_namespaces({"spec": {"targetNamespaces": ["b", "a"]}}, namespaces) == ["a", "b"]
    assert target_namespaces({"spec": {}}, namespaces) == [""]
    assert target_namespaces(
        {"spec": {"selector": {"matchLabels": {"team": "x"}}}}, namespaces
    ) == ["a"]
    expression = {"matchExpressions": [{"key": "team", "operator": "Exists"}]}
    assert target_namespaces({"spec": {"selector": expression}}, namespaces) == ["a", "b"]


def modes(**supported: bool) -> dict[str, Any]:
    return {
        "metadata": {"namespace": "own"},
        "spec": {"installModes": [{"type": k, "supported": v} for k, v in supported.items()]},
    }


@pytest.mark.parametrize(
    ("csv", "targets", "problem"),
    [
        (modes(OwnNamespace=True), ["own"], None),
        (modes(OwnNamespace=True), [""], "AllNamespaces InstallModeType not supported"),
        (modes(SingleNamespace=True), ["other"], None),
        (modes(OwnNamespace=True), ["other"], "SingleNamespace InstallModeType not supported"),
        (modes(MultiNamespace=True), ["a", "b"], None),
        (modes(MultiNamespace=True), ["own", "b"], "OwnNamespace InstallModeType not supported"),
        (modes(AllNamespaces=True), [""], None),
        (modes(OwnNamespace=True), [], "no targetNamespaces"),
    ],
)
def test_install_modes(csv: dict[str, Any], targets: list[str], problem: str | None) -> None:
    found = install_mode_problem(csv, targets)
    assert (found is None) if problem is None else (found is not None and problem in found[1])


def test_provided_apis_annotation() -> None:
    csv = {
        "spec": {
            "customresourcedefinitions": {
                "owned": [
                    {
                        "name": "memcacheds.cache.example.com",
                        "version": "v1alpha1",
                        "kind": "Memcached",
                    },
                    {"name": "b.x.io", "version": "v1", "kind": "B"},
                ]
            }
        }
    }
    assert provided_apis([csv]) == "B.v1.x.io,Memcached.v1alpha1.cache.example.com"
