"""The soak's catalog: the memcached-operator package, a new head per generation, served by
`olm catalog serve` on the host (tests/support/catalog_server.py's `Server`), and the
CatalogSource `olm/soak` that points at it.

Generation g (0, 1, ...): channels `alpha` and `stable`, both 0.0.1 -> 0.0.2 ->
0.0.2-soak.1 -> ... -> 0.0.2-soak.g (each a copy of 0.0.2 that replaces the one before; the
pre-release tag keeps the sample program a 0.0.2 one: no webhooks). So every generation has a
new head (`heads`), a new content digest, and every older CSV still in the graph.

Invariant: `write` is pure of the cluster (a file); `Catalog.restart` and `kill` act on the
server process only; the port never changes, so the CatalogSource's address stays true.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

from benchmarks.watching import Kube
from olm.catalog.model import Bundle, Channel, Entry
from olm.catalog.registryv1 import bundle_properties
from olm.catalog.render import to_yaml
from olm.catalog.samples import build
from tests.support.catalog_server import Server

PACKAGE = "memcached-operator"
CHANNELS = ("alpha", "stable")
SOURCE, SOURCE_NAMESPACE = "soak", "olm"
V1, V2 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"


def version(generation: int) -> str:
    return "0.0.2" if generation == 0 else f"0.0.2-soak.{generation}"


def csv_name(generation: int) -> str:
    return f"{PACKAGE}.v{version(generation)}"


def heads(generation: int) -> dict[str, str]:
    return {channel: csv_name(generation) for channel in CHANNELS}


def write(directory: Path, generation: int) -> None:
    """The catalog of `generation` as `directory/catalog.yaml`."""
    catalog = build()
    package = catalog.packages[PACKAGE]
    catalog.packages = {PACKAGE: package}
    template = package.bundles[V2]
    assert template.csv is not None
    crd = next(o for o in template.objects if o["kind"] == "CustomResourceDefinition")
    entries = [Entry(V1), Entry(V2, replaces=V1)]
    package.bundles = {V1: package.bundles[V1], V2: template}
    for number in range(1, generation + 1):
        csv = copy.deepcopy(template.csv)
        csv["metadata"]["name"] = csv_name(number)
        csv["spec"]["version"] = version(number)
        csv["spec"]["replaces"] = csv_name(number - 1)
        deployment = csv["spec"]["install"]["spec"]["deployments"][0]
        deployment["spec"]["template"]["spec"]["containers"][0]["image"] = (
            f"olm-py.local/memcached-operator:{version(number)}"
        )
        package.bundles[csv_name(number)] = Bundle(
            csv_name(number),
            PACKAGE,
            properties=bundle_properties(PACKAGE, csv, [csv, crd], []),
        )
        entries.append(Entry(csv_name(number), replaces=csv_name(number - 1)))
    package.channels = {c: Channel(c, PACKAGE, list(entries)) for c in CHANNELS}
    package.default_channel = "alpha"
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


class Catalog:
    """The served catalog: its generation, its server process."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.generation = 0
        self.server = Server(directory)
        self._lock = threading.RLock()
        write(directory, 0)

    def start(self) -> None:
        """Serve the current generation. A server still running is killed first: the fault
        thread's bounce (kill, wait, start) and a user's catalog update (restart) can
        interleave, and a second start would leave the first server behind, serving on."""
        with self._lock:
            self.kill()
            self.server.start()

    def kill(self) -> None:
        """kill -9 of the server (a crash)."""
        with self._lock:
            if self.server.process is not None and self.server.process.poll() is None:
                self.server.process.kill()
                self.server.process.wait()

    def advance(self) -> None:
        """The next generation, written; the server serves it once (re)started."""
        self.generation += 1
        write(self.directory, self.generation)

    def restart(self) -> None:
        """A new generation, served by a restarted server (the publisher's release)."""
        with self._lock:
            self.server.stop()
            self.advance()
            self.start()

    def stop(self) -> None:
        self.kill()

    def source(self, kube: Kube) -> None:
        """The CatalogSource olm/soak, polled every 2 s (a new digest shows within seconds)."""
        manifest: dict[str, Any] = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": SOURCE, "namespace": SOURCE_NAMESPACE},
            "spec": {
                "sourceType": "grpc",
                "address": f"127.0.0.1:{self.server.port}",
                "updateStrategy": {"registryPoll": {"interval": "2s"}},
            },
        }
        kube.run("apply", "-f", "-", stdin=json.dumps(manifest))
