"""One local control plane: start it, tell its health, stop it.

The components' health probes are cluster_status.py's, the image registries' start
cluster_registry.py's; this module keeps the cluster's record and its life cycle.

Invariants:
- All of a cluster's files live in its state directory; `cluster.json` there records the
  processes we started (PID + identity), written after every start, so `down` can always
  stop exactly those processes, even after a crash half-way through `up`.
- `up` on a healthy cluster changes nothing and returns at once; `up` over a dead or
  half-started cluster first stops what is left of it.
- A failed `up` stops everything it started before raising, and keeps the logs.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from olm.devcluster import health, network, pki, registry
from olm.devcluster.build import Binaries
from olm.devcluster.cluster_registry import start_registries
from olm.devcluster.cluster_status import ComponentStatus, component_statuses
from olm.devcluster.components import (
    APISERVER,
    CONTROLLER_MANAGER,
    ETCD,
    KWOK,
    POD_RUNNER,
    SCHEDULER,
    START_ORDER,
    Layout,
    Plan,
    Ports,
    fake_node,
    kubeconfig,
)
from olm.devcluster.ports import LOOPBACK, free_ports
from olm.devcluster.process import (
    ProcessRecord,
    SpawnError,
    is_running,
    log_tail,
    spawn,
    stop,
    wait_for,
)
from olm.progress import QUIET, Progress

DEFAULT_NODES = 2
# The record key of a cluster running the real OLM instead of olm-py (reference.py).
REFERENCE_KEY = "reference_olm"
REFERENCE_ENV = "OLM_REFERENCE_OLM"


class ClusterError(RuntimeError):
    """The cluster could not be started or used; the message says what to do."""


def default_state_dir() -> Path:
    """$OLM_PY_STATE/dev, else $XDG_STATE_HOME/olm-py/dev, else ~/.local/state/olm-py/dev."""
    explicit = os.environ.get("OLM_PY_STATE")
    if explicit:
        return Path(explicit) / "dev"
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "olm-py" / "dev"


class DevCluster:
    """A local control plane rooted at `state_dir`."""

    def __init__(
        self,
        state_dir: Path | None = None,
        *,
        binaries: Binaries | None = None,
        progress: Progress = QUIET,
    ) -> None:
        self.state_dir = (state_dir or default_state_dir()).resolve()
        self.binaries = binaries
        self.progress = progress

    # ----- the record of a running cluster -------------------------------------------------

    @property
    def record_path(self) -> Path:
        return self.state_dir / "cluster.json"

    @property
    def kubeconfig_path(self) -> Path:
        return self.state_dir / "kubeconfig"

    def _load(self) -> dict[str, Any] | None:
        try:
            data = json.loads(self.record_path.read_text())
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None

    def _save(self, data: dict[str, Any]) -> None:
        temporary = self.record_path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data, indent=2))
        temporary.replace(self.record_path)

    def processes(self) -> list[ProcessRecord]:
        data = self._load() or {}
        return [ProcessRecord.from_json(p) for p in data.get("processes", [])]

    @property
    def bin_dir(self) -> Path | None:
        data = self._load()
        return Path(data["bin_dir"]) if data and "bin_dir" in data else None

    # ----- queries ---------------------------------------------------------------------------

    def is_up(self) -> bool:
        data = self._load()
        if not data or not data.get("ready"):
            return False
        records = self.processes()
        if not set(START_ORDER) <= {r.name for r in records}:
            return False
        if not all(is_running(r) for r in records if r.name in START_ORDER):
            return False
        ok, _ = health.apiserver_ready(data["api_url"], self._admin_context(), timeout=1.5)
        return ok

    def _admin_context(self) -> Any:
        keys = self.state_dir / "pki"
        return health.admin_context(keys / "ca.crt", keys / "admin.crt", keys / "admin.key")

    def status(self) -> list[ComponentStatus]:
        data = self._load()
        if not data:
            return []
        return component_statuses(
            data, self.processes(), self._admin_context, data.get(REFERENCE_KEY)
        )

    def env(self) -> dict[str, str]:
        bin_dir = self.bin_dir
        path = f"{bin_dir}:{os.environ.get('PATH', '')}" if bin_dir else os.environ.get("PATH", "")
        env = {"KUBECONFIG": str(self.kubeconfig_path), "PATH": path}
        data = self._load() or {}
        if data.get("registry"):
            env[registry.REGISTRY_ENV] = str(data["registry"])
        if data.get("registry_tls"):
            env[registry.REGISTRY_TLS_ENV] = str(data["registry_tls"])
            env[registry.REGISTRY_CA_ENV] = str(data["registry_ca"])
        if data.get("samples_image"):
            env[registry.SAMPLES_IMAGE_ENV] = str(data["samples_image"])
        reference_info = data.get(REFERENCE_KEY)
        if isinstance(reference_info, dict):
            env[REFERENCE_ENV] = str(reference_info.get("version", ""))
        return env

    def kubectl(self, *args: str, stdin: str | None = None, timeout: float = 60) -> str:
        bin_dir = self.bin_dir
        if bin_dir is None:
            raise ClusterError(f"No cluster is recorded in {self.state_dir}; run `olm dev up`.")
        result = subprocess.run(
            [str(bin_dir / "kubectl"), f"--kubeconfig={self.kubeconfig_path}", *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if result.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    # ----- up ----------------------------------------------------------------------------------

    def up(
        self,
        *,
        nodes: int = DEFAULT_NODES,
        api_port: int | None = None,
        extra_args: dict[str, list[str]] | None = None,
        timeout: float = 120.0,
    ) -> bool:
        """Start the cluster; returns False when it was already up (nothing was changed)."""
        if self.is_up():
            self.progress.say(f"The local cluster is already up (state in {self.state_dir})")
            return False
        if self._load() is not None or self.state_dir.exists():
            self.progress.say(f"Cleaning up a stale cluster in {self.state_dir}")
            self.down()
        if self.binaries is None:
            raise ClusterError("No control-plane binaries were given; run `olm dev build` first.")
        ports = self._choose_ports(api_port)
        layout = Layout(self.state_dir, self.binaries.bin_dir, self.binaries.stages)
        plan = Plan(layout, ports, extra_args or {})
        try:
            plan = dataclasses.replace(plan, network=self._pod_network())
            self._start(plan, nodes, timeout)
        except BaseException as exc:
            self._abort()
            if isinstance(exc, ClusterError):
                raise
            if isinstance(exc, SpawnError):
                raise ClusterError(f"{exc} Nothing was left running.") from exc
            raise ClusterError(f"Starting the local cluster failed: {exc}") from exc
        return True

    def _pod_network(self) -> network.ClusterNetwork | None:
        """Claim this cluster's block of the pod network (docs/pod-network.md), or say once why
        there is none: the cluster works without it, but no webhook can be called."""
        reason = (
            "turned off by OLM_PY_POD_NETWORK=0"
            if os.environ.get(network.ENABLE_ENV) == "0"
            else network.unavailable_reason()
        )
        if reason is None:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            try:
                claimed = network.allocate(self.state_dir)
            except (network.NetworkError, OSError) as exc:
                reason = str(exc)
            else:
                self.progress.say(
                    f"Pod network {claimed.block} (pods {claimed.pod_cidr}, Services "
                    f"{claimed.service_cidr}), reachable from this machine only"
                )
                return claimed
        self.progress.say(
            f"No pod network: {reason}. Pods share the host's network and the kube-apiserver "
            "cannot call webhooks or API services."
        )
        return None

    def _choose_ports(self, api_port: int | None) -> Ports:
        if api_port is not None:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                try:
                    probe.bind((LOOPBACK, api_port))
                except OSError as exc:
                    raise ClusterError(
                        f"Port {LOOPBACK}:{api_port}, asked for kube-apiserver, is already in use "
                        f"({exc.strerror}). Stop whatever listens there, or leave out --api-port "
                        "to have a free port chosen."
                    ) from exc
        picked = [port for port in free_ports(6) if port != api_port]
        etcd_client, etcd_peer, kcm, scheduler = picked[:4]
        apiserver = api_port if api_port is not None else picked[4]
        return Ports(etcd_client, etcd_peer, apiserver, kcm, scheduler)

    def _start(self, plan: Plan, nodes: int, timeout: float) -> None:
        layout = plan.layout
        layout.state_dir.mkdir(parents=True, exist_ok=True)
        layout.logs_dir.mkdir(exist_ok=True)
        record: dict[str, Any] = {
            "api_url": plan.api_url,
            "ports": plan.ports.__dict__,
            "bin_dir": str(layout.bin_dir),
            "processes": [],
            "ready": False,
        }
        self._save(record)
        self.progress.say("Generating a CA, serving and admin certificates")
        keys = pki.generate(layout.pki_dir)
        layout.kubeconfig.write_text(
            json.dumps(
                kubeconfig(plan.api_url, keys.ca_cert, keys.admin_cert, keys.admin_key), indent=2
            )
        )
        context = health.admin_context(keys.ca_cert, keys.admin_cert, keys.admin_key)
        checks: dict[str, Callable[[], tuple[bool, str]]] = {
            ETCD: lambda: health.etcd_healthy(plan.ports.etcd_client),
            APISERVER: lambda: health.apiserver_ready(plan.api_url, context),
            CONTROLLER_MANAGER: lambda: health.component_healthy(plan.ports.controller_manager),
            SCHEDULER: lambda: health.component_healthy(plan.ports.scheduler),
            KWOK: lambda: (True, "running"),
            POD_RUNNER: lambda: (True, "running"),
        }
        deadline = time.monotonic() + timeout
        started: dict[str, ProcessRecord] = {}
        for name in START_ORDER:
            self.progress.say(f"Starting {name}")
            _, proc = spawn(name, plan.argv(name), layout.log(name))
            started[name] = proc
            record["processes"].append(proc.to_json())
            self._save(record)
            if name in (ETCD, APISERVER):
                self._await_component(name, proc, checks[name], deadline, layout)
        for name in (CONTROLLER_MANAGER, SCHEDULER, KWOK, POD_RUNNER):
            self._await_component(name, started[name], checks[name], deadline, layout)
        # A component may still die shortly after its first healthy answer (bad flags that
        # are only read later, a port lost to a race): check once more before going on.
        time.sleep(0.3)
        for name, proc in started.items():
            if not is_running(proc):
                self._component_failed(name, layout, "exited right after starting")
        self._add_nodes(nodes, deadline)
        start_registries(record, layout, self._save, self.progress)
        record["ready"] = True
        record["nodes"] = nodes
        self._save(record)

    def _await_component(
        self,
        name: str,
        proc: ProcessRecord,
        check: Callable[[], tuple[bool, str]],
        deadline: float,
        layout: Layout,
    ) -> None:
        ok, detail = wait_for(
            check, timeout=max(1.0, deadline - time.monotonic()), alive=lambda: is_running(proc)
        )
        if ok:
            self.progress.say(f"{name} is healthy")
            return
        if not is_running(proc):
            self._component_failed(name, layout, "exited during start")
        self._component_failed(
            name, layout, f"did not become healthy in time (last answer: {detail})"
        )

    def _component_failed(self, name: str, layout: Layout, what: str) -> None:
        tail = log_tail(layout.log(name))
        hint = ""
        if "address already in use" in tail:
            hint = " A port it needs was taken by another process; run `olm dev up` again."
        raise ClusterError(
            f"{name} {what}.{hint} Everything started so far has been stopped. "
            f"Its log is {layout.log(name)}; last lines:\n{tail}"
        )

    def _add_nodes(self, count: int, deadline: float) -> None:
        self.progress.say(f"Registering {count} fake nodes managed by kwok")
        items = [fake_node(f"kwok-node-{index}") for index in range(count)]
        self.kubectl(
            "apply",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
        )

        def nodes_ready() -> tuple[bool, str]:
            listing = json.loads(self.kubectl("get", "nodes", "-o", "json"))
            waiting = []
            for node in listing["items"]:
                conditions = {
                    c["type"]: c["status"] for c in node.get("status", {}).get("conditions", [])
                }
                taints = [t["key"] for t in node.get("spec", {}).get("taints", []) or []]
                if conditions.get("Ready") != "True" or "node.kubernetes.io/not-ready" in taints:
                    waiting.append(node["metadata"]["name"])
            return not waiting and len(listing["items"]) >= count, f"waiting for {waiting}"

        def default_account() -> tuple[bool, str]:
            try:
                self.kubectl("get", "serviceaccount", "default", "-n", "default")
            except ClusterError as exc:
                return False, str(exc)
            return True, "ok"

        for check, what in (
            (nodes_ready, "nodes to become Ready"),
            (default_account, "the default ServiceAccount"),
        ):
            ok, detail = wait_for(
                check, timeout=max(1.0, deadline - time.monotonic()), interval=0.5
            )
            if not ok:
                raise ClusterError(
                    f"Timed out waiting for {what} ({detail}). See the component logs in "
                    f"{self.state_dir / 'logs'}; everything started has been stopped."
                )
        self.progress.say("Nodes are Ready; the cluster is usable")

    def _abort(self) -> None:
        """Stop whatever a failed `up` started, keep the logs, forget the rest of the state."""
        for proc in reversed(self.processes()):
            stop(proc)
        self._release_network()
        for child in self.state_dir.iterdir() if self.state_dir.exists() else []:
            if child.name == "logs":
                continue
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)

    # ----- processes that run against the cluster ----------------------------------------------

    def start_process(
        self, name: str, argv: list[str], *, env: dict[str, str] | None = None
    ) -> bool:
        """Run `argv` (e.g. `olm run`) as part of this cluster, so `down` stops it too.

        `env` replaces the default environment (ours plus `olm dev env`). Returns False when a
        process of that name is already running. On a reference-OLM cluster only the reference
        components may start: olm-py and the real OLM must never reconcile one API server."""
        data = self._load()
        if data is None:
            raise ClusterError(f"No cluster is recorded in {self.state_dir}; run `olm dev up`.")
        reference_info = data.get(REFERENCE_KEY)
        if isinstance(reference_info, dict) and name not in reference_info.get("processes", []):
            raise ClusterError(
                f"The local cluster in {self.state_dir} runs the real OLM "
                f"{reference_info.get('version', '')} (`olm dev up --reference-olm`); {name} must not "
                "run on it. Use a cluster of its own (another --state-dir)."
            )
        if any(r.name == name and is_running(r) for r in self.processes()):
            return False
        if env is None:
            env = {**os.environ, **self.env()}
        _, record = spawn(name, argv, self.state_dir / "logs" / f"{name}.log", env=env)
        data["processes"] = [p for p in data["processes"] if p["name"] != name] + [record.to_json()]
        self._save(data)
        return True

    # ----- the reference OLM (olm/devcluster/reference.py) ---------------------------------------

    def reference_olm(self) -> dict[str, Any] | None:
        """What `olm dev up --reference-olm` recorded; None on an olm-py cluster."""
        info = (self._load() or {}).get(REFERENCE_KEY)
        return info if isinstance(info, dict) else None

    def record_reference_olm(self, info: dict[str, Any]) -> None:
        data = self._load()
        if data is None:
            raise ClusterError(f"No cluster is recorded in {self.state_dir}; run `olm dev up`.")
        data[REFERENCE_KEY] = info
        self._save(data)

    def abandon(self) -> None:
        """What a failed `up` does: stop everything, keep the logs, forget the rest."""
        self._abort()

    # ----- down --------------------------------------------------------------------------------

    def down(self) -> list[str]:
        """Stop the processes this cluster started (by PID), then remove its state directory."""
        stopped = []
        for proc in reversed(self.processes()):
            if is_running(proc):
                self.progress.say(f"Stopping {proc.name} (pid {proc.pid})")
                stop(proc)
                stopped.append(proc.name)
        self._release_network()
        shutil.rmtree(self.state_dir, ignore_errors=True)
        return stopped

    def _release_network(self) -> None:
        """Remove the pod network's namespaces, links and routes (after the pod runner)."""
        try:
            released = network.release(self.state_dir)
        except (network.NetworkError, OSError) as exc:
            self.progress.say(f"Removing the pod network failed: {exc}")
            return
        if released is None:
            return
        self.progress.say(f"Removed the pod network {released.block}")
        left = network.leftovers(released)
        if left:
            self.progress.say(f"Still present after removing the pod network: {', '.join(left)}")
