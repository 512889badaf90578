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
Every change of a catalog's content wakes the resolution of the namespaces it serves.

Invariants: library error text never reaches status (it is logged at debug level); status is
written only when a field differs; the cache is shared with the Subscription controller.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable
from typing import Any

import grpc

from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.api.kinds import KINDS, Kind
from olm.catalog.formats import configmap_catalog
from olm.catalog.model import Catalog
from olm.catalogsource.decide import Cached, Fetched, SourcePlan, SourceSnapshot, decide
from olm.catalogsource.failures import Failure, FailureKind, grpc_failure
from olm.catalogsource.source import ReadConfigMap, ReadImage, ReadRegistry, what_to_read
from olm.controllers.catalogimage import ImageCatalogs
from olm.controllers.events import record_event
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.image.auth import secret_config
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.metrics.counters import COUNTERS
from olm.registry.client import RegistryClient

log = logging.getLogger("olm.catalogsource")

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
GLOBAL_NAMESPACE = GLOBAL_CATALOG_NAMESPACE  # kept for the importers of this module
REGISTRY_TIMEOUT_SECONDS = 10.0
RETRY_STALE_SECONDS = 1.0

__all__ = ["GLOBAL_NAMESPACE", "Cached", "CatalogCache", "CatalogSourceController"]


class CatalogCache:
    """Catalogs by (namespace, name), shared with the Subscription controller."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str], Cached] = {}

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
    client = RegistryClient(address, timeout=timeout)
    try:
        return Fetched(catalog=client.catalog())
    except grpc.RpcError as exc:
        code = exc.code() if isinstance(exc, grpc.Call) else None
        details = (exc.details() if isinstance(exc, grpc.Call) else "") or ""
        name = code.name if code is not None else "UNKNOWN"
        return Fetched(failure=grpc_failure(name, details, repr(exc), timeout))
    except Exception as exc:  # a server that answers, but not with a catalog we can decode
        return Fetched(failure=Failure(FailureKind.UNREADABLE, detail=repr(exc)))
    finally:
        client.close()


class CatalogSourceController:
    kind = "catalogsource"

    def __init__(
        self,
        store: Store,
        gateway: KubeGateway,
        queue: WorkQueue,
        cache: CatalogCache,
        registry_reader: Callable[[str], Fetched] = read_registry,
        images: ImageCatalogs | None = None,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self.cache = cache
        self.registry_reader = registry_reader
        self.images = images or ImageCatalogs()

    def _wake(self, namespace: str) -> None:
        spaces = (
            {ns for ns, _ in self.store.keys("subscription")}
            if namespace == GLOBAL_NAMESPACE
            else {namespace}
        )
        for space in spaces:
            self.queue.add(("namespace", "", space))

    def _read_configmap(self, namespace: str, name: str) -> Fetched:
        try:
            document = self.gateway.get("v1", "ConfigMap", namespace, name)
        except NotFound:
            return Fetched(failure=Failure(FailureKind.CONFIGMAP_MISSING, detail="404"))
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

    def fetch(self, source: dict[str, Any]) -> Fetched:
        read = what_to_read(source)
        if isinstance(read, ReadRegistry):
            return self.registry_reader(read.address)
        if isinstance(read, ReadImage):
            namespace, name = source["metadata"]["namespace"], source["metadata"]["name"]
            configs = self._pull_secrets(namespace, read.secrets)
            return self.images.read((namespace, name), read.image, configs)
        if isinstance(read, ReadConfigMap):
            return self._read_configmap(source["metadata"]["namespace"], read.name)
        return Fetched()

    def reconcile(self, namespace: str, name: str) -> float | None:
        source = self.store.get("catalogsource", namespace, name)
        live = source is not None and not source["metadata"].get("deletionTimestamp")
        fetched = self.fetch(source) if source is not None and live else Fetched()
        if not live:
            self.images.forget((namespace, name))
            COUNTERS.catalog_deleted(namespace, name)  # OLM drops its snapshots counter
        if fetched.failure is not None:
            log.debug(
                "catalog %s/%s: %s %s",
                namespace,
                name,
                fetched.failure.kind,
                fetched.failure.detail,
            )
        snapshot = SourceSnapshot(namespace, name, source, datetime.datetime.now(datetime.UTC))
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
