"""The CSV's namespaced permissions across its OperatorGroup's scope (OLM v0 `operatorgroup.go`
ensureRBACInTargetNamespace / ensureSingletonRBAC / ensureTenantRBAC / ensureCSVsInNamespaces).

The InstallPlan creates the operator's `permissions` as Roles and RoleBindings in the operator's
namespace, owner-labelled (`olm.owner`, `olm.owner.namespace`, `olm.owner.kind`) and ownerRef'd
to the CSV. OLM then widens them to the group's scope:

- AllNamespaces group (`status.namespaces: [""]`), unless the ServiceAccounts already hold
  every permission and clusterPermission cluster-wide: each owned Role is *lifted* to a
  ClusterRole of the same name and labels, with one extra rule (get/list/watch `namespaces`);
  each owned RoleBinding to a ClusterRoleBinding of the same name, labels and subjects whose
  roleRef is that ClusterRole. Cluster-scoped, so no ownerReferences: the owner labels let the
  CSV's finalizer delete them with the CSV.
- Single/MultiNamespace group: in every target namespace other than the operator's where the
  permissions are not already held, each owned Role (labels and ownerReference both naming the
  CSV) is copied with the same name, rules, labels and annotations, plus owner labels pointing at
  the *copied* CSV there, `olm.copiedFrom=<operator ns>` and `olm.managed=true`, and one
  non-blocking ownerReference to that copied CSV (so it goes when the copy goes); RoleBindings
  likewise, except that an existing one is left alone (its roleRef cannot change).
- Own-namespace-only groups get nothing extra.

olm-py also plans what OLM leaves behind when the scope shrinks: copied Roles/RoleBindings in
namespaces that are no longer targets, and lifted ClusterRoles/ClusterRoleBindings once the group
is no longer AllNamespaces (docs/differences.md should say so; OLM creates these once and never
revisits them).

Invariants: pure; idempotent (the same snapshot gives the same plan, and what it applies is
stable); "already held" is judged without the objects this module produces (`without_own`), so
applying them never flips the decision.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from olm.api import body
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.api.scope import NAMESPACES_VIEW_RULE
from olm.api.views import CsvView, owner_reference
from olm.csv.rbac import RbacSnapshot, granted_rules, rule_satisfied
from olm.scope.namespaces import ALL_NAMESPACES, is_all, is_own_namespace_only

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
CSV_KIND = Kind.CLUSTER_SERVICE_VERSION.value


class ObjectRef(NamedTuple):
    kind: str  # Role, RoleBinding, ClusterRole, ClusterRoleBinding
    namespace: str  # "" for cluster-scoped objects
    name: str


def owner_labels(name: str, namespace: str) -> dict[str, str]:
    """OLM's `ownerutil.OwnerLabel` for a CSV (the three owner keys, no olm.managed)."""
    return {
        Label.OWNER.value: name,
        Label.OWNER_NAMESPACE.value: namespace,
        Label.OWNER_KIND.value: CSV_KIND,
    }


def labelled_by(obj: Mapping[str, Any], name: str, namespace: str) -> bool:
    """Matches OLM's CSVOwnerSelector (the owner labels name this CSV)."""
    labels = body.labels(obj)
    return all(labels.get(k) == v for k, v in owner_labels(name, namespace).items())


def referenced_by(obj: Mapping[str, Any], uid: str) -> bool:
    """OLM's `ownerutil.IsOwnedBy`: an ownerReference carries this uid."""
    return bool(uid) and any(
        ref.get("uid") == uid for ref in body.meta(obj).get("ownerReferences") or []
    )


def lift_role(role: Mapping[str, Any]) -> dict[str, Any]:
    """The ClusterRole OLM makes of an owned Role for an AllNamespaces group."""
    rules = [*_copy.deepcopy(list(role.get("rules") or [])), _copy.deepcopy(NAMESPACES_VIEW_RULE)]
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {"name": body.meta(role).get("name"), "labels": dict(body.labels(role))},
        "rules": rules,
    }


def lift_role_binding(binding: Mapping[str, Any]) -> dict[str, Any]:
    """The ClusterRoleBinding OLM makes of an owned RoleBinding for an AllNamespaces group."""
    role_ref = binding.get("roleRef") or {}
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRoleBinding",
        "metadata": {"name": body.meta(binding).get("name"), "labels": dict(body.labels(binding))},
        "subjects": _copy.deepcopy(list(binding.get("subjects") or [])),
        "roleRef": {
            "apiGroup": role_ref.get("apiGroup", "rbac.authorization.k8s.io"),
            "kind": "ClusterRole",
            "name": role_ref.get("name"),
        },
    }


def _tenant_meta(
    obj: Mapping[str, Any], name: str, namespace: str, operator_ns: str, copy_uid: str
) -> dict[str, Any]:
    labels = {
        **body.labels(obj),
        **owner_labels(name, namespace),
        Label.COPIED_FROM.value: operator_ns,
        Label.MANAGED.value: "true",
    }
    copied_csv = {"metadata": {"name": name, "uid": copy_uid}}
    meta: dict[str, Any] = {
        "name": body.meta(obj).get("name"),
        "namespace": namespace,
        "labels": labels,
        "ownerReferences": [owner_reference(copied_csv, kind=KINDS[Kind.CLUSTER_SERVICE_VERSION])],
    }
    if body.meta(obj).get("annotations"):
        meta["annotations"] = dict(body.meta(obj)["annotations"])
    return meta


def tenant_role(
    role: Mapping[str, Any], csv_name: str, namespace: str, operator_ns: str, copy_uid: str
) -> dict[str, Any]:
    """An owned Role copied into target namespace `namespace`, owned by the copied CSV there."""
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "Role",
        "metadata": _tenant_meta(role, csv_name, namespace, operator_ns, copy_uid),
        "rules": _copy.deepcopy(list(role.get("rules") or [])),
    }


def tenant_role_binding(
    binding: Mapping[str, Any], csv_name: str, namespace: str, operator_ns: str, copy_uid: str
) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "RoleBinding",
        "metadata": _tenant_meta(binding, csv_name, namespace, operator_ns, copy_uid),
        "subjects": _copy.deepcopy(list(binding.get("subjects") or [])),
        "roleRef": dict(binding.get("roleRef") or {}),
    }


# --- "already held": OLM's permissionStatus, over olm.csv.rbac ---------------------------------


def without_own(
    rbac: RbacSnapshot,
    csv: Mapping[str, Any],
    owned_role_names: Collection[str],
    owned_binding_names: Collection[str],
) -> RbacSnapshot:
    """`rbac` minus what this module makes for `csv`: lifted ClusterRoles/Bindings (owner-labelled
    for the CSV and named like an owned Role/RoleBinding) and copied Roles/RoleBindings
    (`olm.copiedFrom=<csv ns>` with the CSV's name as owner)."""
    view = CsvView.of(csv)

    def lifted(obj: Mapping[str, Any], names: Collection[str]) -> bool:
        return body.meta(obj).get("name") in names and labelled_by(obj, view.name, view.namespace)

    def tenant(obj: Mapping[str, Any]) -> bool:
        labels = body.labels(obj)
        return (
            labels.get(Label.COPIED_FROM) == view.namespace
            and labels.get(Label.OWNER) == view.name
            and labels.get(Label.OWNER_KIND) == CSV_KIND
        )

    return RbacSnapshot(
        roles={k: v for k, v in rbac.roles.items() if not tenant(v)},
        role_bindings=[b for b in rbac.role_bindings if not tenant(b)],
        cluster_roles={
            k: v for k, v in rbac.cluster_roles.items() if not lifted(v, owned_role_names)
        },
        cluster_role_bindings=[
            b for b in rbac.cluster_role_bindings if not lifted(b, owned_binding_names)
        ],
    )


def permissions_met(csv: Mapping[str, Any], rbac: RbacSnapshot, scope: str) -> bool:
    """Whether the CSV's ServiceAccounts already hold its permissions in `scope`: a target
    namespace (namespaced permissions there, cluster permissions cluster-wide; `rbac` holds that
    namespace's Roles/RoleBindings), or "" for every namespace (all permissions cluster-wide)."""
    view = CsvView.of(csv)
    for permission in view.permissions:
        cluster_wide = scope == ALL_NAMESPACES or permission.cluster_scoped
        granted = granted_rules(rbac, view.namespace, permission.service_account, cluster_wide)
        if not all(rule_satisfied(dict(rule), granted) for rule in permission.rules):
            return False
    return True


# --- the plan ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeRbacSnapshot:
    """Everything `plan_scope_rbac` looks at, for one original (non-copied) CSV."""

    csv: Mapping[str, Any]
    targets: tuple[str, ...] | None  # the group's status.namespaces (None: not computed yet)
    roles: tuple[Mapping[str, Any], ...]  # Roles in the operator namespace
    role_bindings: tuple[Mapping[str, Any], ...]  # RoleBindings in the operator namespace
    # Scope -> already held without this module's objects ("" = cluster-wide; see permissions_met).
    permissions_met: Mapping[str, bool]
    copies: Mapping[str, str] = field(default_factory=dict)  # namespace -> copied CSV's uid
    # What exists of this module's output for the CSV (to delete when the scope shrinks, and to
    # leave existing RoleBindings alone): lifted ClusterRoles/Bindings and copied Roles/Bindings.
    existing: Collection[ObjectRef] = ()


@dataclass
class ScopeRbacPlan:
    apply: list[dict[str, Any]] = field(default_factory=list)
    delete: list[ObjectRef] = field(default_factory=list)
    waiting_for_copies: list[str] = field(default_factory=list)  # target ns without a copy yet
    problem: str | None = None  # a message for the CSV's Events/status; None when all is well


def _no_owned_roles(view: CsvView, what: str, scope: str) -> str:
    return (
        f"ClusterServiceVersion {view.name} needs its spec.install.spec.permissions granted in "
        f"{scope}, but namespace {view.namespace} holds no {what} owned by it (labels olm.owner="
        f"{view.name}, olm.owner.namespace={view.namespace}, olm.owner.kind={CSV_KIND}) to "
        "widen: install it through a Subscription, whose InstallPlan creates them, or grant "
        "those permissions to its ServiceAccounts yourself"
    )


def plan_scope_rbac(snapshot: ScopeRbacSnapshot) -> ScopeRbacPlan:
    plan = ScopeRbacPlan()
    if snapshot.targets is None:
        return plan
    view = CsvView.of(snapshot.csv)
    name, operator_ns = view.name, view.namespace
    roles = sorted(
        (r for r in snapshot.roles if labelled_by(r, name, operator_ns)),
        key=lambda r: str(body.meta(r).get("name")),
    )
    bindings = sorted(
        (b for b in snapshot.role_bindings if labelled_by(b, name, operator_ns)),
        key=lambda b: str(body.meta(b).get("name")),
    )
    role_names = {str(body.meta(r).get("name")) for r in roles}
    binding_names = {str(body.meta(b).get("name")) for b in bindings}
    targets = frozenset(snapshot.targets)
    everywhere = is_all(targets)
    tenant_namespaces = (
        set()
        if everywhere or is_own_namespace_only(snapshot.targets, operator_ns)
        else set(targets) - {operator_ns}
    )

    if everywhere and not snapshot.permissions_met.get(ALL_NAMESPACES, False):
        scope = "every namespace (its OperatorGroup targets all namespaces)"
        if not roles:
            plan.problem = _no_owned_roles(view, "Role", scope)
        elif not bindings:
            plan.problem = _no_owned_roles(view, "RoleBinding", scope)
        plan.apply.extend(lift_role(r) for r in roles)
        plan.apply.extend(lift_role_binding(b) for b in bindings)

    existing = set(snapshot.existing)
    trusted_roles = [r for r in roles if referenced_by(r, view.uid)]
    trusted_bindings = [b for b in bindings if referenced_by(b, view.uid)]
    for namespace in sorted(tenant_namespaces):
        if snapshot.permissions_met.get(namespace, False):
            continue
        copy_uid = snapshot.copies.get(namespace)
        if not copy_uid:
            plan.waiting_for_copies.append(namespace)
            continue
        if not trusted_roles:
            plan.problem = plan.problem or _no_owned_roles(view, "Role", f"namespace {namespace}")
            continue
        plan.apply.extend(
            tenant_role(r, name, namespace, operator_ns, copy_uid) for r in trusted_roles
        )
        plan.apply.extend(
            tenant_role_binding(b, name, namespace, operator_ns, copy_uid)
            for b in trusted_bindings
            if ObjectRef("RoleBinding", namespace, str(body.meta(b).get("name"))) not in existing
        )

    for ref in sorted(existing):
        if ref.kind in ("Role", "RoleBinding"):
            if ref.namespace != operator_ns and ref.namespace not in tenant_namespaces:
                plan.delete.append(ref)
        elif not everywhere and (
            (ref.kind == "ClusterRole" and ref.name in role_names)
            or (ref.kind == "ClusterRoleBinding" and ref.name in binding_names)
        ):
            plan.delete.append(ref)
    return plan


def existing_scope_objects(
    csv: Mapping[str, Any],
    cluster_roles: Collection[Mapping[str, Any]],
    cluster_role_bindings: Collection[Mapping[str, Any]],
    roles: Collection[Mapping[str, Any]],
    role_bindings: Collection[Mapping[str, Any]],
) -> list[ObjectRef]:
    """The `existing` input of `plan_scope_rbac`, picked from cached RBAC objects: cluster
    objects owner-labelled for the CSV, and Roles/RoleBindings copied from its namespace for it.
    (Which lifted objects may be deleted is still decided by name, in the plan.)"""
    view = CsvView.of(csv)
    found: list[ObjectRef] = []
    for kind, items in (
        ("ClusterRole", cluster_roles),
        ("ClusterRoleBinding", cluster_role_bindings),
    ):
        found.extend(
            ObjectRef(kind, "", str(body.meta(o).get("name")))
            for o in items
            if labelled_by(o, view.name, view.namespace)
        )
    for kind, items in (("Role", roles), ("RoleBinding", role_bindings)):
        for obj in items:
            labels = body.labels(obj)
            if (
                labels.get(Label.COPIED_FROM) == view.namespace
                and labels.get(Label.OWNER) == view.name
                and labels.get(Label.OWNER_KIND) == CSV_KIND
            ):
                found.append(
                    ObjectRef(
                        kind, str(body.meta(obj).get("namespace")), str(body.meta(obj).get("name"))
                    )
                )
    return sorted(found)
