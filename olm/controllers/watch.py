"""What olm-py watches, and which keys each change wakes. kopf owns the watch streams.

Invariants:
- Only `@kopf.index` and `@kopf.on.event` handlers are registered, so kopf writes nothing to
  any object (no annotations, no finalizers, no status). Handlers only update the store and
  enqueue keys; all work happens in the workers.
- The sync barrier: every watched kind has an index handler that fills the store. kopf calls
  no event handler before every kind's initial listing has been indexed, so the first event
  handler call proves the store complete: it sets `store.synced` and wakes every object once.
  Before that, nothing is enqueued, so no decision is ever made on a half-loaded cache.
- A change wakes only what depends on the parts that changed: an event that carries the
  resourceVersion already stored (a relist after a watch restart) wakes nothing, and a
  status-only change of a CSV does not wake its OperatorGroup.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import kopf

from olm.api.labels import MANAGED_VALUE, Label
from olm.controllers import operator
from olm.controllers.operator import OWN_KINDS, operator_keys, resync_operator_keys
from olm.controllers.queue import WorkQueue
from olm.controllers.scope import COPIED_CSV, OLM_CONFIG, resync_scope_keys, scope_keys
from olm.controllers.scope import trim as scope_trim
from olm.controllers.store import Store

log = logging.getLogger("olm.watch")

WorkKey = tuple[str, str, str]  # (controller kind, namespace, name)


@dataclass(frozen=True)
class Watched:
    kind: str
    group: str
    version: str
    plural: str
    labels: dict[str, Any] | None = None
    # Filter on the server too (kopf's `labels` filter runs in the client, after the API server
    # has sent every object of the kind): for kinds watched once, where a selector per resource
    # cannot hide objects from another watch of the same kind.
    server_side: bool = False

    @property
    def path(self) -> str:
        """The REST list path of this kind (all namespaces)."""
        prefix = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return f"{prefix}/{self.plural}"

    @property
    def selector(self) -> str:
        """The label selector the watch uses, as a query string value ('' for none)."""
        return ",".join(
            f"!{key}"
            if value is kopf.ABSENT
            else f"{key}={value}"
            if isinstance(value, str)
            else key
            for key, value in sorted((self.labels or {}).items())
        )


WATCHED: tuple[Watched, ...] = (
    # Copied CSVs (labelled olm.copiedFrom) are a kind of their own, kept as metadata only
    # (olm.controllers.scope): one per target namespace, never acted upon as CSVs.
    Watched(
        "csv",
        "operators.coreos.com",
        "v1alpha1",
        "clusterserviceversions",
        {Label.COPIED_FROM.value: kopf.ABSENT},
    ),
    Watched(
        COPIED_CSV,
        "operators.coreos.com",
        "v1alpha1",
        "clusterserviceversions",
        {Label.COPIED_FROM.value: kopf.PRESENT},
    ),
    Watched(OLM_CONFIG, "operators.coreos.com", "v1", "olmconfigs"),
    Watched("operatorgroup", "operators.coreos.com", "v1", "operatorgroups"),
    Watched("operatorcondition", "operators.coreos.com", "v2", "operatorconditions"),
    Watched("deployment", "apps", "v1", "deployments", {Label.OWNER.value: kopf.PRESENT}),
    Watched("crd", "apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    Watched("serviceaccount", "", "v1", "serviceaccounts"),
    Watched("role", "rbac.authorization.k8s.io", "v1", "roles"),
    Watched("rolebinding", "rbac.authorization.k8s.io", "v1", "rolebindings"),
    Watched("clusterrole", "rbac.authorization.k8s.io", "v1", "clusterroles"),
    Watched("clusterrolebinding", "rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    Watched("namespace", "", "v1", "namespaces"),
    Watched("subscription", "operators.coreos.com", "v1alpha1", "subscriptions"),
    Watched("installplan", "operators.coreos.com", "v1alpha1", "installplans"),
    Watched("catalogsource", "operators.coreos.com", "v1alpha1", "catalogsources"),
    # Operator objects, and the component kinds only olm.controllers.operator reads. Like OLM's
    # caches, only objects labelled olm.managed=true (OLM also sees unlabelled Secrets:
    # docs/differences.md); Secrets and ConfigMaps are kept as metadata only.
    Watched(operator.OPERATOR, "operators.coreos.com", "v1", "operators"),
    *(
        Watched(kind, group, "v1", plural, {Label.MANAGED.value: MANAGED_VALUE}, server_side=True)
        for kind, group, plural in (
            ("service", "", "services"),
            ("secret", "", "secrets"),
            ("configmap", "", "configmaps"),
            ("apiservice", "apiregistration.k8s.io", "apiservices"),
        )
    ),
)

# The controllers' own kinds, re-enqueued by every resync; Subscriptions resolve per namespace.
RESYNCED = ("operatorgroup", "csv", "catalogsource", "installplan")


def trim(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a watched object (olm.controllers.scope.trim, and Secrets and
    ConfigMaps as metadata only)."""
    return operator.trim(kind, scope_trim(kind, obj))


def _identity(obj: dict[str, Any] | None) -> dict[str, Any]:
    """The parts of an object other than its status (what a status-only write leaves alone)."""
    if obj is None:
        return {}
    meta = obj.get("metadata") or {}
    return {
        "spec": obj.get("spec"),
        "labels": meta.get("labels"),
        "annotations": meta.get("annotations"),
        "ownerReferences": meta.get("ownerReferences"),
        "finalizers": meta.get("finalizers"),
        "deletionTimestamp": meta.get("deletionTimestamp"),
    }


def unchanged(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """True when the event carries exactly what the store already holds."""
    if old is None or new is None:
        return False
    old_rv = (old.get("metadata") or {}).get("resourceVersion")
    return bool(old_rv) and old_rv == (new.get("metadata") or {}).get("resourceVersion")


def related_keys(
    kind: str,
    obj: dict[str, Any],
    store: Store,
    old: dict[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """The work a change of `obj` (from `old`; None when new) makes necessary: the core
    controllers' keys, the scope controllers' (olm.controllers.scope.scope_keys) and the
    Operator controllers' (olm.controllers.operator.operator_keys)."""
    operators = operator_keys(kind, obj, store, old, deleted=deleted)
    if kind in OWN_KINDS:  # only the Operator controllers read these
        return operators
    scoped = scope_keys(kind, obj, store, old, deleted=deleted)
    if kind in (COPIED_CSV, OLM_CONFIG):  # only the scope controllers read these
        return scoped
    return _related_keys(kind, obj, store, old, deleted=deleted) + scoped + operators


def _related_keys(
    kind: str,
    obj: dict[str, Any],
    store: Store,
    old: dict[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""
    status_only = not deleted and old is not None and _identity(old) == _identity(obj)

    def csvs(ns: str | None) -> list[WorkKey]:
        return [("csv", key_ns, key_name) for key_ns, key_name in store.keys("csv", ns)]

    def groups() -> list[WorkKey]:
        return [
            ("operatorgroup", namespace, og) for _, og in store.keys("operatorgroup", namespace)
        ]

    if kind == "subscription":
        # The CSV it installed merges its spec.config into its Deployments.
        sub_status = obj.get("status") or {}
        named = {sub_status.get("installedCSV"), sub_status.get("currentCSV")}
        if old is not None:
            named |= {
                (old.get("status") or {}).get("installedCSV"),
                (old.get("status") or {}).get("currentCSV"),
            }
        return [("namespace", "", namespace)] + [
            ("csv", namespace, csv_name) for csv_name in sorted(n for n in named if n)
        ]
    if kind == "installplan":
        return [("installplan", namespace, name), ("namespace", "", namespace)]
    if kind == "catalogsource":
        return [("catalogsource", namespace, name)]
    if kind == "csv":
        keys: list[WorkKey] = [("csv", namespace, name), ("namespace", "", namespace)]
        if not status_only:  # a group reads its CSVs' owned APIs, never their status
            keys += groups()
        replaces = (obj.get("spec") or {}).get("replaces")
        for other in store.items("csv", namespace):
            other_name = other["metadata"]["name"]
            other_replaces = (other.get("spec") or {}).get("replaces")
            # The CSV it replaces, the CSVs that replace it, and rival replacers of the same
            # CSV (the loser of a two-replacers conflict recovers when the winner goes).
            if (
                other_name == replaces
                or other_replaces == name
                or (replaces and other_replaces == replaces and other_name != name)
            ):
                keys.append(("csv", namespace, other_name))
        return keys
    if kind == "operatorgroup":
        # Siblings only care that a group came or went (MultipleOperatorGroup); the CSVs of
        # the namespace follow the group's targets and annotations.
        keys = [("operatorgroup", namespace, name)]
        if old is None or deleted:
            keys += groups()
        return keys + csvs(namespace)
    if kind == "deployment":
        labels = meta.get("labels") or {}
        owner, owner_ns = labels.get(Label.OWNER), labels.get(Label.OWNER_NAMESPACE)
        return [("csv", owner_ns, owner)] if owner and owner_ns else []
    if kind == "namespace":
        return [
            ("operatorgroup", group["metadata"]["namespace"], group["metadata"]["name"])
            for group in store.items("operatorgroup")
            if _targets_may_change(group, name)
        ]
    if kind in ("serviceaccount", "role", "rolebinding", "operatorcondition"):
        return csvs(namespace)
    return csvs(None)  # crd, clusterrole, clusterrolebinding: cluster-wide


def _targets_may_change(group: dict[str, Any], namespace: str) -> bool:
    """Whether a change of `namespace` can change what `group` says: a group in it, a group
    that names it, or a group that selects namespaces by label. A global group's
    status.namespaces is [""] whatever namespaces come and go."""
    spec = group.get("spec") or {}
    return (
        group["metadata"].get("namespace") == namespace
        or namespace in (spec.get("targetNamespaces") or [])
        or spec.get("selector") is not None
    )


def resync_keys(store: Store) -> list[WorkKey]:
    """Every key a full resync wakes: each object of the controllers' kinds, and each
    namespace that has Subscriptions."""
    keys: list[WorkKey] = [
        (kind, namespace, name) for kind in RESYNCED for namespace, name in store.keys(kind)
    ]
    keys += [("namespace", "", ns) for ns in sorted({ns for ns, _ in store.keys("subscription")})]
    return keys + resync_scope_keys(store) + resync_operator_keys(store)


class Lister(Protocol):
    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]: ...


def relist(store: Store, lister: Lister, watched: Iterable[Watched] = WATCHED) -> int:
    """List every watched kind again and purge what disappeared during a watch gap (kopf's
    watch resumes or relists without reporting deletions it missed). Returns the purge count."""
    purged = 0
    for kind in watched:
        before = store.snapshot(kind.kind)
        listed = set(lister.list_keys(kind.path, kind.selector))
        gone = store.retain(kind.kind, before, listed)
        if gone:
            log.info("relist: %d %s object(s) were deleted while unwatched", len(gone), kind.kind)
        purged += len(gone)
    return purged


def register(registry: kopf.OperatorRegistry, store: Store, queue: WorkQueue) -> None:
    # Credentials come from the same kubeconfig (or in-cluster account) as our own client.
    kopf.on.login(registry=registry, id="login")(kopf.login_via_client)
    for watched in WATCHED:
        resource = (
            (watched.group, watched.version, watched.plural)
            if watched.group
            else (watched.version, watched.plural)
        )
        kopf.index(*resource, labels=watched.labels, registry=registry, id=f"index-{watched.kind}")(
            _make_indexer(watched.kind, store)
        )
        kopf.on.event(
            *resource, labels=watched.labels, registry=registry, id=f"watch-{watched.kind}"
        )(_make_handler(watched.kind, store, queue))


# The handlers are coroutines although they never await: kopf runs a plain function in its
# thread pool, one object at a time per free thread, and the initial listing of a big cluster
# (thousands of namespaces and ServiceAccounts) then queues thousands of per-object workers
# behind that pool, which is slow and holds their memory. Theirs is a few dict operations
# under a lock that is never held for long, so running them on the event loop is cheaper.
def _make_indexer(kind: str, store: Store) -> Callable[..., Awaitable[None]]:
    async def index(body: Any, **_: Any) -> None:
        # Returning None indexes nothing in kopf: the store is the one cache.
        if not store.synced.is_set():
            store.upsert(kind, trim(kind, dict(body)))

    index.__name__ = f"index_{kind}"
    return index


def open_barrier(store: Store, queue: WorkQueue) -> None:
    """Mark the store synced and wake every object once (idempotent)."""
    if store.synced.is_set():
        return
    store.synced.set()
    keys = resync_keys(store)
    log.info("caches synced; reconciling %d objects", len(keys))
    for key in keys:
        queue.add(key)


def _make_handler(kind: str, store: Store, queue: WorkQueue) -> Callable[..., Awaitable[None]]:
    async def on_event(event: dict[str, Any], **_: Any) -> None:
        # kopf calls event handlers only once every kind's listing is indexed (see above).
        open_barrier(store, queue)
        obj = event.get("object") or {}
        meta = obj.get("metadata") or {}
        if event.get("type") == "DELETED":
            old = store.get(kind, meta.get("namespace") or "", meta.get("name") or "")
            keys = related_keys(kind, obj, store, old, deleted=True)
            store.delete(kind, meta.get("namespace") or "", meta.get("name") or "")
        else:
            old = store.upsert(kind, trim(kind, obj))
            if unchanged(old, obj):
                return
            keys = related_keys(kind, obj, store, old)
        for key in keys:
            queue.add(key)

    on_event.__name__ = f"watch_{kind}"
    return on_event


def configure(settings: kopf.OperatorSettings) -> None:
    """Every kopf setting olm-py relies on, in one place (a test asserts them)."""
    settings.posting.enabled = False  # our own Events say what happened; kopf's would be noise
    settings.peering.standalone = True  # no KopfPeering objects: one olm-py per cluster
    settings.peering.mandatory = False
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 10
    settings.networking.error_backoffs = [1, 2, 5, 10, 20]
    for watched in WATCHED:
        if watched.server_side:
            selector = (watched.group, watched.version, watched.plural)
            settings.watching.label_selectors[selector] = watched.selector
