"""An in-memory copy of the watched objects, fed by kopf's watch events (an informer cache).

Invariants:
- The store keeps each object exactly as the watch delivered it and replaces it wholesale on
  the next event; readers get references and must treat them as read-only (the pure logic
  never mutates its inputs), so a read costs no copying however big the objects are.
- `synced` is set once every watched kind has been listed completely (the sync barrier): no
  worker reconciles before it, so no decision is made on a half-loaded cache after a restart.
- `retain` purges what a relist no longer shows (objects deleted during a watch gap), but only
  entries that have not changed since the relist began, so a concurrent watch event always wins.
- An entry is never replaced by an older version of the same object. Controllers write through
  (they keep what the API server answered to their write), and that answer can reach the store
  after a watch event that is newer still: a Deployment's status written by the
  controller-manager between the apply and its answer. Kept, the older copy would stay until
  the object changed again, which a settled object never does: a CSV would wait for ever for a
  rollout that had long finished. Older means a smaller `metadata.resourceVersion`; the API
  calls it opaque, but every API server backed by etcd uses etcd's global revision, one
  increasing integer. Values that are not integers are compared by nothing (the newcomer wins).
- A namespace has incarnations: deleted and made again under the same name, it is another
  namespace. When the store learns that one ended (the Namespace's DELETED event, or a
  Namespace of another uid in its place), every entry of that namespace created before the end
  (`creationTimestamp` earlier than the old one's `deletionTimestamp` or the new one's
  `creationTimestamp`) is dropped: nothing can be created in a terminating or absent namespace,
  so those entries belonged to the old one even when their own DELETED event was lost in a
  watch gap. Kept, an old InstallPlan would be carried out into the new namespace. Entries of
  the same second as the end are kept (timestamps are whole seconds), as are entries with no
  timestamp: the next relist judges those.
- Entries are filed under a `StoreKind`: one per watched kind (olm.controllers.watch.WATCHED),
  copied CSVs apart from CSVs. The values are the strings the store always used, so a
  `StoreKind` and its value name the same entries.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping
from enum import StrEnum
from typing import Any, Protocol

from olm.api import body

Key = tuple[str, str]  # (namespace or "", name)


class StoreKind(StrEnum):
    """The kinds the store files objects under: one per watch (olm.controllers.watch.WATCHED)."""

    CSV = "csv"  # original CSVs, never copies
    COPIED_CSV = "copiedcsv"  # copied CSVs (labelled olm.copiedFrom), metadata only
    OLM_CONFIG = "olmconfig"
    OPERATOR_GROUP = "operatorgroup"
    OPERATOR_CONDITION = "operatorcondition"
    DEPLOYMENT = "deployment"
    CRD = "crd"
    SERVICE_ACCOUNT = "serviceaccount"
    ROLE = "role"
    ROLE_BINDING = "rolebinding"
    CLUSTER_ROLE = "clusterrole"
    CLUSTER_ROLE_BINDING = "clusterrolebinding"
    NAMESPACE = "namespace"
    SUBSCRIPTION = "subscription"
    INSTALL_PLAN = "installplan"
    CATALOG_SOURCE = "catalogsource"
    OPERATOR = "operator"
    SERVICE = "service"  # this and the next three: olm.managed objects only
    SECRET = "secret"  # metadata only
    CONFIG_MAP = "configmap"  # metadata only
    API_SERVICE = "apiservice"
    CSV_API_SERVICE = "csvapiservice"  # APIServices labelled as owned by a CSV (olm.owner*)
    NETWORK_POLICY = "networkpolicy"
    REGISTRY_POD = "registrypod"  # pods labelled olm.catalogSource: catalog registry pods  # olm.managed: a catalog registry's policies


# The store kind each Kubernetes kind that olm-py reads from the store is cached under.
STORE_KIND_OF: dict[str, StoreKind] = {
    "ClusterServiceVersion": StoreKind.CSV,
    "OLMConfig": StoreKind.OLM_CONFIG,
    "OperatorGroup": StoreKind.OPERATOR_GROUP,
    "OperatorCondition": StoreKind.OPERATOR_CONDITION,
    "Deployment": StoreKind.DEPLOYMENT,
    "CustomResourceDefinition": StoreKind.CRD,
    "ServiceAccount": StoreKind.SERVICE_ACCOUNT,
    "Role": StoreKind.ROLE,
    "RoleBinding": StoreKind.ROLE_BINDING,
    "ClusterRole": StoreKind.CLUSTER_ROLE,
    "ClusterRoleBinding": StoreKind.CLUSTER_ROLE_BINDING,
    "Namespace": StoreKind.NAMESPACE,
    "Subscription": StoreKind.SUBSCRIPTION,
    "InstallPlan": StoreKind.INSTALL_PLAN,
    "CatalogSource": StoreKind.CATALOG_SOURCE,
    "Operator": StoreKind.OPERATOR,
    "Service": StoreKind.SERVICE,
    "Secret": StoreKind.SECRET,
    "ConfigMap": StoreKind.CONFIG_MAP,
    "APIService": StoreKind.API_SERVICE,
    "NetworkPolicy": StoreKind.NETWORK_POLICY,
}


class StoreReader(Protocol):
    """The read side of the store: what the wake rules (olm.controllers.wake) may look at."""

    def get(self, kind: StoreKind, namespace: str, name: str) -> dict[str, Any] | None: ...

    def items(self, kind: StoreKind, namespace: str | None = None) -> list[dict[str, Any]]: ...

    def keys(self, kind: StoreKind, namespace: str | None = None) -> list[Key]: ...


def _revision(obj: Mapping[str, Any]) -> int | None:
    value = body.meta(obj).get("resourceVersion")
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _uid(obj: Mapping[str, Any]) -> str:
    return str(body.meta(obj).get("uid") or "")


def older(candidate: Mapping[str, Any], current: Mapping[str, Any]) -> bool:
    """Whether `candidate` is an older version than `current` (see the module's invariants)."""
    new, old = _revision(candidate), _revision(current)
    return new is not None and old is not None and new < old


class Store:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[StoreKind, dict[Key, dict[str, Any]]] = {}
        self.synced = threading.Event()

    def upsert(self, kind: StoreKind, obj: dict[str, Any]) -> dict[str, Any] | None:
        """Keep `obj` unless the entry is newer; return the entry it met (None when new)."""
        key = body.key(obj)
        with self._lock:
            objects = self._objects.setdefault(kind, {})
            old = objects.get(key)
            if old is None or not older(obj, old):
                objects[key] = obj
        return old

    def forget(self, kind: StoreKind, obj: Mapping[str, Any]) -> list[tuple[StoreKind, Any]]:
        """`obj` was deleted: drop its entry and, for a Namespace, the entries of the namespace
        that ended with it (see the module's invariants). Returns what else was dropped."""
        namespace, name = body.key(obj)
        self.delete(kind, namespace, name)
        if kind != StoreKind.NAMESPACE:
            return []
        return self._forget_namespace(name, str(body.meta(obj).get("deletionTimestamp") or ""))

    def renewed(
        self, kind: StoreKind, old: Mapping[str, Any] | None, new: Mapping[str, Any]
    ) -> list[tuple[StoreKind, Any]]:
        """`new` was stored in place of `old`: for a Namespace of another uid (the namespace was
        made again), drop the old one's entries (see the module's invariants); return them."""
        if kind != StoreKind.NAMESPACE or old is None or _uid(old) == _uid(new):
            return []
        # The old one's deletion time when the cache saw it begin (earlier than the new one's
        # creation, so safer against the clocks of several API servers), else the new one's.
        ended = body.meta(old).get("deletionTimestamp") or body.meta(new).get("creationTimestamp")
        return self._forget_namespace(body.key(new)[1], str(ended or ""))

    def _forget_namespace(self, namespace: str, ended: str) -> list[tuple[StoreKind, Any]]:
        """Drop the entries of `namespace` created before `ended` (an RFC 3339 UTC time)."""
        if not namespace or not ended:  # "" would name every cluster-scoped entry
            return []
        dropped = []
        with self._lock:
            for kind, objects in self._objects.items():
                for key in [k for k in objects if k[0] == namespace]:
                    entry = objects[key]
                    created = str(body.meta(entry).get("creationTimestamp") or "")
                    if created and created < ended:
                        del objects[key]
                        dropped.append((kind, entry))
        return dropped

    def delete(self, kind: StoreKind, namespace: str, name: str) -> None:
        with self._lock:
            self._objects.get(kind, {}).pop((namespace or "", name), None)

    def get(self, kind: StoreKind, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._objects.get(kind, {}).get((namespace or "", name))

    def items(self, kind: StoreKind, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            objects = self._objects.get(kind, {})
            return [obj for (ns, _), obj in objects.items() if namespace is None or ns == namespace]

    def keys(self, kind: StoreKind, namespace: str | None = None) -> list[Key]:
        with self._lock:
            return [
                key
                for key in self._objects.get(kind, {})
                if namespace is None or key[0] == namespace
            ]

    def snapshot(self, kind: StoreKind) -> dict[Key, dict[str, Any]]:
        """The entries of one kind as they are now (taken before a relist starts)."""
        with self._lock:
            return dict(self._objects.get(kind, {}))

    def retain(
        self, kind: StoreKind, before: dict[Key, dict[str, Any]], listed: Collection[Key]
    ) -> list[Key]:
        """Drop entries of `before` that the relist did not show and that no event touched
        since; return the purged keys."""
        purged = []
        with self._lock:
            objects = self._objects.get(kind, {})
            for key, obj in before.items():
                if key not in listed and objects.get(key) is obj:
                    del objects[key]
                    purged.append(key)
        return purged
