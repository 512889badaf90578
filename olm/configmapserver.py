"""`olm configmap-server`: what an olm-py registry pod runs (olm.catalogsource.registrypod), in
OLM's configmap-server's place: serve a ConfigMap catalog over operator-registry's gRPC API.

It reads the ConfigMap once, as the pod's ServiceAccount (the registry pod's Role grants `get`
on that one ConfigMap), and serves its packages (the Registry service and gRPC health) on
`$POD_IP:<--grpc-port>` (127.0.0.1 without POD_IP), until SIGTERM.

Invariants: like OLM's configmap-server it never reads the ConfigMap again (a new ConfigMap
version rolls the pod); a ConfigMap it cannot read yet is retried with a growing pause, and
said so; a ConfigMap that is not a catalog is said and served as what could be read.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from typing import Any

from olm.api.backoff import exponential_backoff
from olm.catalog.configmap import configmap_catalog
from olm.catalog.model import Catalog
from olm.kube.client import api_client
from olm.kube.errors import GatewayError
from olm.kube.gateway import Gateway
from olm.registry.index import RegistryIndex
from olm.registry.server import RegistryServicer, serve_on

REGISTRY_PORT = 50051
RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS = 0.5, 10.0  # the pause after a failed read: doubling


def read_configmap(gateway: Gateway, namespace: str, name: str, stop: threading.Event) -> Any:
    """The ConfigMap, waiting (with a growing pause) until it is readable; None if stopped."""
    failures = 0
    while not stop.is_set():
        try:
            return gateway.get("v1", "ConfigMap", namespace, name)
        except GatewayError as exc:
            print(f"cannot read ConfigMap {namespace}/{name} yet ({exc}); retrying", flush=True)
        failures += 1
        stop.wait(exponential_backoff(failures, RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS))
    return None


def serve(args: argparse.Namespace) -> int:
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    gateway = Gateway(api_client(os.environ.get("KUBECONFIG")))
    where = f"ConfigMap {args.configMapNamespace}/{args.configMapName}"
    document = read_configmap(gateway, args.configMapNamespace, args.configMapName, stop)
    if document is None:
        return 0
    catalog = Catalog()
    try:
        configmap_catalog(document, catalog, where)
    except Exception as exc:  # data in no catalog shape: served empty, and said
        print(f"{where} is not a catalog: {exc}", flush=True)
    for problem in catalog.problems:
        print(f"{where}: {problem.message}", flush=True)
    address = f"{os.environ.get('POD_IP') or '127.0.0.1'}:{args.grpc_port}"
    started = time.monotonic()
    server, _ = serve_on(RegistryServicer(RegistryIndex(catalog)), address, workers=4)
    print(
        f"serving {len(catalog.packages)} packages of {where} on {address} "
        f"({time.monotonic() - started:.2f}s to start)",
        flush=True,
    )
    stop.wait()
    server.stop(grace=2).wait()
    return 0


def add_command(commands: Any) -> None:
    """`olm configmap-server` (its flags are OLM's configmap-server's, and --grpc-port)."""
    command = commands.add_parser(
        "configmap-server",
        help="serve a ConfigMap catalog over operator-registry's gRPC API (a registry pod's "
        "program)",
        description="Read the ConfigMap catalog once as this pod's ServiceAccount and serve it "
        "over operator-registry's gRPC API and gRPC health on $POD_IP, until SIGTERM. Writes "
        "nothing.",
    )
    command.add_argument("-c", "--configMapName", required=True)
    command.add_argument("-n", "--configMapNamespace", required=True)
    command.add_argument("--grpc-port", type=int, default=REGISTRY_PORT)
    command.set_defaults(func=serve)
