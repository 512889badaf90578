"""What olm-py watches, and how an event reaches the store and the queue. kopf owns the watch
streams; which keys an event wakes is the wake graph's to say (olm.controllers.wake.graph).

Invariants:
- Only `@kopf.index` and `@kopf.on.event` handlers are registered, so kopf writes nothing to
  any object (no annotations, no finalizers, no status). Handlers only update the store and
  enqueue keys; all work happens in the workers.
- The sync barrier: every watched kind has an index handler that fills the store. kopf calls
  no event handler before every kind's initial listing has been indexed, so the first event
  handler call proves the store complete: it sets `store.synced` and wakes every object once.
  Before that, nothing is enqueued, so no decision is ever made on a half-loaded cache.
- An event that carries the resourceVersion already stored (a relist after a watch restart)
  wakes nothing; any other event wakes `related_keys` (the wake graph), computed for a
  deletion from the entry as it was stored before it is dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import kopf

from olm.api.body import key as body_key
from olm.api.body import meta as body_meta
from olm.api.catalogsource import CATALOG_SOURCE_LABEL
from olm.api.kinds import Kind
from olm.api.labels import MANAGED_VALUE, Label
from olm.controllers import operator
from olm.controllers.queue import WorkQueue
from olm.controllers.scope.cache import trim as scope_trim
from olm.controllers.store import Store, StoreKind

# The wake graph's two questions, asked by every event and every resync (app.py asks here too).
from olm.controllers.wake.graph import related_keys as related_keys
from olm.controllers.wake.graph import resync_keys as resync_keys

log = logging.getLogger("olm.watch")


@dataclass(frozen=True)
class Watched:
    kind: StoreKind
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
        StoreKind.CSV,
        "operators.coreos.com",
        "v1alpha1",
        "clusterserviceversions",
        {Label.COPIED_FROM.value: kopf.ABSENT},
    ),
    Watched(
        StoreKind.COPIED_CSV,
        "operators.coreos.com",
        "v1alpha1",
        "clusterserviceversions",
        {Label.COPIED_FROM.value: kopf.PRESENT},
    ),
    Watched(StoreKind.OLM_CONFIG, "operators.coreos.com", "v1", "olmconfigs"),
    Watched(StoreKind.OPERATOR_GROUP, "operators.coreos.com", "v1", "operatorgroups"),
    Watched(StoreKind.OPERATOR_CONDITION, "operators.coreos.com", "v2", "operatorconditions"),
    Watched(StoreKind.DEPLOYMENT, "apps", "v1", "deployments", {Label.OWNER.value: kopf.PRESENT}),
    Watched(StoreKind.CRD, "apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    Watched(StoreKind.SERVICE_ACCOUNT, "", "v1", "serviceaccounts"),
    Watched(StoreKind.ROLE, "rbac.authorization.k8s.io", "v1", "roles"),
    Watched(StoreKind.ROLE_BINDING, "rbac.authorization.k8s.io", "v1", "rolebindings"),
    Watched(StoreKind.CLUSTER_ROLE, "rbac.authorization.k8s.io", "v1", "clusterroles"),
    Watched(
        StoreKind.CLUSTER_ROLE_BINDING, "rbac.authorization.k8s.io", "v1", "clusterrolebindings"
    ),
    Watched(StoreKind.NAMESPACE, "", "v1", "namespaces"),
    Watched(StoreKind.SUBSCRIPTION, "operators.coreos.com", "v1alpha1", "subscriptions"),
    Watched(StoreKind.INSTALL_PLAN, "operators.coreos.com", "v1alpha1", "installplans"),
    Watched(StoreKind.CATALOG_SOURCE, "operators.coreos.com", "v1alpha1", "catalogsources"),
    # Operator objects, and the component kinds only olm.controllers.operator reads. Like OLM's
    # caches, only objects labelled olm.managed=true (OLM also sees unlabelled Secrets:
    # docs/differences.md); Secrets and ConfigMaps are kept as metadata only.
    Watched(StoreKind.OPERATOR, "operators.coreos.com", "v1", "operators"),
    *(
        Watched(kind, group, "v1", plural, {Label.MANAGED.value: MANAGED_VALUE}, server_side=True)
        for kind, group, plural in (
            (StoreKind.SERVICE, "", "services"),
            (StoreKind.SECRET, "", "secrets"),
            (StoreKind.CONFIG_MAP, "", "configmaps"),
        )
    ),
    # APIServices: one watch of them all (a cluster has a few dozen), filtered here: the
    # olm.managed ones for the Operator controllers, and those labelled as owned by a CSV, whose
    # owner's controller deletes them once that CSV is gone (OLM's syncAPIService).
    Watched(
        StoreKind.API_SERVICE,
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        {Label.MANAGED.value: MANAGED_VALUE},
    ),
    Watched(
        StoreKind.CSV_API_SERVICE,
        "apiregistration.k8s.io",
        "v1",
        "apiservices",
        {Label.OWNER_KIND.value: Kind.CLUSTER_SERVICE_VERSION.value},
    ),
    # Catalog registry pods (olm.catalogsource.registrypod): labelled olm.catalogSource.
    Watched(
        StoreKind.REGISTRY_POD,
        "",
        "v1",
        "pods",
        {CATALOG_SOURCE_LABEL: kopf.PRESENT},
        server_side=True,
    ),
    # The NetworkPolicies of catalog registries (olm.catalogsource.policies), olm.managed ones.
    Watched(
        StoreKind.NETWORK_POLICY,
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        {Label.MANAGED.value: MANAGED_VALUE},
        server_side=True,
    ),
)


def trim(kind: StoreKind, obj: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a watched object (olm.controllers.scope.trim, and Secrets and
    ConfigMaps as metadata only)."""
    return operator.trim(kind, scope_trim(kind, obj))


def unchanged(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """True when the event carries exactly what the store already holds."""
    if old is None or new is None:
        return False
    old_rv = body_meta(old).get("resourceVersion")
    return bool(old_rv) and old_rv == body_meta(new).get("resourceVersion")


class Lister(Protocol):
    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]: ...


def relist(
    store: Store, lister: Lister, watched: Iterable[Watched] = WATCHED
) -> list[tuple[StoreKind, dict[str, Any]]]:
    """List every watched kind again and purge what disappeared during a watch gap (kopf's
    watch resumes or relists without reporting deletions it missed). Returns what was purged."""
    purged: list[tuple[StoreKind, dict[str, Any]]] = []
    for kind in watched:
        before = store.snapshot(kind.kind)
        listed = set(lister.list_keys(kind.path, kind.selector))
        gone = store.retain(kind.kind, before, listed)
        if gone:
            log.info("relist: %d %s object(s) were deleted while unwatched", len(gone), kind.kind)
        purged += [(kind.kind, before[key]) for key in gone]
    return purged


class ListingNotes(Protocol):
    """Told of each listing event (kopf lists a kind again after a watch gap)."""

    def listed(self, kind: StoreKind) -> None: ...


def register(
    registry: kopf.OperatorRegistry,
    store: Store,
    queue: WorkQueue,
    listings: ListingNotes | None = None,
) -> None:
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
        )(_make_handler(watched.kind, store, queue, listings))


# The handlers are coroutines although they never await: kopf runs a plain function in its
# thread pool, one object at a time per free thread, and the initial listing of a big cluster
# (thousands of namespaces and ServiceAccounts) then queues thousands of per-object workers
# behind that pool, which is slow and holds their memory. Theirs is a few dict operations
# under a lock that is never held for long, so running them on the event loop is cheaper.
def _make_indexer(kind: StoreKind, store: Store) -> Callable[..., Awaitable[None]]:
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


def _make_handler(
    kind: StoreKind, store: Store, queue: WorkQueue, listings: ListingNotes | None = None
) -> Callable[..., Awaitable[None]]:
    async def on_event(event: dict[str, Any], **_: Any) -> None:
        # kopf calls event handlers only once every kind's listing is indexed (see above).
        open_barrier(store, queue)
        obj = event.get("object") or {}
        if event.get("type") is None and listings is not None:
            listings.listed(kind)  # a listing: after a gap, what it hid is purged soon
        if event.get("type") == "DELETED":
            namespace, name = body_key(obj)
            old = store.get(kind, namespace, name)
            keys = related_keys(kind, obj, store, old, deleted=True)
            ended = store.forget(kind, obj)
        else:
            old = store.upsert(kind, trim(kind, obj))
            ended = store.renewed(kind, old, obj)
            if unchanged(old, obj):
                return
            keys = related_keys(kind, obj, store, old)
        # Entries of a namespace that ended (their own DELETED events lost in a watch gap):
        # woken as their deletion would have woken them.
        for gone_kind, gone in ended:
            keys += related_keys(gone_kind, gone, store, gone, deleted=True)
        if ended:
            log.info(
                "namespace %s ended: %d cached object(s) of it dropped",
                body_key(obj)[1],
                len(ended),
            )
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
