"""A file-based catalog of the samples (with an optional 0.0.3) served by `olm catalog serve`
on the host (`Server`), and the CatalogSource that points at it, waited READY."""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

from olm.catalog.model import Bundle, Entry
from olm.catalog.registryv1 import bundle_properties
from olm.catalog.render import to_yaml
from olm.catalog.samples import build
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for

V1, V2, V3 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2", "memcached-operator.v0.0.3"


def write_catalog(
    directory: Path, with_v3: bool, skip_range: str = "", strict_crd: bool = False
) -> None:
    catalog = build()
    package = catalog.packages["memcached-operator"]
    if with_v3:
        csv = copy.deepcopy(package.bundles[V2].csv)
        assert csv is not None
        csv["metadata"]["name"] = V3
        csv["spec"]["version"] = "0.0.3"
        csv["spec"]["replaces"] = V2
        deployment = csv["spec"]["install"]["spec"]["deployments"][0]
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] = (
            "olm-py.local/memcached-operator:0.0.3"
        )
        crd = next(
            o for o in package.bundles[V2].objects if o["kind"] == "CustomResourceDefinition"
        )
        if strict_crd:  # 0.0.3 would allow at most 3 replicas
            size = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
            size["properties"]["size"]["maximum"] = 3
        package.bundles[V3] = Bundle(
            V3, package.name, properties=bundle_properties(package.name, csv, [csv, crd], [])
        )
        package.channels["alpha"].entries.append(Entry(V3, replaces=V2, skip_range=skip_range))
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


class Server:
    def __init__(self, directory: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "olm.cli",
                "catalog",
                "serve",
                str(self.directory),
                "--port",
                str(self.port),
            ],
            stderr=subprocess.DEVNULL,
        )
        wait_for(lambda: _listening(self.port), timeout=STEP_TIMEOUT, what="the catalog server")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def catalog_source(plane: ControlPlane, namespace: str, port: int) -> None:
    source: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "updating"},
        "spec": {
            "sourceType": "grpc",
            "address": f"127.0.0.1:{port}",
            "updateStrategy": {"registryPoll": {"interval": "2s"}},
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(source))
    wait_for(
        lambda: (
            (
                (plane.get_json("catsrc", "updating", "-n", namespace).get("status") or {}).get(
                    "connectionState"
                )
                or {}
            ).get("lastObservedState")
            == "READY"
        ),
        timeout=STEP_TIMEOUT,
        what="catalog READY",
    )
