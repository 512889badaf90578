"""One original CSV's footprint across its OperatorGroup's scope, decided in one place: the
copies, the scope RBAC and the per-API ClusterRoles (composing `copies`, `rbac` and
`apiroles`), plus the small helpers the controller needs to write only what changed.

- `decide_scope(ScopeSnapshot)` -> `ScopePlan`: the copy plan, the RBAC to apply or delete,
  the per-API ClusterRoles (Succeeded CSVs only) and Warning Events to say.
- With `only_namespace` set, the decision is restricted to that one namespace (its copy, its
  copied Roles/RoleBindings): what a namespace event needs, in O(1) per CSV instead of
  O(namespaces).
- `changed(desired, live)` keeps the objects whose live version (from the cache) is not
  already in step, so a second pass over the same cache writes nothing.
- `copy_metadata(copy)` is what the cache keeps of a copied CSV (metadata only: its spec and
  status are never read, the hashes say whether it is in step).

Invariants: pure; the same snapshot gives the same plan; nothing here mutates its inputs.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.csv import CsvPhase
from olm.api.labels import Annotation
from olm.api.scope import CopyAnnotation
from olm.api.scopeevents import ScopeEventReason
from olm.csv.rbac import RbacSnapshot
from olm.install.deployments import is_subset
from olm.scope.apiroles import ApiRolesPlan, provided_api_cluster_roles
from olm.scope.copies import (
    STATUS_DIGEST_KEY,
    CopyMeta,
    CopyPlan,
    CopyPrototype,
    CopySnapshot,
    is_copied,
    plan_copies,
    status_digest,
)
from olm.scope.namespaces import (
    ALL_NAMESPACES,
    build_target_namespaces,
    is_all,
    is_own_namespace_only,
)
from olm.scope.rbac import (
    ObjectRef,
    ScopeRbacPlan,
    ScopeRbacSnapshot,
    labelled_by,
    permissions_met,
    plan_scope_rbac,
    without_own,
)

# Every field of a CSV's status (operator-framework/api ClusterServiceVersionStatus): a copy's
# status write names the ones the original lacks as null, so the copy mirrors it exactly.
CSV_STATUS_FIELDS = (
    "phase",
    "message",
    "reason",
    "lastUpdateTime",
    "lastTransitionTime",
    "conditions",
    "requirementStatus",
    "certsLastUpdated",
    "certsRotateAt",
    "cleanup",
)
# What the cache keeps of a copy's annotations.
COPY_CACHED_ANNOTATIONS = (
    Annotation.OPERATOR_NAMESPACE,
    Annotation.OPERATOR_GROUP,
    CopyAnnotation.NON_STATUS_HASH,
    CopyAnnotation.STATUS_HASH,
)


def copy_metadata(copy: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a copied CSV the cache keeps: identity, labels, the annotations that say
    whose copy it is and whether it is in step. A thousand copies then cost kilobytes."""
    meta = body.meta(copy)
    annotations = meta.get("annotations") or {}
    kept: dict[str, Any] = {
        key: meta[key]
        for key in (
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "creationTimestamp",
            "deletionTimestamp",
        )
        if key in meta
    }
    kept["labels"] = dict(meta.get("labels") or {})
    kept["annotations"] = {
        str(k): annotations[k] for k in COPY_CACHED_ANNOTATIONS if k in annotations
    }
    trimmed = {"apiVersion": copy.get("apiVersion"), "kind": copy.get("kind"), "metadata": kept}
    digest = status_digest(copy)
    if digest is not None:  # whether its status is the one olm-py wrote (copies.status_edited)
        trimmed[STATUS_DIGEST_KEY] = digest
    return trimmed


def copy_status(status: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch that makes a copy's status exactly `status` (absent fields nulled)."""
    return {**{key: None for key in CSV_STATUS_FIELDS}, **status}


# --- in step ----------------------------------------------------------------------------------


def ref_of(obj: Mapping[str, Any]) -> ObjectRef:
    meta = body.meta(obj)
    return ObjectRef(
        str(obj.get("kind") or ""), str(meta.get("namespace") or ""), str(meta.get("name") or "")
    )


def in_step(desired: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Whether applying `desired` would change nothing we own in `live`: our labels and
    annotations are there, the ownerReferences and every other field we set are equal, and a
    ClusterRole we write without an aggregationRule has none."""
    if live is None:
        return False
    meta, live_meta = body.meta(desired), body.meta(live)
    for key in ("labels", "annotations"):
        if not is_subset(dict(meta.get(key) or {}), dict(live_meta.get(key) or {})):
            return False
    if "ownerReferences" in meta and meta["ownerReferences"] != live_meta.get("ownerReferences"):
        return False
    for key, value in desired.items():
        if key in ("apiVersion", "kind", "metadata"):
            continue
        if not is_subset(value, live.get(key)):
            return False
    return not (
        desired.get("kind") == "ClusterRole"
        and "aggregationRule" not in desired
        and live.get("aggregationRule")
    )


def changed(
    desired: Iterable[Mapping[str, Any]], live: Mapping[ObjectRef, Mapping[str, Any] | None]
) -> list[dict[str, Any]]:
    """The desired objects whose live version (by `ref_of`) is missing or not in step."""
    return [dict(obj) for obj in desired if not in_step(obj, live.get(ref_of(obj)))]


# --- one original's scope ---------------------------------------------------------------------


@dataclass(frozen=True)
class ScopeSnapshot:
    """Everything `decide_scope` reads about one original (non-copied) CSV."""

    csv: Mapping[str, Any]
    group: Mapping[str, Any] | None  # its namespace's only OperatorGroup, None if not exactly one
    namespaces: Collection[str]  # namespaces a copy may be written in (existing, not terminating)
    copies: Mapping[str, CopyMeta]  # its copies, by namespace
    occupied: Collection[str] = ()  # namespaces holding a non-copied CSV of its name
    copies_enabled: bool = True
    protected_namespaces: frozenset[str] = frozenset()
    prototype: CopyPrototype | None = None
    roles: tuple[Mapping[str, Any], ...] = ()  # Roles of the operator namespace
    role_bindings: tuple[Mapping[str, Any], ...] = ()  # RoleBindings of the operator namespace
    # Per scope ("" = cluster-wide, else a target namespace): the RBAC that counts there
    # (that namespace's Roles/RoleBindings, every ClusterRole/ClusterRoleBinding).
    rbac: Mapping[str, RbacSnapshot] = field(default_factory=dict)
    existing: tuple[ObjectRef, ...] = ()  # this CSV's lifted/copied RBAC objects that exist
    crds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # by name
    api_services: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # by name
    only_namespace: str | None = None  # restrict the decision to this namespace


@dataclass
class ScopePlan:
    copies: CopyPlan
    rbac: ScopeRbacPlan
    api_roles: ApiRolesPlan = field(default_factory=ApiRolesPlan)
    warnings: list[tuple[ScopeEventReason, str]] = field(default_factory=list)

    @property
    def desired(self) -> list[dict[str, Any]]:
        """Every RBAC object the plan wants applied (before `changed` filters them)."""
        return [*self.rbac.apply, *self.api_roles.apply]


def tenant_namespaces(csv: Mapping[str, Any], targets: Iterable[str] | None) -> list[str]:
    """The target namespaces that get copied Roles/RoleBindings (Single/MultiNamespace groups,
    the operator's own namespace aside)."""
    listed = list(targets or ())
    namespace = str(body.meta(csv).get("namespace") or "")
    if not listed or is_all(frozenset(listed)) or is_own_namespace_only(listed, namespace):
        return []
    return sorted(set(listed) - {namespace})


def _permissions(snapshot: ScopeSnapshot, scopes: Iterable[str]) -> dict[str, bool]:
    owned_roles = [r for r in snapshot.roles if labelled_by(r, *_owner(snapshot.csv))]
    owned_bindings = [b for b in snapshot.role_bindings if labelled_by(b, *_owner(snapshot.csv))]
    role_names = {str(body.meta(r).get("name")) for r in owned_roles}
    binding_names = {str(body.meta(b).get("name")) for b in owned_bindings}
    met = {}
    for scope in scopes:
        rbac = snapshot.rbac.get(scope)
        if rbac is None:
            continue
        mine = without_own(rbac, snapshot.csv, role_names, binding_names)
        met[scope] = permissions_met(snapshot.csv, mine, scope)
    return met


def _owner(csv: Mapping[str, Any]) -> tuple[str, str]:
    return str(body.meta(csv).get("name") or ""), str(body.meta(csv).get("namespace") or "")


def _rbac_ready(
    csv: Mapping[str, Any], group: Mapping[str, Any] | None, targets: tuple[str, ...]
) -> bool:
    """OLM widens RBAC once the CSV's group annotations are in step with its group (its
    operatorGroupFromAnnotations), whatever the CSV's phase; never for copies or a CSV being
    deleted."""
    meta = body.meta(csv)
    annotations = meta.get("annotations") or {}
    return (
        group is not None
        and not is_copied(csv)
        and not meta.get("deletionTimestamp")
        and annotations.get(Annotation.OPERATOR_NAMESPACE) == meta.get("namespace")
        and annotations.get(Annotation.OPERATOR_GROUP) == body.meta(group).get("name")
        and annotations.get(Annotation.TARGET_NAMESPACES) == build_target_namespaces(targets)
    )


def _group_targets(group: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    if group is None:
        return None
    status = group.get("status") or {}
    if "namespaces" not in status and not status.get("lastUpdated"):
        return None
    return tuple(str(n) for n in status.get("namespaces") or [])


def decide_scope(snapshot: ScopeSnapshot) -> ScopePlan:
    """What one original CSV should have across its group's scope."""
    only = snapshot.only_namespace
    copy_snapshot = CopySnapshot(
        original=snapshot.csv,
        group=snapshot.group,
        namespaces=snapshot.namespaces,
        copies=snapshot.copies,
        occupied=snapshot.occupied,
        copies_enabled=snapshot.copies_enabled,
        protected_namespaces=snapshot.protected_namespaces,
        prototype=snapshot.prototype,
    )
    copies = plan_copies(copy_snapshot)
    if only is not None:
        copies.disabled_event = None
        copies.clear_disabled_events = False
    plan = ScopePlan(copies=copies, rbac=ScopeRbacPlan())
    plan.warnings.extend((ScopeEventReason.COPY_BLOCKED, message) for _, message in copies.blocked)

    targets = _group_targets(snapshot.group)
    if targets is not None and _rbac_ready(snapshot.csv, snapshot.group, targets):
        tenants = tenant_namespaces(snapshot.csv, targets)
        if only is None:
            scopes = [ALL_NAMESPACES] if is_all(frozenset(targets)) else tenants
        else:
            scopes = [only] if only in tenants else []
        if only is None or scopes:
            rbac = plan_scope_rbac(
                ScopeRbacSnapshot(
                    csv=snapshot.csv,
                    targets=targets,
                    roles=snapshot.roles,
                    role_bindings=snapshot.role_bindings,
                    permissions_met=_permissions(snapshot, scopes),
                    copies={ns: c.uid for ns, c in snapshot.copies.items() if c.uid},
                    existing=snapshot.existing,
                )
            )
            if only is not None:
                rbac = ScopeRbacPlan(
                    apply=[o for o in rbac.apply if body.meta(o).get("namespace") == only],
                    delete=[r for r in rbac.delete if r.namespace == only],
                    waiting_for_copies=[n for n in rbac.waiting_for_copies if n == only],
                    problem=rbac.problem,
                )
            plan.rbac = rbac
            phase = (snapshot.csv.get("status") or {}).get("phase") or ""
            if rbac.problem and phase not in (CsvPhase.NONE, CsvPhase.PENDING):
                # Before the install strategy runs, the InstallPlan may still be creating the
                # Roles; a CSV that got past Pending without them is worth a word.
                plan.warnings.append((ScopeEventReason.SCOPE_PERMISSIONS_NOT_GRANTED, rbac.problem))

    if only is None and (snapshot.csv.get("status") or {}).get("phase") == CsvPhase.SUCCEEDED:
        plan.api_roles = provided_api_cluster_roles(
            snapshot.csv, snapshot.crds, snapshot.api_services
        )
    return plan
