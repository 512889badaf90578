"""Wake rules of the core controllers: the CSV, OperatorGroup, CatalogSource and InstallPlan
controllers, and the Subscription controller (one key per namespace).

Invariants:
- Pure: a rule reads the event's objects and the store (read-only) and returns work keys.
- A change wakes only what reads the parts that changed: a status-only change of a CSV does
  not wake its OperatorGroups (a group reads its CSVs' owned APIs, never their status).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.catalogsource import CATALOG_SOURCE_LABEL
from olm.api.labels import Label
from olm.controllers.queue import WorkKey, WorkKind
from olm.controllers.store import StoreKind, StoreReader

# The controllers' own kinds, re-enqueued by every resync; Subscriptions resolve per namespace.
RESYNCED: tuple[tuple[WorkKind, StoreKind], ...] = (
    (WorkKind.OPERATOR_GROUP, StoreKind.OPERATOR_GROUP),
    (WorkKind.CSV, StoreKind.CSV),
    (WorkKind.CATALOG_SOURCE, StoreKind.CATALOG_SOURCE),
    (WorkKind.INSTALL_PLAN, StoreKind.INSTALL_PLAN),
)


def _identity(obj: Mapping[str, Any] | None) -> dict[str, Any]:
    """The parts of an object other than its status (what a status-only write leaves alone)."""
    if obj is None:
        return {}
    meta = body.meta(obj)
    return {
        "spec": obj.get("spec"),
        "labels": meta.get("labels"),
        "annotations": meta.get("annotations"),
        "ownerReferences": meta.get("ownerReferences"),
        "finalizers": meta.get("finalizers"),
        "deletionTimestamp": meta.get("deletionTimestamp"),
    }


def core_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """The core controllers' work a change of `obj` (of store kind `kind`) makes necessary."""
    namespace, name = body.key(obj)
    status_only = not deleted and old is not None and _identity(old) == _identity(obj)

    def csvs(ns: str | None) -> list[WorkKey]:
        return [
            (WorkKind.CSV, key_ns, key_name) for key_ns, key_name in store.keys(StoreKind.CSV, ns)
        ]

    def groups() -> list[WorkKey]:
        return [
            (WorkKind.OPERATOR_GROUP, namespace, og)
            for _, og in store.keys(StoreKind.OPERATOR_GROUP, namespace)
        ]

    if kind == StoreKind.SUBSCRIPTION:
        # The CSV it installed merges its spec.config into its Deployments.
        sub_status = obj.get("status") or {}
        named = {sub_status.get("installedCSV"), sub_status.get("currentCSV")}
        if old is not None:
            named |= {
                (old.get("status") or {}).get("installedCSV"),
                (old.get("status") or {}).get("currentCSV"),
            }
        return [(WorkKind.NAMESPACE, "", namespace)] + [
            (WorkKind.CSV, namespace, csv_name) for csv_name in sorted(n for n in named if n)
        ]
    if kind == StoreKind.INSTALL_PLAN:
        return [(WorkKind.INSTALL_PLAN, namespace, name), (WorkKind.NAMESPACE, "", namespace)]
    if kind == StoreKind.CATALOG_SOURCE:
        return [(WorkKind.CATALOG_SOURCE, namespace, name)]
    if kind == StoreKind.CSV_API_SERVICE:  # its owner CSV deletes it once it is gone
        own = body.labels(obj)
        owner, owner_ns = own.get(Label.OWNER), own.get(Label.OWNER_NAMESPACE)
        return [(WorkKind.CSV, owner_ns, owner)] if owner and owner_ns else []
    if kind in (StoreKind.NETWORK_POLICY, StoreKind.REGISTRY_POD):  # its CatalogSource keeps it
        catalog = body.labels(obj).get(CATALOG_SOURCE_LABEL)
        return [(WorkKind.CATALOG_SOURCE, namespace, catalog)] if catalog else []
    if kind == StoreKind.CSV:
        keys: list[WorkKey] = [(WorkKind.CSV, namespace, name), (WorkKind.NAMESPACE, "", namespace)]
        if not status_only:  # a group reads its CSVs' owned APIs, never their status
            keys += groups()
        replaces = (obj.get("spec") or {}).get("replaces")
        for other in store.items(StoreKind.CSV, namespace):
            other_name = other["metadata"]["name"]
            other_replaces = (other.get("spec") or {}).get("replaces")
            # The CSV it replaces, the CSVs that replace it, and rival replacers of the same
            # CSV (the loser of a two-replacers conflict recovers when the winner goes).
            if (
                other_name == replaces
                or other_replaces == name
                or (replaces and other_replaces == replaces and other_name != name)
            ):
                keys.append((WorkKind.CSV, namespace, other_name))
        return keys
    if kind == StoreKind.OPERATOR_GROUP:
        # Siblings only care that a group came or went (MultipleOperatorGroup); the CSVs of
        # the namespace follow the group's targets and annotations.
        keys = [(WorkKind.OPERATOR_GROUP, namespace, name)]
        if old is None or deleted:
            keys += groups()
        return keys + csvs(namespace)
    if kind == StoreKind.DEPLOYMENT:
        labels = body.labels(obj)
        owner, owner_ns = labels.get(Label.OWNER), labels.get(Label.OWNER_NAMESPACE)
        return [(WorkKind.CSV, owner_ns, owner)] if owner and owner_ns else []
    if kind == StoreKind.NAMESPACE:
        return [
            (WorkKind.OPERATOR_GROUP, group["metadata"]["namespace"], group["metadata"]["name"])
            for group in store.items(StoreKind.OPERATOR_GROUP)
            if _targets_may_change(group, name)
        ]
    if kind in (
        StoreKind.SERVICE_ACCOUNT,
        StoreKind.ROLE,
        StoreKind.ROLE_BINDING,
        StoreKind.OPERATOR_CONDITION,
    ):
        return csvs(namespace)
    return csvs(None)  # crd, clusterrole, clusterrolebinding: cluster-wide


def _targets_may_change(group: Mapping[str, Any], namespace: str) -> bool:
    """Whether a change of `namespace` can change what `group` says: a group in it, a group
    that names it, or a group that selects namespaces by label. A global group's
    status.namespaces is [""] whatever namespaces come and go."""
    spec = group.get("spec") or {}
    return (
        group["metadata"].get("namespace") == namespace
        or namespace in (spec.get("targetNamespaces") or [])
        or spec.get("selector") is not None
    )


def resync_core_keys(store: StoreReader) -> list[WorkKey]:
    """What a full resync wakes for the core controllers: each object of their kinds, each
    namespace that has Subscriptions, and the owner CSV named by an APIService's labels when
    that CSV is gone (its controller deletes the orphan)."""
    keys: list[WorkKey] = [
        (work, namespace, name) for work, kind in RESYNCED for namespace, name in store.keys(kind)
    ]
    subscribed = {ns for ns, _ in store.keys(StoreKind.SUBSCRIPTION)}
    keys += [(WorkKind.NAMESPACE, "", ns) for ns in sorted(subscribed)]
    for apiservice in store.items(StoreKind.CSV_API_SERVICE):
        owner = core_keys(StoreKind.CSV_API_SERVICE, apiservice, store)
        keys += [key for key in owner if store.get(StoreKind.CSV, key[1], key[2]) is None]
    return keys
