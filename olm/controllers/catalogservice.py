"""Registry services: the catalogs olm-py reads in-process, served as OLM's registry pods serve
them, so `status.registryService` names an address that answers.

OLM runs a registry pod per ConfigMap or image CatalogSource and a Service in front of it, and
reports both on the CatalogSource (`registryService`, a `connectionState` at
`<service>.<namespace>.svc:50051`). olm-py reads those catalogs in its own process, so it has no
pod; tools and tests that wait for `registryService` (OLM's own e2e suite waits for it before
every catalog story) would wait for ever. Where the API server can reach olm-py, olm-py serves
each such catalog over operator-registry's gRPC API (olm.registry.server: the Registry service
and gRPC health) on a loopback port of its own, and writes the Service, as OLM names it, in the
catalog's namespace:
- named after the CatalogSource (dots made dashes), labelled `olm.catalogSource: <name>`,
  owned by the CatalogSource (the garbage collector removes it with the catalog), one port
  `grpc` 50051;
- with no selector and the local cluster's host-bridge annotation, which gives it an endpoint
  that relays to olm-py's port (docs/pod-network.md, "Host bridges").

With registry pods on (olm.controllers.registrypods), a ConfigMap catalog's Service instead
selects its registry pod (`olm.catalogSource: <name>`), with no annotation, anywhere; olm-py
then serves nothing for it itself.

Invariants:
- only `olm run` on the host of a local cluster that offers host bridges serves (in a pod, or
  beside any other cluster, there is no way to put olm-py behind the Service: `ensure` returns
  None and the CatalogSource has no registryService, as before), registry pods aside;
- one server per CatalogSource; a new catalog content swaps the index it answers from without
  a restart, so an address once written keeps answering; `forget` stops it;
- the Service is written only when it differs from what it should be (one GET per read).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import grpc

from olm.api import body
from olm.api.catalogsource import (
    CATALOG_SOURCE_LABEL,
    REGISTRY_PORT,
    REGISTRY_PORT_NAME,
    registry_service_name,
)
from olm.api.devbridge import ADVERTISEMENT_NAME, ADVERTISEMENT_NAMESPACE, HOST_BRIDGE_ANNOTATION
from olm.api.kinds import KINDS, Kind
from olm.api.views import owner_reference
from olm.catalog.model import Catalog
from olm.installplan.objects import contains
from olm.kube.errors import GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.registry.index import RegistryIndex
from olm.registry.server import RegistryServicer, serve_on

log = logging.getLogger("olm.catalogservice")

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
LOOPBACK = "127.0.0.1"
# Whether the cluster offers host bridges is asked again after this long.
BRIDGE_CHECK_SECONDS = 30.0
SERVER_THREADS = 2


def service_body(source: Mapping[str, Any], host_port: int | None) -> dict[str, Any]:
    """The registry Service of a CatalogSource, bridged to olm-py's `host_port`; None: in
    front of the catalog's registry pod (olm.catalogsource.registrypod), as OLM's."""
    meta = body.meta(source)
    name = str(meta.get("name", ""))
    service: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": registry_service_name(name),
            "namespace": meta.get("namespace"),
            "labels": {CATALOG_SOURCE_LABEL: name},
            "annotations": {HOST_BRIDGE_ANNOTATION: json.dumps({str(REGISTRY_PORT): host_port})},
            "ownerReferences": [owner_reference(source, kind=CATALOG_SOURCE)],
        },
        "spec": {
            "ports": [
                {
                    "name": REGISTRY_PORT_NAME,
                    "port": REGISTRY_PORT,
                    "targetPort": REGISTRY_PORT,
                    "protocol": "TCP",
                }
            ]
        },
    }
    if host_port is None:
        service["metadata"].pop("annotations")
        service["spec"]["selector"] = {CATALOG_SOURCE_LABEL: name}
    return service


@dataclass
class _Served:
    server: grpc.Server
    servicer: RegistryServicer
    port: int
    catalog: Catalog


class CatalogServices:
    """The gRPC servers and Services of the catalogs olm-py serves (see the module docstring)."""

    def __init__(self, gateway: KubeGateway, in_pod: bool) -> None:
        self.gateway, self.in_pod = gateway, in_pod
        self._lock = threading.Lock()
        self._served: dict[tuple[str, str], _Served] = {}
        self._bridges: tuple[float, bool] | None = None
        self._said: set[str] = set()

    def _bridged(self) -> bool:
        """Whether the cluster offers host bridges (asked at most every BRIDGE_CHECK_SECONDS)."""
        if self.in_pod:
            return False
        now = time.monotonic()
        if self._bridges is not None and now - self._bridges[0] < BRIDGE_CHECK_SECONDS:
            return self._bridges[1]
        try:
            self.gateway.get("v1", "ConfigMap", ADVERTISEMENT_NAMESPACE, ADVERTISEMENT_NAME)
            offered = True
        except NotFound:
            offered = False
        except GatewayError as exc:
            log.debug("cannot tell whether the cluster offers host bridges: %s", exc)
            return False
        self._bridges = (now, offered)
        return offered

    def _server(self, key: tuple[str, str], catalog: Catalog) -> _Served:
        with self._lock:
            served = self._served.get(key)
            if served is None:
                servicer = RegistryServicer(RegistryIndex(catalog))
                server, port = serve_on(servicer, f"{LOOPBACK}:0", workers=SERVER_THREADS)
                served = _Served(server, servicer, port, catalog)
                self._served[key] = served
                log.info("serving catalog %s/%s over gRPC on %s:%d", *key, LOOPBACK, port)
            elif served.catalog is not catalog:
                served.servicer.index = RegistryIndex(catalog)
                served.catalog = catalog
            return served

    def ensure(self, source: Mapping[str, Any], catalog: Catalog, pod: bool = False) -> str | None:
        """Serve `catalog` for `source` behind its registry Service: the Service's name, or
        None when olm-py cannot be put behind a Service here (or writing it failed). `pod`:
        the catalog's registry pod serves it; the Service selects that pod instead."""
        if not pod and not self._bridged():
            return None
        meta = body.meta(source)
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        if pod:
            self.forget(key)  # served by its pod, not by olm-py
        wanted = service_body(source, None if pod else self._server(key, catalog).port)
        name = wanted["metadata"]["name"]
        try:
            try:
                found = self.gateway.get("v1", "Service", key[0], name)
            except NotFound:
                found = None
            if found is None or not contains(found, wanted):
                self.gateway.apply(wanted)
        except GatewayError as exc:
            said = f"registry Service {key[0]}/{name} of catalog {key[1]} not written: {exc}"
            if said not in self._said:  # once per cause, not at every read of the catalog
                self._said.add(said)
                log.warning("%s", said)
            return None
        return str(name)

    def forget(self, key: tuple[str, str]) -> None:
        """The CatalogSource is gone (its Service goes with it): stop serving it."""
        with self._lock:
            served = self._served.pop(key, None)
        if served is not None:
            served.server.stop(grace=1)
            log.info("stopped serving catalog %s/%s over gRPC", *key)

    def stop(self) -> None:
        with self._lock:
            served, self._served = list(self._served.values()), {}
        for item in served:
            item.server.stop(grace=1)
