"""The PackageManifest API inside `olm run`: the catalogs it answers from, and its
registration with the cluster (docs/packagemanifests.md).

- `PackageIndex`: the manifests of every ready catalog (a CatalogSource whose
  `connectionState` is READY, or that has none, as a ConfigMap catalog) built from the catalog
  cache the Subscription controller resolves from — no second copy, no second reader. A
  catalog's manifests are rebuilt only when its content (fingerprint) or its CatalogSource
  (resourceVersion) changed; `snapshot` hands out a version that changes with them (watches).
- `Registration`: a loop of its own (not the work queue: it must also run on a standby, which
  serves requests too). Every replica reads the request-header CA and the serving Secret and
  serves with them; only the leader issues or rotates the certificate and writes the Secret,
  the APIService and (on the host) the Service. Out of a pod, olm-py registers only when the
  local cluster offers its host bridge (otherwise the API server could not reach it, and an
  unreachable APIService would break discovery for every client); it then removes what it
  registered when it stops.

Invariants: nothing is written when the objects are as rendered; a failure is logged once per
distinct message and retried; the Secret's key is never logged.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE, ConnectionState
from olm.api.conditions import utc_now
from olm.api.devbridge import ADVERTISEMENT_NAME, ADVERTISEMENT_NAMESPACE
from olm.apiserver.auth import AUTH_CONFIGMAP, AUTH_CONFIGMAP_NAMESPACE, RequestHeaderConfig
from olm.apiserver.server import PackageServer
from olm.controllers.catalogsource import CatalogCache
from olm.controllers.store import Store, StoreKind
from olm.install import certs
from olm.installplan.objects import contains
from olm.kube.errors import API_ERRORS, NotFound
from olm.kube.protocol import KubeGateway
from olm.packages import registration
from olm.packages.manifest import package_manifests
from olm.packages.query import Visible

log = logging.getLogger("olm.packageserver")
FAST_SECONDS = 2.0  # until registered and Available
SLOW_SECONDS = 30.0  # afterwards: rotation and drift


@dataclass(frozen=True)
class _Built:
    stamp: tuple[int, str]
    manifests: Sequence[dict[str, Any]]


class PackageIndex:
    """The ready catalogs' PackageManifests, rebuilt only when a catalog changed."""

    global_namespace = GLOBAL_CATALOG_NAMESPACE

    def __init__(self, store: Store, cache: CatalogCache) -> None:
        self.store, self.cache = store, cache
        self._lock = threading.Lock()
        self._built: dict[tuple[str, str], _Built] = {}
        self._stamps: tuple[Any, ...] = ()
        self._version = 0

    def snapshot(self) -> tuple[int, list[Visible]]:
        with self._lock:
            visible, stamps = [], []
            for source in self.store.items(StoreKind.CATALOG_SOURCE):
                meta = body.meta(source)
                key = (meta.get("namespace") or "", meta.get("name") or "")
                state = ((source.get("status") or {}).get("connectionState") or {}).get(
                    "lastObservedState"
                )
                cached = self.cache.get(*key)
                if cached is None or state not in (None, ConnectionState.READY.value):
                    continue
                stamp = (cached.fingerprint, str(meta.get("resourceVersion", "")))
                built = self._built.get(key)
                if built is None or built.stamp != stamp:
                    built = _Built(stamp, package_manifests(source, cached.catalog))
                    self._built[key] = built
                visible.append(Visible(key[0], key[1], built.manifests))
                stamps.append((key, stamp))
            for key in set(self._built) - {k for k, _ in stamps}:
                del self._built[key]
            current = tuple(sorted(stamps))
            if current != self._stamps:
                self._stamps = current
                self._version += 1
            return self._version, visible


class Registration:
    """Certificates and registration of the PackageManifest API (see the module docstring)."""

    def __init__(
        self,
        gateway: KubeGateway,
        server: PackageServer,
        namespace: str,
        in_pod: bool,
        leading: Callable[[], bool],
        settings: certs.CertSettings | None = None,
    ) -> None:
        self.gateway, self.server, self.namespace = gateway, server, namespace
        self.in_pod, self.leading = in_pod, leading
        self.settings = settings or certs.CertSettings.from_env()
        self.auth = RequestHeaderConfig()
        self.registered = False  # by this process, on the host: removed on stop
        self._serving: bytes = b""
        self._said: set[str] = set()

    def auth_config(self) -> RequestHeaderConfig:
        return self.auth

    def _say(self, level: int, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            log.log(level, "%s", message)

    def _get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Any:
        try:
            return self.gateway.get(api_version, kind, namespace, name)
        except NotFound:
            return None

    def _material(self, now: datetime.datetime) -> certs.ServingMaterial | None:
        found = self._get("v1", "Secret", self.namespace, registration.SECRET) or {}
        data = found.get("data") or {}
        material = certs.read(
            certs.decode_secret_data(data, registration.CA_KEY),
            certs.decode_secret_data(data, "tls.crt"),
            certs.decode_secret_data(data, "tls.key"),
            certs.service_hosts(registration.SERVICE, self.namespace),
            self.settings,
        )
        if certs.reusable(material, now) is not None or not self.leading():
            return material
        material = certs.issue(
            certs.service_hosts(registration.SERVICE, self.namespace), now, self.settings
        )
        self.gateway.apply(registration.secret(self.namespace, material))
        log.info(
            "issued the PackageManifest API's serving certificate (Secret %s/%s, valid until %s)",
            self.namespace,
            registration.SECRET,
            material.not_after.isoformat(),
        )
        return material

    def step(self, now: datetime.datetime) -> float:
        """One pass; the seconds until the next."""
        auth = self._get("v1", "ConfigMap", AUTH_CONFIGMAP_NAMESPACE, AUTH_CONFIGMAP)
        self.auth = RequestHeaderConfig.from_configmap((auth or {}).get("data") or {})
        if not self.auth.ca_pem:
            self._say(
                logging.WARNING,
                "not serving PackageManifests yet: ConfigMap kube-system/"
                f"{AUTH_CONFIGMAP} has no requestheader-client-ca-file (start the "
                "kube-apiserver with --requestheader-client-ca-file and --proxy-client-cert-file)",
            )
            return SLOW_SECONDS
        self.server.trust_proxy(self.auth)
        if not self.in_pod and not self._get(
            "v1", "ConfigMap", ADVERTISEMENT_NAMESPACE, ADVERTISEMENT_NAME
        ):
            self._say(
                logging.INFO,
                "PackageManifest API not registered: olm run is outside the cluster, where the "
                "API server cannot reach it (run olm-py in the cluster with the chart, or on the "
                "local cluster of `olm dev up`; --no-package-server turns this off)",
            )
            return SLOW_SECONDS
        material = self._material(now)
        if material is None:
            return FAST_SECONDS  # the leader has not written the Secret yet
        if material.cert_pem != self._serving:
            self.server.reload(material.cert_pem, material.key_pem)
            self._serving = material.cert_pem
        if not self.leading():
            return SLOW_SECONDS
        if not self.in_pod:
            self._ensure(registration.bridged_service(self.namespace, self.server.port))
            self.registered = True
        found = self._ensure(registration.apiservice(self.namespace, material.ca_pem))
        ok, why = registration.available(found)
        if ok:
            self._say(
                logging.INFO,
                f"serving PackageManifests: APIService {registration.APISERVICE} is Available",
            )
            return SLOW_SECONDS
        self._say(logging.INFO, f"waiting for APIService {registration.APISERVICE}: {why}")
        return FAST_SECONDS

    def _ensure(self, wanted: dict[str, Any]) -> dict[str, Any]:
        """The object as the cluster has it, applied first unless it already is as wanted."""
        meta = wanted["metadata"]
        found = self._get(wanted["apiVersion"], wanted["kind"], meta.get("namespace"), meta["name"])
        if found is not None and contains(found, wanted):
            return dict(found)
        return self.gateway.apply(wanted)

    def run(self, stop: threading.Event) -> None:
        delay = 0.0
        while not stop.wait(delay):
            try:
                delay = self.step(utc_now())
            except API_ERRORS as exc:
                # A refusal, or no answer while the API server restarts: one line, retried;
                # a traceback is for our own bugs.
                self._say(logging.WARNING, f"registering the PackageManifest API: {exc}")
                delay = FAST_SECONDS
            except Exception:
                log.exception("registering the PackageManifest API failed; retrying")
                delay = SLOW_SECONDS

    def unregister(self) -> None:
        """On a graceful stop of olm run on the host: take the registration away with us,
        unless another `olm run` has bridged the Service to itself since (it is serving now)."""
        if not self.registered:
            return
        ours = registration.bridged_service(self.namespace, self.server.port)
        try:
            found = self._get("v1", "Service", self.namespace, registration.SERVICE)
        except API_ERRORS as exc:
            log.warning("not removing the PackageManifest API registration: %s", exc)
            return
        if found is not None and not contains(found, {"metadata": ours["metadata"]}):
            log.info(
                "leaving the PackageManifest API registered: Service %s/%s now leads to "
                "another olm run",
                self.namespace,
                registration.SERVICE,
            )
            return
        for api_version, kind, namespace, name in (
            ("apiregistration.k8s.io/v1", "APIService", None, registration.APISERVICE),
            ("v1", "Service", self.namespace, registration.SERVICE),
        ):
            try:
                self.gateway.delete(api_version, kind, namespace, name)
            except API_ERRORS as exc:
                log.warning("removing %s %s: %s", kind, name, exc)
