"""A stand-in for operator-registry's `configmap-server`, run by the local pod runner.

The real OLM serves a ConfigMap CatalogSource from a pod of
`quay.io/operator-framework/configmap-operator-registry` whose command is
`configmap-server -c <configmap> -n <namespace>`; the catalog operator then dials the pod's
Service at port 50051. That image is out of reach here and kwok only simulates pods, so the pod
runner (olm/devcluster/podrunner.py) runs this program for such a pod instead: it reads the
ConfigMap once as the pod's ServiceAccount (OLM grants that account `get` on it), and serves its
packages with olm-py's own registry server (the same gRPC API and health service as
operator-registry) on `$POD_IP:<port>`.

Invariants: like the original, it never re-reads the ConfigMap (OLM replaces the pod when the
ConfigMap changes); a ConfigMap it cannot read yet is retried with a growing pause, and said so.
"""

from __future__ import annotations

import argparse
import os
import sys
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


def read_configmap(namespace: str, name: str) -> dict[str, Any]:
    """The ConfigMap as the API returns it, waiting (with a growing pause) until it is readable."""
    gateway = Gateway(api_client(os.environ.get("KUBECONFIG")))
    failures = 0
    while True:
        try:
            found: dict[str, Any] = gateway.get("v1", "ConfigMap", namespace, name)
            return found
        except GatewayError as exc:
            print(f"cannot read ConfigMap {namespace}/{name} yet ({exc}); retrying", flush=True)
        failures += 1
        time.sleep(exponential_backoff(failures, RETRY_FIRST_SECONDS, RETRY_MAX_SECONDS))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="configmap-server",
        description=(
            "Stand in for OLM's configmap-server in a pod of the local pod runner: read the"
            " ConfigMap catalog from the cluster and serve it over the registry's gRPC API."
        ),
        epilog="Takes until killed. Writes nothing.",
    )
    parser.add_argument("-c", "--configMapName", required=True)
    parser.add_argument("-n", "--configMapNamespace", required=True)
    parser.add_argument("-p", "--port", type=int, default=REGISTRY_PORT)
    args, _ = parser.parse_known_args(argv)  # the original's other flags mean nothing here
    where = f"ConfigMap {args.configMapNamespace}/{args.configMapName}"
    catalog = Catalog()
    configmap_catalog(read_configmap(args.configMapNamespace, args.configMapName), catalog, where)
    for problem in catalog.problems:
        print(f"{where}: {problem.message}", flush=True)
    address = f"{os.environ.get('POD_IP') or '127.0.0.1'}:{args.port}"
    server, _ = serve_on(RegistryServicer(RegistryIndex(catalog)), address, workers=4)
    print(f"serving {len(catalog.packages)} packages of {where} on {address}", flush=True)
    server.wait_for_termination()
    return 0


if __name__ == "__main__":
    sys.exit(main())
