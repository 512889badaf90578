"""The CatalogSource controller: fetch each catalog, keep it in the catalog cache, and report
`status.connectionState` as OLM does (OLM v0 §5.6).

- `sourceType: grpc` with `spec.address`: read over operator-registry's gRPC API (`olm catalog
  serve`, `opm serve`, ...), again every poll interval;
- `sourceType: configmap` (or `internal`): read the ConfigMap named by `spec.configMap`;
- `spec.image` alone: needs a registry pod, which olm-py does not run yet; said on status.
Every change of a catalog's content wakes the resolution of the namespaces it serves.
"""

from __future__ import annotations

import datetime
import re
import threading
from dataclasses import dataclass
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.catalog.formats import configmap_catalog
from olm.catalog.model import Catalog
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.csv.status import timestamp
from olm.kube.gateway import Conflict, Gateway, GatewayError, NotFound
from olm.registry.client import RegistryClient

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
DEFAULT_POLL_SECONDS = 30.0
GLOBAL_NAMESPACE = "olm"


@dataclass(frozen=True)
class Cached:
    catalog: Catalog
    fingerprint: int
    priority: int


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


def _fingerprint(catalog: Catalog) -> int:
    """What resolution depends on: packages, defaults, channel graphs, bundle versions and
    properties. Cheap next to rendering the whole catalog, which a poll would do every 30 s."""
    return hash(
        tuple(
            (
                package.name,
                package.default_channel,
                tuple(
                    (
                        c.name,
                        tuple(
                            (e.name, e.replaces, tuple(e.skips), e.skip_range) for e in c.entries
                        ),
                    )
                    for c in package.channels.values()
                ),
                tuple((b.name, b.version, len(b.properties)) for b in package.bundles.values()),
            )
            for package in sorted(catalog.packages.values(), key=lambda p: p.name)
        )
    )


def poll_seconds(spec: dict[str, Any]) -> tuple[float, str]:
    """updateStrategy.registryPoll.interval as seconds (a Go duration), and a parse problem."""
    text = str(((spec.get("updateStrategy") or {}).get("registryPoll") or {}).get("interval") or "")
    if not text:
        return DEFAULT_POLL_SECONDS, ""
    parts = re.findall(r"(\d+(?:\.\d+)?)(h|m|s|ms)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return (
            DEFAULT_POLL_SECONDS,
            f"spec.updateStrategy.registryPoll.interval {text!r} is not a duration like 30s or 10m; using 30s",
        )
    scale = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return max(1.0, sum(float(n) * scale[u] for n, u in parts)), ""


class CatalogSourceController:
    kind = "catalogsource"

    def __init__(
        self, store: Store, gateway: Gateway, queue: WorkQueue, cache: CatalogCache
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self.cache = cache

    def _wake(self, namespace: str) -> None:
        spaces = (
            {ns for ns, _ in self.store.keys("subscription")}
            if namespace == GLOBAL_NAMESPACE
            else {namespace}
        )
        for space in spaces:
            self.queue.add(("namespace", "", space))

    def _fetch(self, source: dict[str, Any]) -> tuple[Catalog | None, str, str]:
        """(catalog, connection state, problem)."""
        spec = source.get("spec") or {}
        kind = spec.get("sourceType")
        if kind == "grpc" and spec.get("address"):
            client = RegistryClient(str(spec["address"]), timeout=10)
            try:
                return client.catalog(), "READY", ""
            except Exception as exc:  # any gRPC or decoding failure is the source's state
                return (
                    None,
                    "TRANSIENT_FAILURE",
                    f"cannot read the catalog at {spec['address']}: {exc}",
                )
            finally:
                client.close()
        if kind == "grpc":
            return (
                None,
                "",
                "spec.image needs a registry pod, which olm-py does not run yet: serve the catalog (olm catalog serve or opm serve) and set spec.address",
            )
        if kind in ("configmap", "internal"):
            name = spec.get("configMap")
            if not name:
                return (
                    None,
                    "",
                    "spec.configMap is empty: name the ConfigMap that holds the catalog",
                )
            try:
                document = self.gateway.get(
                    "v1", "ConfigMap", source["metadata"]["namespace"], str(name)
                )
            except NotFound:
                return None, "", f'ConfigMap "{name}" named by spec.configMap does not exist'
            catalog = Catalog()
            configmap_catalog(document, catalog, f"configmap/{name}")
            return catalog, "READY", ""
        return None, "", f"spec.sourceType {kind!r} is not one of grpc, configmap, internal"

    def reconcile(self, namespace: str, name: str) -> float | None:
        source = self.store.get("catalogsource", namespace, name)
        if source is None or source["metadata"].get("deletionTimestamp"):
            if self.cache.drop(namespace, name):
                self._wake(namespace)
            return None
        spec = source.get("spec") or {}
        interval, interval_problem = poll_seconds(spec)
        catalog, state, problem = self._fetch(source)
        now = timestamp(datetime.datetime.now(datetime.UTC))
        if catalog is not None:
            fingerprint = _fingerprint(catalog)
            if self.cache.put(
                namespace, name, Cached(catalog, fingerprint, int(spec.get("priority") or 0))
            ):
                self._wake(namespace)
        elif self.cache.drop(namespace, name):
            self._wake(namespace)
        status = dict(source.get("status") or {})
        wanted: dict[str, Any] = {}
        if spec.get("address"):
            previous = status.get("connectionState") or {}
            connection = {
                "address": spec["address"],
                "lastObservedState": state or "TRANSIENT_FAILURE",
            }
            connection["lastConnect"] = (
                now
                if state == "READY" and previous.get("lastObservedState") != "READY"
                else previous.get("lastConnect", now)
            )
            wanted["connectionState"] = connection
        reason = (
            "SpecInvalidError"
            if problem and not state
            else (
                "RegistryServerError"
                if problem
                else ("InvalidIntervalError" if interval_problem else None)
            )
        )
        wanted["reason"] = reason
        wanted["message"] = problem or interval_problem or None
        if catalog is not None and status.get("latestImageRegistryPoll") is None:
            wanted["latestImageRegistryPoll"] = now
        if any(status.get(k) != v for k, v in wanted.items()):
            try:
                self.gateway.patch_status(
                    CATALOG_SOURCE.api_version, CATALOG_SOURCE.kind.value, namespace, name, wanted
                )
            except (NotFound, Conflict):
                return 1.0
            except GatewayError:
                raise
        return interval
