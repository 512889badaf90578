"""The CSV's namespaced permissions across its OperatorGroup's scope: lifted to cluster RBAC for
AllNamespaces, copied into target namespaces otherwise, cleaned up when the scope shrinks."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from olm.csv.rbac import RbacSnapshot
from olm.scope.rbac import (
    ObjectRef,
    ScopeRbacSnapshot,
    existing_scope_objects,
    lift_role,
    lift_role_binding,
    permissions_met,
    plan_scope_rbac,
    tenant_role,
    without_own,
)

OWNER = {
    "olm.owner": "etcd.v1",
    "olm.owner.namespace": "operators",
    "olm.owner.kind": "ClusterServiceVersion",
}
RULES = [{"apiGroups": ["etcd.database.coreos.com"], "resources": ["etcdclusters"], "verbs": ["*"]}]
CSV_REF = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "name": "etcd.v1",
    "uid": "csv-uid",
    "controller": False,
    "blockOwnerDeletion": False,
}
CSV = {
    "metadata": {"name": "etcd.v1", "namespace": "operators", "uid": "csv-uid"},
    "spec": {
        "install": {
            "strategy": "deployment",
            "spec": {
                "permissions": [{"serviceAccountName": "etcd", "rules": RULES}],
                "clusterPermissions": [
                    {
                        "serviceAccountName": "etcd",
                        "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
                    }
                ],
            },
        }
    },
}


def role(
    name: str = "etcd.v1-etcd-abc", *, refs: bool = True, labels: dict[str, str] | None = None
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "operators",
        "labels": {**OWNER, "olm.managed": "true", "olm.permissions.hash": "h"}
        if labels is None
        else labels,
    }
    if refs:
        meta["ownerReferences"] = [CSV_REF]
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": meta,
        "rules": RULES,
    }


def binding(name: str = "etcd.v1-etcd-abc") -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {
            "name": name,
            "namespace": "operators",
            "labels": {**OWNER, "olm.managed": "true"},
            "ownerReferences": [CSV_REF],
        },
        "subjects": [{"kind": "ServiceAccount", "name": "etcd", "namespace": "operators"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
    }


def snapshot(**changes: Any) -> ScopeRbacSnapshot:
    base = ScopeRbacSnapshot(
        csv=CSV,
        targets=("",),
        roles=(role(),),
        role_bindings=(binding(),),
        permissions_met={},
    )
    return replace(base, **changes)


def kinds(plan: Any) -> list[tuple[str, str, str]]:
    return [
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in plan.apply
    ]


def test_lifted_role_and_binding_are_olms() -> None:
    assert lift_role(role()) == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {
            "name": "etcd.v1-etcd-abc",
            "labels": {**OWNER, "olm.managed": "true", "olm.permissions.hash": "h"},
        },
        "rules": [
            *RULES,
            {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]},
        ],
    }
    assert lift_role_binding(binding()) == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "etcd.v1-etcd-abc", "labels": {**OWNER, "olm.managed": "true"}},
        "subjects": [{"kind": "ServiceAccount", "name": "etcd", "namespace": "operators"}],
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": "etcd.v1-etcd-abc",
        },
    }


def test_tenant_role_is_owned_by_the_copy() -> None:
    copied = tenant_role(role(), "etcd.v1", "a", "operators", "copy-uid")
    assert copied["metadata"] == {
        "name": "etcd.v1-etcd-abc",
        "namespace": "a",
        "labels": {
            "olm.owner": "etcd.v1",
            "olm.owner.namespace": "a",
            "olm.owner.kind": "ClusterServiceVersion",
            "olm.managed": "true",
            "olm.permissions.hash": "h",
            "olm.copiedFrom": "operators",
        },
        "ownerReferences": [{**CSV_REF, "uid": "copy-uid"}],
    }
    assert copied["rules"] == RULES


@pytest.mark.parametrize(
    ("changes", "applied", "problem"),
    [
        # AllNamespaces, not yet held cluster-wide: lift
        (
            {},
            [
                ("ClusterRole", "", "etcd.v1-etcd-abc"),
                ("ClusterRoleBinding", "", "etcd.v1-etcd-abc"),
            ],
            None,
        ),
        # already held cluster-wide (e.g. the admin bound cluster-admin): nothing
        ({"permissions_met": {"": True}}, [], None),
        # a hand-applied CSV has no owned Roles: explained, nothing lifted
        ({"roles": (), "role_bindings": ()}, [], "holds no Role owned by it"),
        ({"role_bindings": ()}, [("ClusterRole", "", "etcd.v1-etcd-abc")], "holds no RoleBinding"),
        # Roles carrying someone else's owner labels are not lifted
        (
            {"roles": (role(labels={"olm.owner": "other"}),), "role_bindings": ()},
            [],
            "holds no Role",
        ),
        # status.namespaces not computed yet: wait
        ({"targets": None}, [], None),
        # own namespace only: nothing extra
        ({"targets": ("operators",)}, [], None),
    ],
)
def test_all_namespaces_and_own_namespace(
    changes: dict[str, Any], applied: list[tuple[str, str, str]], problem: str | None
) -> None:
    plan = plan_scope_rbac(snapshot(**changes))
    assert kinds(plan) == applied
    if problem is None:
        assert plan.problem is None
    else:
        assert plan.problem is not None and problem in plan.problem


def test_multi_namespace_copies_roles_into_each_target_with_a_copy() -> None:
    plan = plan_scope_rbac(
        snapshot(targets=("a", "b", "operators"), copies={"a": "uid-a"}, permissions_met={})
    )
    assert kinds(plan) == [
        ("Role", "a", "etcd.v1-etcd-abc"),
        ("RoleBinding", "a", "etcd.v1-etcd-abc"),
    ]
    assert plan.waiting_for_copies == ["b"]
    assert plan.apply[1]["metadata"]["ownerReferences"][0]["uid"] == "uid-a"
    assert plan.apply[1]["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "etcd.v1-etcd-abc",
    }


def test_targets_where_permissions_are_held_get_nothing() -> None:
    plan = plan_scope_rbac(
        snapshot(
            targets=("a", "b"), copies={"a": "uid-a", "b": "uid-b"}, permissions_met={"a": True}
        )
    )
    assert {ns for _, ns, _ in kinds(plan)} == {"b"}


def test_existing_role_bindings_are_left_alone() -> None:
    plan = plan_scope_rbac(
        snapshot(
            targets=("a",),
            copies={"a": "uid-a"},
            existing=(
                ObjectRef("RoleBinding", "a", "etcd.v1-etcd-abc"),
                ObjectRef("Role", "a", "etcd.v1-etcd-abc"),
            ),
        )
    )
    assert kinds(plan) == [("Role", "a", "etcd.v1-etcd-abc")]  # rules kept in step
    assert plan.delete == []


def test_roles_not_ownerreferenced_by_the_csv_are_not_copied() -> None:
    plan = plan_scope_rbac(
        snapshot(targets=("a",), copies={"a": "uid-a"}, roles=(role(refs=False),))
    )
    assert kinds(plan) == []
    assert plan.problem is not None and "namespace a" in plan.problem


TENANT_C = ObjectRef("Role", "c", "etcd.v1-etcd-abc")
TENANT_A = ObjectRef("RoleBinding", "a", "etcd.v1-etcd-abc")
LIFTED = ObjectRef("ClusterRole", "", "etcd.v1-etcd-abc")
LIFTED_BINDING = ObjectRef("ClusterRoleBinding", "", "etcd.v1-etcd-abc")
CLUSTER_PERMISSIONS = ObjectRef("ClusterRole", "", "etcd.v1-7f3a")  # from clusterPermissions


@pytest.mark.parametrize(
    ("targets", "deleted"),
    [
        # the group went from AllNamespaces to [a]: lifted objects go, a's copies stay, c's go
        (("a",), [LIFTED, LIFTED_BINDING, TENANT_C]),
        # the group became AllNamespaces: every copied Role/RoleBinding goes
        (("",), [TENANT_A, TENANT_C]),
        # own namespace only: all of it goes (clusterPermissions roles are never touched)
        (("operators",), [LIFTED, LIFTED_BINDING, TENANT_A, TENANT_C]),
    ],
)
def test_what_goes_when_the_scope_changes(
    targets: tuple[str, ...], deleted: list[ObjectRef]
) -> None:
    plan = plan_scope_rbac(
        snapshot(
            targets=targets,
            copies={"a": "uid-a"},
            permissions_met={"": True, "a": True},
            existing=(TENANT_C, TENANT_A, LIFTED, LIFTED_BINDING, CLUSTER_PERMISSIONS),
        )
    )
    assert sorted(plan.delete) == sorted(deleted)


def crb(name: str, role_name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "roleRef": {"kind": "ClusterRole", "name": role_name},
        "subjects": [{"kind": "ServiceAccount", "name": "etcd", "namespace": "operators"}],
    }


NODES = {
    "metadata": {"name": "nodes", "labels": OWNER},
    "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}],
}


def test_permissions_met_cluster_wide_ignores_own_lifted_objects() -> None:
    lifted = lift_role(role())
    rbac = RbacSnapshot(
        roles={},
        role_bindings=[],
        cluster_roles={"nodes": NODES, lifted["metadata"]["name"]: lifted},
        cluster_role_bindings=[
            crb("nodes", "nodes", OWNER),
            crb("etcd.v1-etcd-abc", "etcd.v1-etcd-abc", OWNER),
        ],
    )
    assert permissions_met(CSV, rbac, "")
    mine = without_own(rbac, CSV, {"etcd.v1-etcd-abc"}, {"etcd.v1-etcd-abc"})
    assert not permissions_met(CSV, mine, "")  # so the lifted objects stay desired
    admin = {
        "metadata": {"name": "admin"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}],
    }
    granted = RbacSnapshot({}, [], {"admin": admin}, [crb("admin", "admin")])
    assert permissions_met(CSV, granted, "")


def test_permissions_met_in_a_namespace() -> None:
    target_role = {"metadata": {"name": "r", "namespace": "a"}, "rules": RULES}
    rb = {
        "metadata": {"name": "r", "namespace": "a"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "etcd", "namespace": "operators"}],
    }
    rbac = RbacSnapshot({"r": target_role}, [rb], {"nodes": NODES}, [crb("nodes", "nodes")])
    assert permissions_met(CSV, rbac, "a")
    assert not permissions_met(CSV, rbac, "")  # namespaced grants never count cluster-wide
    copied = tenant_role(role(), "etcd.v1", "a", "operators", "uid-a")
    copied_binding = {**rb, "metadata": {**rb["metadata"], "labels": copied["metadata"]["labels"]}}
    ours = RbacSnapshot({"r": copied}, [copied_binding], {"nodes": NODES}, [crb("nodes", "nodes")])
    assert permissions_met(CSV, ours, "a")
    assert not permissions_met(CSV, without_own(ours, CSV, set(), set()), "a")


def test_existing_scope_objects_are_picked_by_labels() -> None:
    lifted = lift_role(role())
    copied = tenant_role(role(), "etcd.v1", "a", "operators", "uid-a")
    unrelated = {
        "metadata": {"name": "x", "namespace": "a", "labels": {"olm.copiedFrom": "elsewhere"}}
    }
    found = existing_scope_objects(
        CSV, [lifted, {"metadata": {"name": "other"}}], [], [copied, unrelated], []
    )
    assert found == [LIFTED, ObjectRef("Role", "a", "etcd.v1-etcd-abc")]
