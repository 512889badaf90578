"""The CatalogSource controller: read each catalog, keep it in the catalog cache, and report
`status.connectionState` as OLM does (OLM v0 §5.6).

snapshot -> `what_to_read` -> read (the only I/O: gRPC or a ConfigMap GET, errors turned into
`Failure`s) -> `olm.catalogsource.decide.decide` -> cache, status, Event.
- `sourceType: grpc` with `spec.address`: read over operator-registry's gRPC API (`olm catalog
  serve`, `opm serve`, ...), again every poll interval;
- `sourceType: configmap` (or `internal`): read the ConfigMap named by `spec.configMap`;
- `sourceType: grpc` with `spec.image` (and no address): the image is pulled in-process
  (olm.controllers.catalogimage: a HEAD per poll, a pull only when the digest changes), with
  the pull secrets named in `spec.secrets`; no registry pod;
ConfigMap and image catalogs are also served over gRPC behind a registry Service, as OLM's
registry pods are, where olm-py can be put behind one (olm.controllers.catalogservice).
With `olm run --registry-image`, a ConfigMap catalog also gets OLM's registry pod, run with
olm-py's image (olm.catalogsource.registrypod, olm.controllers.registrypods), and its Service
selects that pod. Such catalogs also get the two NetworkPolicies OLM keeps beside a registry, put back when
deleted or edited (olm.catalogsource.policies, olm.controllers.catalogpolicies).
Bundles known by image only are unpacked (olm.controllers.catalogimage) when the Subscription
controller asks (`CatalogCache.unpack`), not when the catalog is read.
Every change of a catalog's content wakes the resolution of the namespaces it serves.
With `--trusted-catalogs` (olm.catalogsource.trust), a CatalogSource it does not trust is not
read at all (no connection, no pull, no ConfigMap GET, no registry Service): its status says
why, and it never enters the cache (so neither resolution nor the PackageManifest API sees it).

Invariants: library error text never reaches status (it is logged at debug level); status is
written only when a field differs; the cache is shared with the Subscription controller.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as NotYet
from typing import Any

import grpc

from olm.api import body
from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.api.conditions import utc_now
from olm.api.kinds import KINDS, Kind
from olm.catalog.configmap import configmap_catalog
from olm.catalog.model import Catalog
from olm.catalogsource.decide import (
    Cached,
    Fetched,
    SourcePlan,
    SourceSnapshot,
    decide,
    servable,
)
from olm.catalogsource.failures import Failure, FailureKind, grpc_failure
from olm.catalogsource.source import (
    ReadConfigMap,
    ReadImage,
    ReadRegistry,
    configmap_ownership,
    what_to_read,
)
from olm.catalogsource.trust import CatalogTrust, refusal
from olm.controllers.catalogimage import ImageCatalogs, own_pull_secrets
from olm.controllers.catalogpolicies import keep_policies
from olm.controllers.catalogservice import CatalogServices
from olm.controllers.events import record_event
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.registrypods import RegistryPods
from olm.controllers.store import Store, StoreKind
from olm.image.auth import secret_config
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.metrics.counters import COUNTERS
from olm.registry.client import RegistryClient

log = logging.getLogger("olm.catalogsource")

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
GLOBAL_NAMESPACE = GLOBAL_CATALOG_NAMESPACE  # kept for the importers of this module
REGISTRY_TIMEOUT_SECONDS = 10.0
# The bundle listing of a big catalog (the community corpus: hundreds of bundles with their
# manifests inline) streams for longer than a server takes to answer, more so on a busy
# machine; OLM's connection state follows the gRPC connection, not how long a listing takes.
LISTING_TIMEOUT_SECONDS = 300.0
RETRY_STALE_SECONDS = 1.0
# Registry and image reads run in a small executor of their own: a server that never answers
# holds one of these threads for its timeout, never one of `olm run`'s shared workers. The
# worker that starts a read waits READ_WAIT_SECONDS for it (a healthy one is done by then and
# used at once); otherwise it is freed, and the CatalogSource looks for the result (without
# waiting) every READ_POLL_SECONDS.
READ_THREADS = 4
READ_WAIT_SECONDS = 0.5
READ_POLL_SECONDS = 1.0

__all__ = ["GLOBAL_NAMESPACE", "Cached", "CatalogCache", "CatalogSourceController"]


def _no_unpacking(key: tuple[str, str], image: str) -> float | None:
    return None


class CatalogCache:
    """Catalogs by (namespace, name), shared with the Subscription controller; `unpack` asks
    for a bundle image of a catalog to be unpacked (set by the CatalogSource controller:
    `ImageCatalogs.unpack`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Cached] = {}
        self.unpack: Callable[[tuple[str, str], str], float | None] = _no_unpacking

    def put(self, namespace: str, name: str, entry: Cached) -> bool:
        """Store; True when the content changed."""
        with self._lock:
            old = self._entries.get((namespace, name))
            self._entries[(namespace, name)] = entry
        return old is None or old.fingerprint != entry.fingerprint

    def drop(self, namespace: str, name: str) -> bool:
        with self._lock:
            return self._entries.pop((namespace, name), None) is not None

    def get(self, namespace: str, name: str) -> Cached | None:
        with self._lock:
            return self._entries.get((namespace, name))

    def in_scope(self, namespace: str) -> dict[tuple[str, str], Cached]:
        with self._lock:
            return {k: v for k, v in self._entries.items() if k[0] in (namespace, GLOBAL_NAMESPACE)}


def read_registry(address: str, timeout: float = REGISTRY_TIMEOUT_SECONDS) -> Fetched:
    """The whole catalog at `address`, or why not (the raw error at debug level only)."""
    client = RegistryClient(
        address, timeout=timeout, listing_timeout=max(timeout, LISTING_TIMEOUT_SECONDS)
    )
    try:
        return Fetched(catalog=client.catalog())
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        details = (exc.details() if isinstance(exc, grpc.Call) else "") or ""
        name = code.name if code is not None else "UNKNOWN"
        return Fetched(failure=grpc_failure(name, details, repr(exc), client.last_timeout))
    except Exception as exc:  # a server that answers, but not with a catalog we can decode
        return Fetched(failure=Failure(FailureKind.UNREADABLE, detail=repr(exc)))
    finally:
        client.close()


class Reads:
    """Catalog reads by CatalogSource, at most READ_THREADS at once, in threads of their own
    (not `olm run`'s shared workers). One read runs per CatalogSource at a time; one started
    for another spec (the address or image changed) is abandoned (its thread finishes it, its
    result is dropped)."""

    def __init__(
        self,
        threads: int = READ_THREADS,
        wait: float = READ_WAIT_SECONDS,
        poll: float = READ_POLL_SECONDS,
    ) -> None:
        self.wait = wait
        self.poll = poll
        # Daemon threads (as olm run's workers are: a read stuck on a dead server never holds
        # up the exit), at most `threads` of them reading at once.
        self._slots = threading.BoundedSemaphore(threads)
        self._lock = threading.Lock()
        self._running: dict[tuple[str, str], tuple[object, Future[Fetched]]] = {}

    def result(
        self, key: tuple[str, str], what: object, read: Callable[[], Fetched]
    ) -> Fetched | None:
        """The result of reading `what` for `key`, or None while it is running (ask again).
        A read not running yet is started, and waited for `wait` seconds."""
        wait = 0.0
        with self._lock:
            running = self._running.get(key)
            if running is None or running[0] != what:
                running = (what, self._start(read))
                self._running[key] = running
                wait = self.wait
        try:
            fetched = running[1].result(timeout=wait)
        except NotYet:
            return None
        except BaseException:
            self._collected(key, running)
            raise
        self._collected(key, running)  # the next call starts a new read
        return fetched

    def _start(self, read: Callable[[], Fetched]) -> Future[Fetched]:
        future: Future[Fetched] = Future()

        def work() -> None:
            with self._slots:
                if not future.set_running_or_notify_cancel():
                    return
                try:
                    future.set_result(read())
                except BaseException as exc:  # handed to the reconcile that collects it
                    future.set_exception(exc)

        threading.Thread(target=work, name="catalog-read", daemon=True).start()
        return future

    def _collected(self, key: tuple[str, str], running: tuple[object, Future[Fetched]]) -> None:
        with self._lock:
            if self._running.get(key) is running:
                del self._running[key]

    def forget(self, key: tuple[str, str]) -> None:
        with self._lock:
            self._running.pop(key, None)


class CatalogSourceController:
    kind = WorkKind.CATALOG_SOURCE

    def __init__(
        self,
        store: Store,
        gateway: KubeGateway,
        queue: WorkQueue,
        cache: CatalogCache,
        registry_reader: Callable[[str], Fetched] = read_registry,
        images: ImageCatalogs | None = None,
        reads: Reads | None = None,
        services: CatalogServices | None = None,
        trust: CatalogTrust | None = None,
        pods: RegistryPods | None = None,
    ) -> None:
        self.store = store
        self.trust = trust  # None: every CatalogSource is used, as under OLM
        self.gateway = gateway
        self.queue = queue
        self.cache = cache
        self.registry_reader = registry_reader
        self.images = images or ImageCatalogs()
        self.reads = reads or Reads()
        self.services = services
        self.pods = pods  # None: no registry pods (olm-py serves its catalogs in-process)
        self._said: set[str] = set()  # NetworkPolicy write failures already logged
        # Bundle images are unpacked when a Subscription needs them (not when the catalog is
        # read); an unpack that ends wakes the namespaces the catalog serves.
        self.images.on_unpacked = lambda key: self._wake(key[0])
        cache.unpack = self.images.unpack

    def _wake(self, namespace: str) -> None:
        spaces = (
            {ns for ns, _ in self.store.keys(StoreKind.SUBSCRIPTION)}
            if namespace == GLOBAL_NAMESPACE
            else {namespace}
        )
        for space in spaces:
            self.queue.add((WorkKind.NAMESPACE, "", space))

    def _read_configmap(self, source: dict[str, Any], name: str) -> Fetched:
        namespace = source["metadata"]["namespace"]
        try:
            document = self.gateway.get("v1", "ConfigMap", namespace, name)
        except NotFound:
            return Fetched(failure=Failure(FailureKind.CONFIGMAP_MISSING, detail="404"))
        ownership = configmap_ownership(source, document)
        if ownership is not None:  # the ConfigMap goes with its CatalogSource, as under OLM
            try:
                self.gateway.patch("v1", "ConfigMap", namespace, name, ownership)
                document = self.gateway.get("v1", "ConfigMap", namespace, name)
            except NotFound:
                return Fetched(failure=Failure(FailureKind.CONFIGMAP_MISSING, detail="404"))
            except GatewayError as exc:  # changed meanwhile (409), or no right: next time
                log.info(
                    "ConfigMap %s/%s not given its CatalogSource as owner: %s", namespace, name, exc
                )
        catalog = Catalog()
        try:
            configmap_catalog(document, catalog, f"configmap/{name}")
        except Exception as exc:  # data that is YAML but not in the catalog's shape
            return Fetched(
                failure=Failure(FailureKind.CONFIGMAP_INVALID, detail=repr(exc)),
                configmap=document,
            )
        return Fetched(catalog=catalog, configmap=document)

    def _pull_secrets(self, namespace: str, names: tuple[str, ...]) -> list[dict[str, Any]]:
        """The docker configs of the pull Secrets named by spec.secrets (missing ones skipped:
        a pull that needs them then fails and says which secret to add)."""
        configs = []
        for name in names:
            try:
                secret = self.gateway.get("v1", "Secret", namespace, name)
            except NotFound:
                continue
            except GatewayError as exc:  # e.g. no RBAC to read it: the pull says what it lacks
                log.debug("pull secret %s/%s not read: %s", namespace, name, exc)
                continue
            config = secret_config(secret)
            if config is not None:
                configs.append(config)
        return configs

    def _read_image(self, key: tuple[str, str], read: ReadImage) -> Fetched:
        configs = self._pull_secrets(key[0], read.secrets)
        own = own_pull_secrets(self.gateway, self.images.account)
        if own is not None:  # olm-py's ServiceAccount's imagePullSecrets come after spec.secrets
            configs += self._pull_secrets(*own)
        return self.images.read(key, read.image, configs)

    def fetch(self, source: dict[str, Any]) -> Fetched | None:
        """What the source's spec points at, or None while its read is still running (in
        `self.reads`, off the shared workers)."""
        read = what_to_read(source)
        key = (source["metadata"]["namespace"], source["metadata"]["name"])
        if isinstance(read, ReadRegistry):
            address = read.address
            return self.reads.result(key, read, lambda: self.registry_reader(address))
        if isinstance(read, ReadImage):
            image = read
            return self.reads.result(key, read, lambda: self._read_image(key, image))
        if isinstance(read, ReadConfigMap):
            return self._read_configmap(source, read.name)
        return Fetched()

    def reconcile(self, namespace: str, name: str) -> float | None:
        source = self.store.get(StoreKind.CATALOG_SOURCE, namespace, name)
        live = source is not None and not source["metadata"].get("deletionTimestamp")
        untrusted = refusal(self.trust, source) if source is not None and live else None
        fetched = self.fetch(source) if source is not None and live and not untrusted else Fetched()
        if source is not None and live and not untrusted:
            keep_policies(self.store, self.gateway, source, self._said)
        if fetched is None:
            return self.reads.poll  # still reading: look again soon, the worker is free
        if fetched.catalog is not None:  # what is served now: unpacked bundles go there
            self.images.keep((namespace, name), fetched.catalog)
        pod = False
        if live and not untrusted and self.pods is not None and fetched.configmap is not None:
            assert source is not None  # a ConfigMap catalog: its registry pod serves it
            version = body.meta(fetched.configmap).get("resourceVersion")
            if fetched.catalog is not None and version:
                self.pods.ensure(source, str(version))
                pod = True
        if live and fetched.catalog is not None and self.services is not None:
            assert source is not None
            if isinstance(what_to_read(source), ReadConfigMap | ReadImage) and servable(
                fetched.catalog
            ):
                service = self.services.ensure(source, fetched.catalog, pod=pod)
                fetched = dataclasses.replace(fetched, service=service)
        if not live or untrusted is not None:
            self.reads.forget((namespace, name))
            self.images.forget((namespace, name))
            if self.services is not None:
                self.services.forget((namespace, name))
        if not live:
            COUNTERS.catalog_deleted(namespace, name)  # OLM drops its snapshots counter
        if fetched.failure is not None:
            log.debug(
                "catalog %s/%s: %s %s",
                namespace,
                name,
                fetched.failure.kind,
                fetched.failure.detail,
            )
        snapshot = SourceSnapshot(namespace, name, source, utc_now(), untrusted=untrusted)
        return self._execute(snapshot, decide(snapshot, fetched))

    def _execute(self, snapshot: SourceSnapshot, plan: SourcePlan) -> float | None:
        namespace, name, source = snapshot.namespace, snapshot.name, snapshot.source
        changed = False
        if plan.cache is not None:
            changed = self.cache.put(namespace, name, plan.cache)
        elif plan.drop:
            changed = self.cache.drop(namespace, name)
        if changed:
            self._wake(namespace)
        if source is not None and plan.status is not None:
            try:
                self.gateway.patch_status(
                    CATALOG_SOURCE.api_version,
                    CATALOG_SOURCE.kind.value,
                    namespace,
                    name,
                    plan.status,
                    resource_version=source["metadata"].get("resourceVersion"),
                )
            except NotFound:
                return None
            except Conflict:
                return RETRY_STALE_SECONDS  # decided on a stale snapshot; the watch brings it
            if plan.event is not None:
                self._event(dict(source), plan.event.type, plan.event.reason, plan.event.message)
        return plan.requeue_after

    def _event(self, source: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        record_event(self.gateway, source, event_type, reason, message)
