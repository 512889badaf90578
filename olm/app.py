"""The composition root of `olm run`: settings, clients, store, queue, controllers, kopf.

Invariants: one work queue shared by all controllers (keys are (controller, namespace,
name)); a fixed pool of worker threads; a periodic resync re-enqueues every object.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

import kopf

from olm.api.kinds import KINDS, Kind
from olm.controllers.catalogsource import GLOBAL_NAMESPACE, CatalogCache, CatalogSourceController
from olm.controllers.csv import CsvController
from olm.controllers.installplan import InstallPlanController
from olm.controllers.operatorgroup import OperatorGroupController
from olm.controllers.queue import WorkQueue
from olm.controllers.scope import controllers as scope_controllers
from olm.controllers.store import Store
from olm.controllers.subscription import SubscriptionController
from olm.controllers.watch import configure, register, relist, resync_keys
from olm.kube.client import api_client
from olm.kube.gateway import Gateway, GatewayError

log = logging.getLogger("olm")
DEFAULT_RESYNC_SECONDS = 300.0
SAMPLES_SOURCE = "samples"


class Controller(Protocol):
    kind: str

    def reconcile(self, namespace: str, name: str) -> float | None: ...


def _worker(queue: WorkQueue, controllers: dict[str, Controller]) -> None:
    while True:
        key = queue.get()
        if key is None:
            return
        assert isinstance(key, tuple)
        kind, namespace, name = (str(part) for part in key)
        try:
            requeue = controllers[kind].reconcile(namespace, name)
        except GatewayError as exc:  # the API server said no: one line, then retry
            delay = queue.retry(key)
            log.warning(
                "reconciling %s %s/%s: %s; retrying in %.1fs", kind, namespace, name, exc, delay
            )
        except Exception:
            delay = queue.retry(key)
            log.exception(
                "reconciling %s %s/%s failed; retrying in %.1fs", kind, namespace, name, delay
            )
        else:
            queue.forget(key)
            if requeue is not None:
                queue.add_after(key, requeue)
        finally:
            queue.done(key)


def _resync(
    queue: WorkQueue, store: Store, gateway: Gateway, every: float, stop: threading.Event
) -> None:
    """Every `every` seconds: relist (purging what a watch gap hid), then wake everything."""
    while not stop.wait(every):
        if not store.synced.is_set():
            continue  # the barrier's own full wake-up comes first
        try:
            relist(store, gateway)
        except GatewayError as exc:
            log.warning("relist failed (%s); the next resync tries again", exc)
        for key in resync_keys(store):
            queue.add(key)


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


def _serve_samples(gateway: Gateway) -> Any:
    """Serve the catalogs olm-py ships in-process; register them as CatalogSource olm/samples."""
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
    # CatalogSource (and wake every Subscription that uses it).
    port = _free_port(_previous_port(existing))
    server = serve(RegistryIndex(load(CATALOG.parent)), f"127.0.0.1:{port}")
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
        return server
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
    return server


def run(
    kubeconfig: str | None = None,
    *,
    workers: int = 4,
    resync: float = DEFAULT_RESYNC_SECONDS,
    stop: threading.Event | None = None,
    ready: Callable[[], Any] | None = None,
    samples: bool = True,
) -> None:
    """Run the controllers until SIGTERM/SIGINT (or `stop` is set)."""
    if kubeconfig:
        os.environ["KUBECONFIG"] = kubeconfig
    logging.getLogger("kopf").setLevel(logging.WARNING)
    stop = stop or threading.Event()
    gateway = Gateway(api_client(kubeconfig))
    store, queue, cache = Store(), WorkQueue(), CatalogCache()
    controllers: dict[str, Controller] = {
        c.kind: c
        for c in (
            CsvController(store, gateway, queue),
            OperatorGroupController(store, gateway, queue),
            CatalogSourceController(store, gateway, queue, cache),
            SubscriptionController(store, gateway, queue, cache),
            InstallPlanController(store, gateway, queue),
            *scope_controllers(store, gateway, queue),
        )
    }
    samples_server = _serve_samples(gateway) if samples else None
    registry = kopf.OperatorRegistry()
    register(registry, store, queue)
    settings = kopf.OperatorSettings()
    configure(settings)
    threads = [
        threading.Thread(target=_worker, args=(queue, controllers), daemon=True, name=f"worker-{i}")
        for i in range(workers)
    ]
    threads.append(
        threading.Thread(
            target=_resync, args=(queue, store, gateway, resync, stop), daemon=True, name="resync"
        )
    )
    for thread in threads:
        thread.start()
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
        queue.close()
        for thread in threads:
            thread.join(timeout=10)
        log.info("olm-py controllers stopped after %.0fs", time.monotonic() - started)
