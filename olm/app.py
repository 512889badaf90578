"""The composition root of `olm run`: settings, clients, store, queue, controllers, kopf.

Invariants: one work queue shared by all controllers (keys are (controller, namespace,
name)); a fixed pool of worker threads; a periodic resync re-enqueues every object.

With leader election (`Operations.leader_elect`), every replica watches and keeps its cache
warm, but only the holder of the Lease reconciles or writes anything (workers, the samples
CatalogSource): a standby's workers wait for leadership. Losing the Lease stops the process
(exit status 1, as controller-runtime does); the Deployment starts it again as a standby.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import kopf

from olm.api.kinds import KINDS, Kind
from olm.apiserver.auth import Authorizer
from olm.apiserver.server import PackageServer
from olm.catalogsource.trust import CatalogTrust, announce
from olm.controllers.catalogservice import CatalogServices
from olm.controllers.catalogsource import GLOBAL_NAMESPACE, CatalogCache, CatalogSourceController
from olm.controllers.csv import CsvController
from olm.controllers.installplan import InstallPlanController
from olm.controllers.operator import controllers as operator_controllers
from olm.controllers.operatorgroup import OperatorGroupController
from olm.controllers.packageserver import PackageIndex, Registration
from olm.controllers.queue import WorkQueue
from olm.controllers.registrypods import RegistryPods
from olm.controllers.resync import Gaps
from olm.controllers.resync import run as resync_run
from olm.controllers.scope import controllers as scope_controllers
from olm.controllers.store import Store, StoreKind
from olm.controllers.subscription import SubscriptionController
from olm.controllers.watch import configure, register, resync_keys
from olm.election.decide import DEFAULT_TIMING, Timing
from olm.installplan.policy import DEFAULT_POLICY, InstallPolicy
from olm.kube.client import api_client
from olm.kube.errors import API_ERRORS
from olm.kube.gateway import Gateway, GatewayError
from olm.kube.lease import LeaderElector, LeaseLock
from olm.metrics.collector import OlmCollector
from olm.metrics.collector import registry as metrics_registry
from olm.metrics.counters import COUNTERS, Counters
from olm.metrics.server import Route, Server, health_routes, metrics_routes
from olm.packages import registration

log = logging.getLogger("olm")
DEFAULT_RESYNC_SECONDS = 300.0
SAMPLES_SOURCE = "samples"
# OLM v0 runs without leader election (one replica per controller); olm-py's Lease is its own.
LEASE_NAME = "olm-py"
DEFAULT_LEASE_NAMESPACE = "olm"
# Exit status of `olm run` when it lost the Lease (the Deployment restarts it as a standby).
EXIT_LEADERSHIP_LOST = 1


def in_pod() -> bool:
    """Whether this process runs as a pod's container (the Downward API names it)."""
    return bool(os.environ.get("POD_NAME") and os.environ.get("POD_NAMESPACE"))


def default_identity() -> str:
    """POD_NAME in a pod (the Downward API), else hostname_pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}_{os.getpid()}"


def default_lease_namespace() -> str:
    return os.environ.get("POD_NAMESPACE") or DEFAULT_LEASE_NAMESPACE


@dataclass(frozen=True)
class Operations:
    """How `olm run` runs as a cluster workload: leader election and the HTTP endpoints.

    Ports of 0 disable an endpoint (the default for `olm run` on a laptop; the chart passes
    --health-port 8081 --metrics-port 8080)."""

    leader_elect: bool = False
    lease_namespace: str = field(default_factory=default_lease_namespace)
    lease_name: str = LEASE_NAME
    identity: str = field(default_factory=default_identity)
    timing: Timing = DEFAULT_TIMING
    health_port: int = 0
    metrics_port: int = 0
    bind_address: str = "0.0.0.0"
    # The PackageManifest API (docs/packagemanifests.md): on by default, as OLM ships
    # packageserver; port 0 picks PACKAGE_SERVER_PORT in a pod, a free loopback port outside.
    package_server: bool = True
    package_server_port: int = 0
    # --trusted-catalogs (docs/catalog-trust.md): None uses every CatalogSource, as OLM does.
    trusted_catalogs: CatalogTrust | None = None
    # --registry-image (docs/catalogs.md, "Registry pods"): ConfigMap catalogs get OLM's
    # registry pod, run with this olm-py image; None serves them in-process only.
    registry_image: str | None = None


class Controller(Protocol):
    kind: str

    def reconcile(self, namespace: str, name: str) -> float | None: ...


def _worker(
    queue: WorkQueue,
    controllers: dict[str, Controller],
    leading: threading.Event | None = None,
    stop: threading.Event | None = None,
    counters: Counters = COUNTERS,
) -> None:
    # A standby's worker takes no work until this process leads (the queue keeps filling).
    while leading is not None and not leading.wait(0.5):
        if stop is not None and stop.is_set():
            return
    while True:
        key = queue.get()
        if key is None:
            return
        assert isinstance(key, tuple)
        kind, namespace, name = (str(part) for part in key)
        result = "success"
        try:
            requeue = controllers[kind].reconcile(namespace, name)
        except API_ERRORS as exc:
            # The API server said no, or did not answer (refused, reset, timed out while it
            # restarts or is stopped): one line, then retry; a traceback is for our own bugs.
            result = "error"
            delay = queue.retry(key)
            log.warning(
                "reconciling %s %s/%s: %s; retrying in %.1fs", kind, namespace, name, exc, delay
            )
        except Exception:
            result = "error"
            delay = queue.retry(key)
            log.exception(
                "reconciling %s %s/%s failed; retrying in %.1fs", kind, namespace, name, delay
            )
        else:
            queue.forget(key)
            if requeue is not None:
                result = "requeue_after"
                queue.add_after(key, requeue)
        finally:
            queue.done(key)
            counters.reconciled(kind, result)


def _previous_port(source: dict[str, Any] | None) -> int:
    """The loopback port a CatalogSource's spec.address names, or 0."""
    address = str(((source or {}).get("spec") or {}).get("address") or "")
    host, _, port = address.rpartition(":")
    return int(port) if host == "127.0.0.1" and port.isdigit() else 0


def _free_port(preferred: int) -> int:
    """`preferred` when it can be bound on 127.0.0.1, else any free port."""
    import socket

    for candidate in (preferred, 0) if preferred else (0,):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return int(probe.getsockname()[1])
    raise OSError("no free port on 127.0.0.1")


def _serve_samples(gateway: Gateway) -> tuple[Any, Callable[[], None]]:
    """Serve the catalogs olm-py ships in-process; return the server, and the step that
    registers them as CatalogSource olm/samples (a write: only the leader runs it)."""
    from olm.catalog.formats import load
    from olm.catalog.samples import CATALOG
    from olm.registry.index import RegistryIndex
    from olm.registry.server import serve

    existing: dict[str, Any] | None = None
    with contextlib.suppress(GatewayError):
        existing = gateway.get(
            KINDS[Kind.CATALOG_SOURCE].api_version,
            Kind.CATALOG_SOURCE.value,
            GLOBAL_NAMESPACE,
            SAMPLES_SOURCE,
        )
    # Keep the port of the last run when it is free, so a restart does not rewrite the
    # CatalogSource (and wake every Subscription that uses it). Replicas in pods of their own
    # all get that port, so a new leader finds the address already right.
    port = _free_port(_previous_port(existing))
    server = serve(RegistryIndex(load(CATALOG.parent)), f"127.0.0.1:{port}")

    def register() -> None:
        _register_samples(gateway, port)

    return server, register


def _register_samples(gateway: Gateway, port: int) -> None:
    existing: dict[str, Any] | None = None
    with contextlib.suppress(GatewayError):
        existing = gateway.get(
            KINDS[Kind.CATALOG_SOURCE].api_version,
            Kind.CATALOG_SOURCE.value,
            GLOBAL_NAMESPACE,
            SAMPLES_SOURCE,
        )
    spec = {
        "sourceType": "grpc",
        "address": f"127.0.0.1:{port}",
        "displayName": "olm-py samples",
        "publisher": "olm-py",
    }
    source = {
        "apiVersion": KINDS[Kind.CATALOG_SOURCE].api_version,
        "kind": Kind.CATALOG_SOURCE.value,
        "metadata": {"name": SAMPLES_SOURCE, "namespace": GLOBAL_NAMESPACE},
        "spec": spec,
    }
    if existing is not None and all(
        (existing.get("spec") or {}).get(k) == v for k, v in spec.items()
    ):
        log.info("serving the samples catalog on 127.0.0.1:%d (unchanged)", port)
        return
    try:
        gateway.apply(source)
        log.info(
            "serving the samples catalog on 127.0.0.1:%d as CatalogSource %s/%s",
            port,
            GLOBAL_NAMESPACE,
            SAMPLES_SOURCE,
        )
    except GatewayError as exc:
        log.warning(
            "could not register the samples CatalogSource in namespace %s (%s); is it installed?",
            GLOBAL_NAMESPACE,
            exc,
        )


def _cached_objects(store: Store) -> Callable[[], dict[str, list[dict[str, Any]]]]:
    def objects() -> dict[str, list[dict[str, Any]]]:
        return {
            kind: store.items(kind)
            for kind in (
                StoreKind.CSV,
                StoreKind.SUBSCRIPTION,
                StoreKind.INSTALL_PLAN,
                StoreKind.CATALOG_SOURCE,
            )
        }

    return objects


class ListenError(RuntimeError):
    """A health or metrics port cannot be listened on (in use, or a bad address)."""


def _server(ops: Operations, port: int, routes: dict[str, Route], flag: str) -> Server:
    try:
        return Server(ops.bind_address, port, routes)
    except OSError as exc:
        raise ListenError(
            f"cannot listen on {ops.bind_address}:{port} ({exc.strerror or exc}); "
            f"choose another {flag} (0 turns it off) or --bind-address"
        ) from exc


def _servers(ops: Operations, store: Store, leading: Callable[[], bool]) -> list[Server]:
    servers: list[Server] = []
    if ops.health_port:
        routes = health_routes(store.synced.is_set)
        servers.append(_server(ops, ops.health_port, routes, "--health-port"))
        log.info("serving /healthz and /readyz on %s:%d", ops.bind_address, ops.health_port)
    if ops.metrics_port:
        collector = OlmCollector(
            _cached_objects(store),
            COUNTERS,
            leading,
            lease_name=ops.lease_name if ops.leader_elect else None,
        )
        routes = metrics_routes(metrics_registry(collector))
        try:
            servers.append(_server(ops, ops.metrics_port, routes, "--metrics-port"))
        except ListenError:
            for server in servers:
                server.httpd.server_close()
            raise
        log.info("serving /metrics on %s:%d", ops.bind_address, ops.metrics_port)
    return [server.start() for server in servers]


def _package_server(
    ops: Operations, store: Store, cache: CatalogCache, gateway: Gateway, leading: threading.Event
) -> tuple[PackageServer, Registration]:
    """The PackageManifest API's server (listening already) and its registration."""
    pod = in_pod()
    host = ops.bind_address if pod else "127.0.0.1"
    port = ops.package_server_port or (registration.PORT if pod else 0)
    namespace = os.environ.get("POD_NAMESPACE", "") if pod else ""
    index = PackageIndex(store, cache)
    holder: list[Registration] = []
    authorizer = Authorizer(lambda review: gateway.create(review).get("status") or {})
    server = PackageServer(index, authorizer, lambda: holder[0].auth_config(), host, port)
    try:
        server.start()
    except OSError as exc:
        raise ListenError(
            f"cannot listen on {host}:{port} for the PackageManifest API ({exc.strerror or exc}); "
            "choose another --package-server-port or turn it off with --no-package-server"
        ) from exc
    holder.append(
        Registration(gateway, server, namespace or DEFAULT_LEASE_NAMESPACE, pod, leading.is_set)
    )
    log.info("serving the PackageManifest API on %s:%d", host, server.port)
    return server, holder[0]


def run(
    kubeconfig: str | None = None,
    *,
    workers: int = 4,
    resync: float = DEFAULT_RESYNC_SECONDS,
    stop: threading.Event | None = None,
    ready: Callable[[], Any] | None = None,
    samples: bool = True,
    ops: Operations | None = None,
    policy: InstallPolicy = DEFAULT_POLICY,
) -> int:
    """Run the controllers until SIGTERM/SIGINT (or `stop` is set); the exit status (0, or
    EXIT_LEADERSHIP_LOST)."""
    ops = ops or Operations()
    if kubeconfig:
        os.environ["KUBECONFIG"] = kubeconfig
    logging.getLogger("kopf").setLevel(max(logging.WARNING, logging.getLogger().level))
    stop = stop or threading.Event()
    api = api_client(kubeconfig)
    gateway = Gateway(api)
    # Bulk work (copies, copied RBAC, labels) leaves one worker to installs (queue.py lanes).
    store, queue, cache = Store(), WorkQueue(bulk_limit=max(1, workers - 1)), CatalogCache()
    catalog_services = CatalogServices(gateway, in_pod())
    controllers: dict[str, Controller] = {
        c.kind: c
        for c in (
            CsvController(store, gateway, queue),
            OperatorGroupController(store, gateway, queue),
            CatalogSourceController(
                store,
                gateway,
                queue,
                cache,
                services=catalog_services,
                trust=ops.trusted_catalogs,
                pods=RegistryPods(store, gateway, ops.registry_image)
                if ops.registry_image
                else None,
            ),
            SubscriptionController(store, gateway, queue, cache, trust=ops.trusted_catalogs),
            InstallPlanController(store, gateway, queue, policy),
            *scope_controllers(store, gateway, queue),
            *operator_controllers(store, gateway, queue),
        )
    }
    if ops.trusted_catalogs is not None:
        said, warning = announce(ops.trusted_catalogs, GLOBAL_NAMESPACE if samples else None)
        log.info(said)
        if warning:
            log.warning(warning)
    leading = threading.Event()
    lost = threading.Event()
    servers = _servers(ops, store, leading.is_set)  # first: a busy port fails before anything
    samples_server, register_samples = _serve_samples(gateway) if samples else (None, None)
    package_server, package_registration = (
        _package_server(ops, store, cache, gateway, leading) if ops.package_server else (None, None)
    )
    elector: LeaderElector | None = None
    if ops.leader_elect:
        elector = LeaderElector(
            LeaseLock(api, ops.lease_namespace, ops.lease_name), ops.identity, ops.timing
        )
    registry = kopf.OperatorRegistry()
    gaps = Gaps(store)
    register(registry, store, queue, gaps)
    settings = kopf.OperatorSettings()
    configure(settings)

    def start_leading() -> None:
        if register_samples is not None:
            register_samples()
        if store.synced.is_set():  # a standby's cache is warm: wake everything once
            for key in resync_keys(store):
                queue.add(key)
        leading.set()

    def lose_leadership() -> None:
        leading.clear()
        lost.set()
        queue.close()  # no worker takes another key
        stop.set()

    threads = [
        threading.Thread(
            target=_worker,
            args=(queue, controllers, leading, stop),
            daemon=True,
            name=f"worker-{i}",
        )
        for i in range(workers)
    ]
    threads.append(
        threading.Thread(
            target=resync_run,
            args=(queue, store, gateway, resync, stop, gaps),
            daemon=True,
            name="resync",
        )
    )
    if elector is not None:
        threads.append(
            threading.Thread(
                target=elector.run,
                args=(stop, start_leading, lose_leadership),
                daemon=True,
                name="leader-election",
            )
        )
    if package_registration is not None:
        threads.append(
            threading.Thread(
                target=package_registration.run,
                args=(stop,),
                daemon=True,
                name="packageserver-registration",
            )
        )
    for thread in threads:
        thread.start()
    if elector is None:
        start_leading()
    log.info("olm-py controllers started (%d workers)", workers)
    started = time.monotonic()
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(
            kopf.operator(
                registry=registry,
                settings=settings,
                clusterwide=True,
                standalone=True,
                stop_flag=stop,
            )
        )
    finally:
        # kopf waits on `stop` in an executor thread: set it before that executor is joined.
        stop.set()
        loop.run_until_complete(loop.shutdown_default_executor())
        loop.close()
        if samples_server is not None:
            samples_server.stop(grace=1)
        catalog_services.stop()
        queue.close()
        for thread in threads:
            thread.join(timeout=10)
        # Unregister while still leading: once the Lease is released a standby may register
        # its own bridge, which must not be taken away by this replica.
        if package_registration is not None and not lost.is_set():
            package_registration.unregister()
        if elector is not None and not lost.is_set():
            elector.release()  # the workers are done: a standby may lead right away
        for server in servers:
            server.stop()
        if package_server is not None:
            package_server.stop()
        log.info("olm-py controllers stopped after %.0fs", time.monotonic() - started)
    if lost.is_set():
        log.error(
            "exiting: this replica no longer holds Lease %s/%s", ops.lease_namespace, ops.lease_name
        )
        return EXIT_LEADERSHIP_LOST
    return 0
