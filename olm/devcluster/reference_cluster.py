"""`olm dev up --reference-olm`: a local cluster prepared as OLM's chart does, running the
real OLM v0.38.0 (built by `reference.ensure_reference_olm`) instead of olm-py.

Invariants (see also reference.py):
- Nothing starts before the fixed health ports (:8080, :8443) are known to be free, unless
  they are held by this cluster's own running reference components.
- Idempotent: on a healthy reference cluster `up` only restarts what has stopped.
- A cluster started for olm-py is never turned into a reference cluster.
- A failed start stops everything of the cluster and keeps its logs.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from olm.api.conditions import utc_now
from olm.api.devbridge import ADVERTISEMENT_NAME, ADVERTISEMENT_NAMESPACE
from olm.data import SAMPLES_CATALOG
from olm.devcluster import network, service_hosts
from olm.devcluster import reference_packageserver as packageserver
from olm.devcluster.build import Binaries, ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.ports import LOOPBACK, free_ports
from olm.devcluster.process import ProcessRecord, is_running, log_tail, stop, wait_for
from olm.devcluster.reference import (
    CATALOG_OPERATOR,
    GLOBAL_OPERATOR_GROUP,
    HEALTH_PORTS,
    OLM_NAMESPACE,
    OLM_OPERATOR,
    OPERATORS_NAMESPACE,
    PROCESSES,
    SAMPLES_SERVER,
    SAMPLES_SOURCE,
    SERVICE_HOSTS,
    Tls,
    busy_ports_message,
    catalog_operator_argv,
    catalog_operator_healthy,
    chart_objects,
    make_tls,
    olm_operator_argv,
    olm_operator_healthy,
    opm_serve_argv,
    port_in_use,
    reference_env,
    samples_catalog_source,
    samples_server_healthy,
)
from olm.devcluster.reference_build import (
    API_MODULE,
    API_VERSION,
    OLM_VERSION,
    ReferenceOlmBinaries,
    ensure_reference_olm,
)
from olm.progress import Progress

PACKAGE_SERVER = packageserver.PACKAGE_SERVER
START_TIMEOUT = 240.0


class _Starter:
    """Prepares a running cluster and starts (or restarts) the reference components."""

    def __init__(
        self,
        cluster: DevCluster,
        olm: ReferenceOlmBinaries,
        base: Binaries,
        progress: Progress,
        timeout: float,
    ) -> None:
        self.cluster = cluster
        self.olm = olm
        self.base = base
        self.progress = progress
        self.deadline = time.monotonic() + timeout
        self.dir = cluster.state_dir / "reference-olm"

    def remaining(self) -> float:
        return max(1.0, self.deadline - time.monotonic())

    def running(self) -> set[str]:
        return {r.name for r in self.cluster.processes() if is_running(r)}

    def record(self, name: str) -> ProcessRecord:
        return next(r for r in self.cluster.processes() if r.name == name)

    def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        info = dict(self.cluster.reference_olm() or {})
        info.update(
            {"version": OLM_VERSION, "root": str(self.olm.root), "processes": list(PROCESSES)}
        )
        self.cluster.record_reference_olm(info)
        self.prepare()
        port = self.serve_samples(info)
        self.start_operators()
        self.await_catalog(port)
        self.serve_packages(info)

    def prepare(self) -> None:
        self.progress.say(f"Applying OLM's CRDs ({API_MODULE} {API_VERSION}) server-side")
        self.cluster.kubectl("apply", "--server-side", "-f", str(self.olm.crds), timeout=120)
        self.cluster.kubectl(
            "wait",
            "--for=condition=Established",
            "-f",
            str(self.olm.crds),
            f"--timeout={int(self.remaining())}s",
            timeout=self.remaining() + 10,
        )
        self.progress.say(
            f"Creating namespaces {OLM_NAMESPACE} and {OPERATORS_NAMESPACE} and OperatorGroup "
            f"{OPERATORS_NAMESPACE}/{GLOBAL_OPERATOR_GROUP}, as OLM's chart does"
        )
        items = chart_objects()
        self.cluster.kubectl(
            "apply",
            "--server-side",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
        )

    def serve_samples(self, info: dict[str, Any]) -> int:
        previous = info.get("samples_port")
        if SAMPLES_SERVER in self.running() and isinstance(previous, int):
            port = previous
        else:
            port = (
                previous
                if isinstance(previous, int) and not port_in_use(previous)
                else free_ports(1)[0]
            )
            argv = opm_serve_argv(
                self.base.path("opm"), SAMPLES_CATALOG, port, self.dir / "opm-termination.log"
            )
            self.progress.say(f"Serving the samples catalog with opm on {LOOPBACK}:{port}")
            self.cluster.start_process(SAMPLES_SERVER, argv)
            info["samples_port"] = port
            self.cluster.record_reference_olm(info)
            self.await_process(SAMPLES_SERVER, lambda: samples_server_healthy(port))
        source = samples_catalog_source(port)
        self.cluster.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(source))
        return port

    def start_operators(self) -> None:
        kubeconfig = self.cluster.kubeconfig_path
        env = reference_env({**os.environ, **self.cluster.env()}, kubeconfig)
        tls_dir = self.dir / "tls"
        tls = Tls(tls_dir / "tls.crt", tls_dir / "tls.key")
        if not (tls.cert.is_file() and tls.key.is_file()):
            tls = make_tls(tls_dir)
        self.name_services()
        argvs = {
            CATALOG_OPERATOR: service_hosts.with_service_hosts(
                self.hosts, catalog_operator_argv(self.olm, kubeconfig, tls)
            ),
            OLM_OPERATOR: olm_operator_argv(self.olm),
        }
        checks = {OLM_OPERATOR: olm_operator_healthy, CATALOG_OPERATOR: catalog_operator_healthy}
        started = []
        for name in (CATALOG_OPERATOR, OLM_OPERATOR):
            if name in self.running():
                continue
            self.progress.say(f"Starting the real {name} (OLM {OLM_VERSION})")
            self.cluster.start_process(name, argvs[name], env=env)
            started.append(name)
        for name in started:
            self.await_process(name, checks[name])

    @property
    def hosts(self) -> Path:
        return self.dir / "hosts"

    def name_services(self) -> None:
        """The hosts file that names the cluster's Services for OLM's processes (which dial
        `<service>.<namespace>.svc`), kept up to date by a process of the cluster."""
        if SERVICE_HOSTS not in self.running():
            service_hosts.keep_named(
                self.cluster.start_process, self.cluster.kubeconfig_path, self.hosts
            )

    def await_process(self, name: str, check: Callable[[], tuple[bool, str]]) -> None:
        record = self.record(name)
        ok, detail = wait_for(
            check, timeout=self.remaining(), alive=lambda: is_running(record), interval=0.2
        )
        if ok:
            self.progress.say(f"{name} is healthy")
            return
        log = self.cluster.state_dir / "logs" / f"{name}.log"
        what = (
            "exited during start"
            if not is_running(record)
            else f"did not become healthy in time ({detail})"
        )
        tail = log_tail(log)
        hint = ""
        if "address already in use" in tail:
            hint = " " + busy_ports_message([HEALTH_PORTS.get(name, 0)])
        raise ClusterError(f"{name} {what}.{hint} Its log is {log}; last lines:\n{tail}")

    def serve_packages(self, info: dict[str, Any]) -> None:
        """OLM's package-server as its chart runs it, behind the cluster's host bridge; `up`
        returns once `kubectl get packagemanifests` lists the samples catalog's packages."""
        if network.load(self.cluster.state_dir) is None:
            self.progress.say(
                "Not starting OLM's package-server: this cluster has no pod network, so the "
                "API server could not reach it (`kubectl get packagemanifests` will not work)"
            )
            info.pop("package_server_port", None)
            self.cluster.record_reference_olm(info)
            return
        files = packageserver.Files(self.dir / "packageserver")
        before = files.cert.read_bytes() if files.cert.is_file() else b""
        material = packageserver.serving_material(files, utc_now())
        previous = info.get("package_server_port")
        running = PACKAGE_SERVER in self.running()
        if running and material.cert_pem != before:  # renewed: restart it with the new pair
            stop(self.record(PACKAGE_SERVER))
            running = False
        if running and isinstance(previous, int):
            port = previous
        else:
            port = (
                previous
                if isinstance(previous, int) and not port_in_use(previous)
                else free_ports(1)[0]
            )
            kubeconfig = self.cluster.kubeconfig_path
            account = self.service_account()
            argv = service_hosts.with_service_hosts(
                self.hosts,
                packageserver.in_cluster(
                    account, packageserver.argv(self.olm.package_server, kubeconfig, port, files)
                ),
            )
            env = {
                **reference_env({**os.environ, **self.cluster.env()}, kubeconfig),
                **packageserver.in_cluster_env(_api_url(kubeconfig)),
            }
            self.progress.say(
                f"Starting the real {PACKAGE_SERVER} (OLM {OLM_VERSION}) on {LOOPBACK}:{port}"
            )
            self.cluster.start_process(PACKAGE_SERVER, argv, env=env)
            info["package_server_port"] = port
            self.cluster.record_reference_olm(info)
            self.await_process(PACKAGE_SERVER, lambda: packageserver.healthy(port))
        self.await_state(
            "the local cluster's host bridge",
            lambda: self.found("configmap", ADVERTISEMENT_NAME, ADVERTISEMENT_NAMESPACE),
        )
        items = packageserver.objects(port, material.ca_pem)
        self.cluster.kubectl(
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
        )
        name = items[1]["metadata"]["name"]

        def available() -> tuple[bool, str]:
            return packageserver.available(self.get_json("apiservice", name))

        self.await_state(f"APIService {name} Available", available)
        self.await_state(
            f"PackageManifests of CatalogSource {OLM_NAMESPACE}/{SAMPLES_SOURCE}",
            lambda: self.found(
                "packagemanifests", "", OLM_NAMESPACE, "-l", f"catalog={SAMPLES_SOURCE}"
            ),
        )
        self.progress.say(f"{PACKAGE_SERVER} serves PackageManifests (APIService {name})")

    def service_account(self) -> Path:
        """packageserver's account as the chart makes it, and a pod's files of it."""
        items = packageserver.rbac_objects()
        self.cluster.kubectl(
            "apply",
            "--server-side",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
        )
        token = self.cluster.kubectl(
            "create",
            "token",
            packageserver.SERVICE_ACCOUNT,
            "-n",
            packageserver.NAMESPACE,
            f"--duration={packageserver.TOKEN_SECONDS}s",
        )
        ca = (self.cluster.state_dir / "pki" / "ca.crt").read_bytes()
        return packageserver.write_account(self.dir / "serviceaccount", token, ca)

    def get_json(self, *args: str) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = json.loads(self.cluster.kubectl("get", *args, "-o", "json"))
        except (ClusterError, ValueError):
            return None
        return found

    def found(self, kind: str, name: str, namespace: str, *more: str) -> tuple[bool, str]:
        args = [kind, *([name] if name else []), "-n", namespace, *more, "-o", "name"]
        try:
            listed = self.cluster.kubectl("get", *args).strip()
        except ClusterError as exc:
            return False, str(exc)
        return bool(listed), listed or "nothing listed yet"

    def await_state(self, what: str, check: Callable[[], tuple[bool, str]]) -> None:
        self.progress.say(f"Waiting for {what}")
        record = self.record(PACKAGE_SERVER)
        ok, detail = wait_for(
            check, timeout=self.remaining(), alive=lambda: is_running(record), interval=0.5
        )
        if not ok:
            log = self.cluster.state_dir / "logs" / f"{PACKAGE_SERVER}.log"
            why = "Timed out" if is_running(record) else f"{PACKAGE_SERVER} exited"
            raise ClusterError(
                f"{why} waiting for {what} (last: {detail}). The {PACKAGE_SERVER} log is "
                f"{log}; last lines:\n{log_tail(log)}"
            )

    def await_catalog(self, port: int) -> None:
        def ready() -> tuple[bool, str]:
            try:
                state = self.cluster.kubectl(
                    "get",
                    "catalogsource",
                    SAMPLES_SOURCE,
                    "-n",
                    OLM_NAMESPACE,
                    "-o",
                    "jsonpath={.status.connectionState.lastObservedState}",
                )
            except ClusterError as exc:
                return False, str(exc)
            return state.strip() == "READY", state.strip() or "no connection state yet"

        self.progress.say(f"Waiting for CatalogSource {OLM_NAMESPACE}/{SAMPLES_SOURCE} to be READY")
        catalog = self.record(CATALOG_OPERATOR)
        ok, detail = wait_for(
            ready, timeout=self.remaining(), alive=lambda: is_running(catalog), interval=0.5
        )
        if not ok:
            log = self.cluster.state_dir / "logs" / f"{CATALOG_OPERATOR}.log"
            raise ClusterError(
                f"CatalogSource {OLM_NAMESPACE}/{SAMPLES_SOURCE} ({LOOPBACK}:{port}) did not "
                f"become READY for the real catalog-operator (last state: {detail}). Its log "
                f"is {log}; last lines:\n{log_tail(log)}"
            )
        self.progress.say(f"CatalogSource {OLM_NAMESPACE}/{SAMPLES_SOURCE} is READY")


def _api_url(kubeconfig: Path) -> str:
    config = json.loads(kubeconfig.read_text())
    return str(config["clusters"][0]["cluster"]["server"])


def up_reference(
    cluster: DevCluster,
    *,
    nodes: int = 2,
    api_port: int | None = None,
    timeout: float = START_TIMEOUT,
    extra_args: dict[str, list[str]] | None = None,
) -> bool:
    """`olm dev up --reference-olm`: a local cluster prepared as OLM's chart does, running the
    real OLM. Idempotent: on a healthy reference cluster it only restarts what has stopped.
    `extra_args` adds flags per control-plane component (a benchmark's audit log). Returns
    False when the cluster was already up."""
    progress = cluster.progress
    olm = ensure_reference_olm(progress)
    base = ensure_binaries(progress=progress)
    already_up = cluster.is_up()
    if already_up and cluster.reference_olm() is None:
        raise ClusterError(
            f"The local cluster in {cluster.state_dir} was started without --reference-olm "
            "(for olm-py). The real OLM and olm-py must never watch the same API server: stop "
            "it first (`olm dev down`) or give another --state-dir."
        )
    ours = {r.name for r in cluster.processes() if is_running(r)} if already_up else set()
    busy = [port for name, port in HEALTH_PORTS.items() if name not in ours and port_in_use(port)]
    if busy:
        raise ClusterError(busy_ports_message(busy))
    if already_up:
        progress.say(f"The local cluster is already up (state in {cluster.state_dir})")
    else:
        cluster.binaries = base
        cluster.up(nodes=nodes, api_port=api_port, extra_args=extra_args)
    try:
        _Starter(cluster, olm, base, progress, timeout).start()
    except BaseException as exc:
        cluster.abandon()
        if not isinstance(exc, Exception):
            raise
        what = (
            str(exc)
            if isinstance(exc, ClusterError)
            else f"Starting the reference OLM failed: {exc}"
        )
        raise ClusterError(
            f"{what}\nEverything of the cluster has been stopped; the logs are kept in "
            f"{cluster.state_dir / 'logs'}."
        ) from exc
    progress.say(f"The real OLM {OLM_VERSION} is running on the local cluster")
    return not already_up
