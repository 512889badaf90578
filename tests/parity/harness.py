"""The two sides of a parity run and what a scenario collects from them.

A side is a local cluster of its own (`olm dev --state-dir DIR up`), with either the real OLM v0
(`--reference-olm`: OLM's `olm` and `catalog` processes and the samples catalog served by
`opm serve` as CatalogSource olm/samples) or olm-py (`olm run`, which serves the same catalog
as olm/samples). Only one reference side can run at a time: the real OLM binds fixed ports.

`OLM_PARITY_REFERENCE=olm-py` makes the reference side an olm-py cluster too: the suite then
checks its own normalization (two olm-py runs must not differ).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from olm.devcluster import manifests
from olm.devcluster.cluster import DevCluster, default_state_dir
from olm.devcluster.reference import wait_for_health_ports
from tests.parity.normalize import normalize
from tests.support.cluster import ControlPlane
from tests.support.olm_run import OlmOperator

REFERENCE_ENV = "OLM_PARITY_REFERENCE"
OLM = [sys.executable, "-m", "olm.cli"]

# Kinds read in each namespace of a scenario (the first list always exists; the optional
# kinds may be missing from olm-py's CRDs, which then shows as missing objects).
NAMESPACED = [
    "clusterserviceversions.operators.coreos.com",
    "installplans.operators.coreos.com",
    "subscriptions.operators.coreos.com",
    "operatorgroups.operators.coreos.com",
    "deployments.apps",
    "serviceaccounts",
    "roles.rbac.authorization.k8s.io",
    "rolebindings.rbac.authorization.k8s.io",
    "events",
]
NAMESPACED_OPTIONAL = ["operatorconditions.operators.coreos.com"]


def reference_kind() -> str:
    """'olm' (the real OLM v0, the default) or 'olm-py' (self-check)."""
    return os.environ.get(REFERENCE_ENV, "olm")


def reference_available() -> tuple[bool, str]:
    if reference_kind() == "olm-py":
        return True, ""
    result = subprocess.run(
        [*OLM, "dev", "up", "--help"], capture_output=True, text=True, check=False
    )
    if "--reference-olm" not in result.stdout:
        return False, "`olm dev up --reference-olm` is not available in this tree"
    return True, ""


def state_root() -> Path:
    return default_state_dir().parent / "parity"


def sweep_crashed_runs() -> None:
    """Stop clusters left by parity runs whose pytest process is gone."""
    root = state_root()
    for state in root.glob("*-*") if root.is_dir() else []:
        owner = state.name.rsplit("-", 1)[-1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            subprocess.run(
                [*OLM, "dev", "--state-dir", str(state), "down"], check=False, capture_output=True
            )
            shutil.rmtree(state, ignore_errors=True)


@dataclass
class Side:
    """A running cluster of one side, as the scenarios drive it."""

    name: str  # "reference" or "olm-py"
    plane: ControlPlane
    log_dir: Path
    extras: list[subprocess.Popen[bytes]] = field(default_factory=list)
    served: set[str] = field(default_factory=set)
    # CatalogSource name -> (port, opm process): `reserve` restarts one on its port.
    servers: dict[str, tuple[int, subprocess.Popen[bytes]]] = field(default_factory=dict)

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> str:
        return self.plane.kubectl(*args, stdin=stdin, check=check).stdout

    def apply(self, obj: dict[str, Any] | list[dict[str, Any]], namespace: str = "") -> None:
        body = obj if isinstance(obj, dict) else {"apiVersion": "v1", "kind": "List", "items": obj}
        args = ["apply", "-f", "-"] + (["-n", namespace] if namespace else [])
        self.kubectl(*args, stdin=json.dumps(body))

    def get(self, resource: str, name: str, namespace: str = "") -> dict[str, Any] | None:
        args = ["get", resource, name, "-o", "json"] + (["-n", namespace] if namespace else [])
        result = self.plane.kubectl(*args, check=False)
        if result.returncode != 0:
            return None
        found: dict[str, Any] = json.loads(result.stdout)
        return found

    def items(self, resources: str, namespace: str = "") -> list[dict[str, Any]]:
        args = ["get", resources, "-o", "json"] + (["-n", namespace] if namespace else [])
        result = self.plane.kubectl(*args, check=False)
        if result.returncode != 0:
            return []
        items: list[dict[str, Any]] = json.loads(result.stdout)["items"]
        return items

    def serve_catalog(
        self,
        directory: Path,
        name: str,
        port: int,
        namespace: str = "olm",
        labels: dict[str, str] | None = None,
    ) -> None:
        """`opm serve DIRECTORY` on 127.0.0.1:PORT and CatalogSource NAMESPACE/NAME pointing at
        it (the same way on both sides; the real OLM needs inline bundles)."""
        self._start_opm(directory, name, port)
        self.apply(
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "CatalogSource",
                "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
                "spec": {"sourceType": "grpc", "address": f"127.0.0.1:{port}", "displayName": name},
            }
        )

    def _start_opm(self, directory: Path, name: str, port: int) -> None:
        log = (self.log_dir / f"opm-{name}.log").open("ab")
        process = subprocess.Popen(
            [
                str(self.plane.bin_dir / "opm"),
                "serve",
                str(directory),
                "-p",
                str(port),
                "--pprof-addr",
                "",
                "-t",
                str(self.log_dir / f"opm-{name}.term"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.extras.append(process)
        self.servers[name] = (port, process)

    def reserve(self, name: str, directory: Path) -> None:
        """Serve DIRECTORY instead, on the same port (a catalog's new content, as a new
        catalog image would bring): the old `opm serve` stops, a new one starts."""
        port, process = self.servers[name]
        process.terminate()
        process.wait(30)
        self._start_opm(directory, name, port)

    def catalog(
        self,
        name: str,
        directory: Path,
        namespace: str = "olm",
        labels: dict[str, str] | None = None,
    ) -> None:
        """Serve DIRECTORY as CatalogSource NAMESPACE/NAME (once per side) and wait until
        READY."""
        if f"{namespace}/{name}" not in self.served:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                port = probe.getsockname()[1]
            self.serve_catalog(directory, name, port, namespace, labels)
            self.served.add(f"{namespace}/{name}")
        wait(
            lambda: catalog_ready(self, name, namespace),
            120,
            f"CatalogSource {namespace}/{name} READY",
        )

    def stop_extras(self) -> None:
        for process in self.extras:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
        self.extras.clear()


@contextmanager
def started(side: str, reference: str) -> Iterator[Side]:
    """Start a cluster for `side` ('reference' or 'olm-py'); `reference` is reference_kind()."""
    real_olm = side == "reference" and reference == "olm"
    state = state_root() / f"{side}-{os.getpid()}"
    shutil.rmtree(state, ignore_errors=True)
    log_dir = state.parent / f"{state.name}-logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    up = [*OLM, "dev", "--state-dir", str(state), "up"] + (["--reference-olm"] if real_olm else [])
    if real_olm:  # another reference cluster (a benchmark, a test) may hold OLM's fixed ports
        wait_for_health_ports(PORT_WAIT)
    result = subprocess.run(up, capture_output=True, text=True, check=False)
    try:
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(up[2:])} failed:\n{result.stdout}\n{result.stderr}")
        cluster = DevCluster(state)
        plane = ControlPlane(cluster, None)
        operator: OlmOperator | None = None
        if not real_olm:
            manifests.install(cluster)
            operator = OlmOperator(plane, log_dir / "olm-run.log")
            operator.start()
        running = Side(side, plane, log_dir)

        def ready() -> bool:
            process = operator.process if operator is not None else None
            if process is not None and process.poll() is not None:
                log = (log_dir / "olm-run.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"olm run exited ({process.returncode}):\n{log}")
            return catalog_ready(running, "samples")

        wait(ready, 120, "CatalogSource olm/samples READY")
        try:
            yield running
        finally:
            running.stop_extras()
            if operator is not None:
                operator.stop()
    finally:
        subprocess.run(
            [*OLM, "dev", "--state-dir", str(state), "down"], check=False, capture_output=True
        )


PORT_WAIT = 1200.0


def catalog_ready(side: Side, name: str, namespace: str = "olm") -> bool:
    source = side.get("catalogsources.operators.coreos.com", name, namespace) or {}
    state = ((source.get("status") or {}).get("connectionState") or {}).get("lastObservedState")
    return state == "READY"


class ScenarioTimeout(AssertionError):
    pass


def wait(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """Poll an observable condition (never a bare sleep) until it holds."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise ScenarioTimeout(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")


@dataclass
class Scope:
    """What a scenario's snapshots read: its namespaces, CatalogSources, cluster objects."""

    namespaces: list[str]
    catalogs: list[str] = field(default_factory=lambda: ["samples"])
    api_prefixes: list[str] = field(default_factory=list)  # per-API ClusterRoles, by name
    crds: list[str] = field(default_factory=list)  # CustomResourceDefinitions, by name
    resources: list[str] = field(default_factory=list)  # more namespaced kinds (users' CRs)
    # Cluster-scoped kinds kept when labelled olm.owner.namespace with a scope namespace
    # (webhook configurations, APIServices).
    cluster_resources: list[str] = field(default_factory=list)


def collect(side: Side, scope: Scope) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for namespace in scope.namespaces:
        objects += side.items(",".join(NAMESPACED), namespace)
        for optional in NAMESPACED_OPTIONAL + scope.resources:
            objects += side.items(optional, namespace)
        ns = side.get("namespace", namespace)
        if ns is not None:
            meta = ns["metadata"]
            objects.append(
                {
                    "kind": "Namespace",
                    "metadata": {"name": meta["name"], "labels": meta.get("labels") or {}},
                }
            )
    # Events about a Namespace (cluster-scoped) may be recorded in `default` or in itself.
    for event in side.items("events", "default"):
        involved = event.get("involvedObject") or {}
        if involved.get("kind") == "Namespace" and involved.get("name") in scope.namespaces:
            objects.append(event)
    for name in scope.catalogs:
        source = side.get("catalogsources.operators.coreos.com", name, "olm")
        if source is not None:
            objects.append(
                {
                    "kind": "CatalogSource",
                    "metadata": {"name": name, "namespace": "olm"},
                    "status": source.get("status") or {},
                }
            )
    namespaces = set(scope.namespaces)
    owned = ",".join(["clusterroles", "clusterrolebindings", *scope.cluster_resources])
    for item in side.items(owned):
        meta = item["metadata"]
        labels = meta.get("labels") or {}
        if labels.get("olm.owner.namespace") in namespaces or any(
            meta["name"].startswith(prefix) for prefix in scope.api_prefixes
        ):
            objects.append(item)
    for name in scope.crds:
        crd = side.get("customresourcedefinitions.apiextensions.k8s.io", name)
        if crd is not None:
            objects.append(crd)
    for item in side.items("operators.operators.coreos.com"):
        if item["metadata"]["name"].rsplit(".", 1)[-1] in namespaces:
            objects.append(item)
    # Events are cut to their involved object's kind/name and reason by the normalizer; the
    # default ServiceAccount and root CA are the API server's.
    return [o for o in objects if not _ignored(o, namespaces)]


def _ignored(obj: dict[str, Any], namespaces: set[str]) -> bool:
    """The API server's default ServiceAccount, and copies of CSVs from another scenario's
    global operator: the real OLM copies into a new namespace only at a resync (minutes
    later), olm-py at once, so whether they are there depends on the previous scenario."""
    meta = obj.get("metadata", {})
    copied_from = (meta.get("labels") or {}).get("olm.copiedFrom")
    if copied_from is not None and copied_from not in namespaces:
        return True
    return obj.get("kind") == "ServiceAccount" and meta.get("name") == "default"


def settled(side: Side, scope: Scope, timeout: float = 20) -> list[dict[str, Any]]:
    """A snapshot taken once two reads a second apart normalize to the same objects (the
    operator has stopped writing), or the last one after `timeout`."""
    previous = collect(side, scope)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(1)
        current = collect(side, scope)
        if normalize(current) == normalize(previous):
            return current
        previous = current
    return previous
