"""Wake rules of the scope controllers (olm.controllers.scope), of scoped installs and of
OperatorGroup owner conflicts.

| work key | woken by |
| --- | --- |
| ("scope", ns, csv) | the CSV, its group, its owned RBAC, its CRDs, OLMConfig's spec |
| ("scope-namespace", "", ns) | the namespace appearing or relabelled, a group's targets gaining or losing it, a copy or copied Role there deleted or edited |
| ("scope-group", ns, og) | the group, its CSVs' specs, its roles |
| ("olmconfig", "", "cluster") | OLMConfig changes (copy writes poke it from the controllers) |
| (WorkKind.INSTALL_PLAN, ns, plan) | scoped installs: a group's ServiceAccount changing, RBAC a plan may wait for |
| ("operatorgroup", ns, og) | scoped installs: the ServiceAccount the group names |
| ("csv", ns, csv) | CSVs in InterOperatorGroupOwnerConflict, when a group's APIs or targets change |

Invariants:
- Pure: a rule reads the event's objects and the store (read-only) and returns work keys.
- A namespace event costs O(OperatorGroups + CSVs that target it), never O(CSVs x namespaces):
  only "scope-namespace" keys are woken by namespaces.
- Our own writes are written through to the store, so their events find it already so and
  wake nothing here (olm.controllers.watch.unchanged).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api.body import meta as _meta
from olm.api.body import name as _name
from olm.api.csv import CsvPhase, CsvReason
from olm.api.installplan import InstallPlanPhase
from olm.api.kinds import Kind
from olm.api.labels import Annotation, Label
from olm.api.scope import OPGROUP_AGGREGATE_TO_PREFIX
from olm.controllers.queue import WorkKey, WorkKind
from olm.controllers.scope.cache import terminating
from olm.controllers.store import StoreKind, StoreReader, older
from olm.installplan.status import ATTENUATED_REF
from olm.operator.objects import owned_crd_names
from olm.scope.apiroles import CRD_OWNER_KIND
from olm.scope.copies import copied_status_hash, status_digest, status_edited
from olm.scope.namespaces import namespaces_to_relabel, status_namespaces

CSV_KIND = Kind.CLUSTER_SERVICE_VERSION.value


def _status_edited(copy: Mapping[str, Any], store: StoreReader) -> bool:
    """Whether someone else wrote a copy's status: neither the status its annotation records
    nor its original's current one (which olm-py writes before recording it)."""
    if not status_edited(copy):
        return False
    meta = _meta(copy)
    origin = (meta.get("labels") or {}).get(Label.COPIED_FROM)
    original = store.get(StoreKind.CSV, str(origin), str(meta.get("name"))) if origin else None
    return original is None or status_digest(copy) != copied_status_hash(original)


def _group_key_targets(group: Mapping[str, Any] | None) -> tuple[str, ...] | None:
    return status_namespaces(group) if group is not None else None


def _owners_of_crds(store: StoreReader, crds: set[str]) -> list[WorkKey]:
    return [
        (WorkKind.SCOPE, str(_meta(csv).get("namespace")), _name(csv))
        for csv in store.items(StoreKind.CSV)
        if (csv.get("status") or {}).get("phase") == CsvPhase.SUCCEEDED
        and not crds.isdisjoint(owned_crd_names(csv))
    ]


def _scoped_plans(store: StoreReader, namespace: str | None) -> list[WorkKey]:
    """Installing InstallPlans that act as an OperatorGroup's ServiceAccount (all of them when
    `namespace` is None): an RBAC change may be the permission one of them waits for."""
    return [
        (WorkKind.INSTALL_PLAN, str(_meta(plan).get("namespace")), _name(plan))
        for plan in store.items(StoreKind.INSTALL_PLAN, namespace)
        if (plan.get("status") or {}).get("phase") == InstallPlanPhase.INSTALLING
        and (plan.get("status") or {}).get(ATTENUATED_REF)
    ]


def scoped_install_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
) -> list[WorkKey]:
    """Scoped installs (OperatorGroup spec.serviceAccountName): a ServiceAccount change wakes
    the groups that name it; a group whose ServiceAccount (or its ref) changed wakes the
    namespace's Installing plans; RBAC changes wake the plans that act as a ServiceAccount."""
    meta = _meta(obj)
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    if kind == StoreKind.SERVICE_ACCOUNT:
        return [
            (WorkKind.OPERATOR_GROUP, namespace, _name(group))
            for group in store.items(StoreKind.OPERATOR_GROUP, namespace)
            if (group.get("spec") or {}).get("serviceAccountName") == name
        ]
    if kind == StoreKind.OPERATOR_GROUP:

        def account(group: Mapping[str, Any] | None) -> tuple[Any, Any]:
            group = group or {}
            return (
                (group.get("spec") or {}).get("serviceAccountName"),
                (group.get("status") or {}).get("serviceAccountRef"),
            )

        if old is not None and account(old) == account(obj):
            return []
        return [
            (WorkKind.INSTALL_PLAN, namespace, _name(plan))
            for plan in store.items(StoreKind.INSTALL_PLAN, namespace)
            if (plan.get("status") or {}).get("phase") == InstallPlanPhase.INSTALLING
        ]
    if kind in (StoreKind.ROLE, StoreKind.ROLE_BINDING):
        return _scoped_plans(store, namespace)
    if kind == StoreKind.CLUSTER_ROLE_BINDING:  # ClusterRole edits are left to the plans' backoff
        return _scoped_plans(store, None)
    return []


def scope_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """The scope work a change of `obj` (of store kind `kind`) makes necessary."""
    extra = scoped_install_keys(kind, obj, store, old) + conflict_keys(
        kind, obj, store, old, deleted=deleted
    )
    return extra + _scope_keys(kind, obj, store, old, deleted=deleted)


def conflict_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """A group that goes, or whose olm.providedAPIs or targets change, may end another group's
    InterOperatorGroupOwnerConflict: those CSVs look again (OLM requeues the providers)."""
    if kind != StoreKind.OPERATOR_GROUP:
        return []

    def surface(group: Mapping[str, Any] | None) -> tuple[Any, Any]:
        group = group or {}
        annotations = _meta(group).get("annotations") or {}
        return annotations.get(Annotation.PROVIDED_APIS), status_namespaces(group)

    if not deleted and old is not None and surface(old) == surface(obj):
        return []
    return [
        (WorkKind.CSV, str(_meta(csv).get("namespace")), _name(csv))
        for csv in store.items(StoreKind.CSV)
        if (csv.get("status") or {}).get("reason") == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT
    ]


def _phase(csv: Mapping[str, Any]) -> str:
    return str((csv.get("status") or {}).get("phase") or "")


def _scope_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    meta = _meta(obj)
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    labels = meta.get("labels") or {}
    if kind == StoreKind.CSV:
        keys: list[WorkKey] = [(WorkKind.SCOPE, namespace, name)]
        if not deleted and (old is None or _phase(old) != _phase(obj)):
            # Its RBAC at once, in the install lane (the copies follow in the bulk lane).
            keys.append((WorkKind.SCOPE_ROLES, namespace, name))
        if deleted or old is None or old.get("spec") != obj.get("spec"):
            keys += [
                (WorkKind.SCOPE_GROUP, namespace, g)
                for _, g in store.keys(StoreKind.OPERATOR_GROUP, namespace)
            ]
        return keys
    if kind == StoreKind.COPIED_CSV:
        # Our own writes are written through (the event finds the store already so); a copy
        # someone deleted is put back, and one whose labels, annotations or status someone
        # changed is put back in step or collected (a wrong olm.operatorNamespace) at once, as
        # OLM does, not at the next resync. A copy that goes with its namespace is left alone.
        there = store.get(StoreKind.NAMESPACE, "", namespace)
        if there is None or terminating(there):
            return []
        if not deleted and old is not None and older(obj, old):
            # An event older than a write of ours already cached (a copy's create, seen after
            # its status write): judge what the cache holds, not the stale event.
            return [(WorkKind.SCOPE_NAMESPACE, "", namespace)] if _status_edited(old, store) else []
        edited = old is not None and any(
            (_meta(old).get(k) or {}) != (meta.get(k) or {}) for k in ("labels", "annotations")
        )
        return (
            [(WorkKind.SCOPE_NAMESPACE, "", namespace)]
            if deleted or edited or _status_edited(obj, store)
            else []
        )
    if kind == StoreKind.OPERATOR_GROUP:
        keys = [(WorkKind.SCOPE_GROUP, namespace, name)]
        keys += [
            (WorkKind.SCOPE, namespace, csv) for _, csv in store.keys(StoreKind.CSV, namespace)
        ]
        if deleted:  # its labels go from the namespaces it targeted
            before, after = _group_key_targets(old or obj), None
        else:
            before, after = _group_key_targets(old), _group_key_targets(obj)
        keys += [(WorkKind.SCOPE_NAMESPACE, "", ns) for ns in namespaces_to_relabel(before, after)]
        return keys
    if kind == StoreKind.NAMESPACE:
        if deleted:
            return []
        if old is None or (_meta(old).get("labels") or {}) != labels:
            return [(WorkKind.SCOPE_NAMESPACE, "", name)]
        return []
    if kind in (
        StoreKind.ROLE,
        StoreKind.ROLE_BINDING,
        StoreKind.CLUSTER_ROLE,
        StoreKind.CLUSTER_ROLE_BINDING,
    ):
        owner, owner_ns = labels.get(Label.OWNER), labels.get(Label.OWNER_NAMESPACE)
        owner_kind = labels.get(Label.OWNER_KIND)
        if owner and owner_kind == CSV_KIND:
            if labels.get(Label.COPIED_FROM) and kind in (StoreKind.ROLE, StoreKind.ROLE_BINDING):
                return [(WorkKind.SCOPE_NAMESPACE, "", namespace)]  # a copied Role/RoleBinding
            return [(WorkKind.SCOPE, str(owner_ns), str(owner))] if owner_ns else []
        if owner and owner_ns and owner_kind == Kind.OPERATOR_GROUP.value:
            return [(WorkKind.SCOPE_GROUP, str(owner_ns), str(owner))]
        if kind == StoreKind.CLUSTER_ROLE and any(
            str(k).startswith(OPGROUP_AGGREGATE_TO_PREFIX) for k in labels
        ):
            crds = {
                str(ref.get("name"))
                for ref in meta.get("ownerReferences") or []
                if ref.get("kind") == CRD_OWNER_KIND
            }
            return _owners_of_crds(store, crds)
        return []
    if kind == StoreKind.CRD:
        if (
            old is not None
            and not deleted
            and old.get("spec") == obj.get("spec")
            and _meta(old).get("uid") == meta.get("uid")
        ):
            return []  # a status change (Established): the owners woke with their phase
        return _owners_of_crds(store, {name})
    if kind == StoreKind.OLM_CONFIG:
        keys = [(WorkKind.OLM_CONFIG, "", name)]
        if deleted or old is None or old.get("spec") != obj.get("spec"):
            for group in store.items(StoreKind.OPERATOR_GROUP):
                if status_namespaces(group) == ("",):
                    group_ns = str(_meta(group).get("namespace"))
                    keys += [
                        (WorkKind.SCOPE, group_ns, csv)
                        for _, csv in store.keys(StoreKind.CSV, group_ns)
                    ]
        return keys
    return []


def resync_scope_keys(store: StoreReader) -> list[WorkKey]:
    """What a full resync (and the sync barrier) wakes for the scope controllers."""
    keys: list[WorkKey] = [(WorkKind.SCOPE, ns, name) for ns, name in store.keys(StoreKind.CSV)]
    keys += [(WorkKind.SCOPE_GROUP, ns, name) for ns, name in store.keys(StoreKind.OPERATOR_GROUP)]
    seen = set(keys)
    for role in store.items(
        StoreKind.CLUSTER_ROLE
    ):  # roles of groups deleted while olm-py was down
        labels = _meta(role).get("labels") or {}
        if labels.get(Label.OWNER_KIND) == Kind.OPERATOR_GROUP.value:
            key = (
                WorkKind.SCOPE_GROUP,
                str(labels.get(Label.OWNER_NAMESPACE)),
                str(labels.get(Label.OWNER)),
            )
            if key not in seen:
                seen.add(key)
                keys.append(key)
    keys += [(WorkKind.SCOPE_NAMESPACE, "", name) for _, name in store.keys(StoreKind.NAMESPACE)]
    keys += [(WorkKind.OLM_CONFIG, "", name) for _, name in store.keys(StoreKind.OLM_CONFIG)]
    return keys
