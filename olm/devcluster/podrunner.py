"""Run the pods of local sample images as local processes (a tiny kubelet for kwok nodes).

kwok simulates every pod; for pods whose container image has a program (podprograms.py: a
local sample image `olm-py.local/<name>:<version>`, a stand-in, the olm-py image), this
component also runs it, so an operator's life follows what OLM does to its Deployment:

- a process starts when its pod is Running, and stops when the pod is deleted or ends;
- it authenticates as the pod's ServiceAccount (a TokenRequest token), so it holds exactly
  the RBAC its CSV asked for;
- its env is the container's env, with `fieldRef`s to the pod's metadata resolved;
- it dies with the runner (PR_SET_PDEATHSIG), so nothing outlives `olm dev down`.

Pods of a few images the real OLM and its e2e suite run (`STAND_INS` in podprograms.py: OLM's
configmap-server, opm, the suite's mock-extension-apiserver) get a stand-in program instead,
given the container's command (without its program) and args; they run like a sample's
(docs/pod-network.md, "Stand-ins").

Pods of the olm-py image itself (any repository whose last part is `olm-py`, e.g. the
`<registry>/olm-py:<version>` that `make release` pushes, or `localhost/olm-py:dev`) run as this
venv's `olm` with the container's arguments, so a chart-installed olm-py works with exactly the
chart's RBAC. They run on the host's network, so each declared containerPort of such a pod gets
a free host port of its own (replicas must not collide); `--<name>-port=N` arguments are
rewritten to it and the mapping is written to `<state>/pods/<ns>_<pod>/ports.json`
(`{"<container>": {"<containerPort>": hostPort}}`); `olm run` listens on 127.0.0.1 only. With
the pod network (and a pod IP, not hostNetwork), the pod IP also gets a namespace in which
`<pod IP>:<containerPort>` relays to that host port, so a Service selecting the pods works.

With the cluster's pod network (olm/devcluster/network.py, docs/pod-network.md), every other
program runs in a network namespace of its own whose `eth0` has the pod IP kwok gave the pod, so
the kube-apiserver reaches it at its Service's endpoints (webhooks, API services). Inside, the
kube-apiserver is at the same 127.0.0.1:<port> as on the host (a forwarder of this runner), and
`POD_IP` (and a `status.podIP` fieldRef) is the pod's address, where a server listens: the pod
IP in its namespace; 127.0.0.1 without the pod network, so nothing listens beyond loopback.
The runner also serves host bridges for selectorless Services (olm/devcluster/bridges.py).

Secret and ConfigMap volumes become local files (olm/devcluster/volumes.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from olm.api import body
from olm.devcluster import bridges, netns, network
from olm.devcluster.podprograms import is_olm_py_image, localize_ports, program_for, resolve_env
from olm.devcluster.volumes import MOUNTS_ENV, NotYetRunnable, materialize_volumes, mounts_for
from olm.kube.client import api_client
from olm.kube.gateway import Gateway
from olm.kube.pods import PodWatcher

RESTART_DELAY = 2.0
POD_IP_ENV = "POD_IP"

log = logging.getLogger("pod-runner")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _key(pod: dict[str, Any]) -> tuple[str, str]:
    return pod["metadata"]["namespace"], pod["metadata"]["name"]


def _die_with_parent() -> None:
    netns.libc().prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class PodRunner:
    def __init__(self, kubeconfig: Path, state_dir: Path) -> None:
        self.kubeconfig = kubeconfig
        self.pods_dir = state_dir / "pods"
        self.watcher = PodWatcher(api_client(kubeconfig))
        self.processes: dict[tuple[str, str, str], subprocess.Popen[bytes]] = {}
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.lock = threading.Lock()
        # The pod network (None: every pod shares the host's network).
        self.network = network.load(state_dir)
        self.forwarder = netns.Forwarder() if self.network else None
        self.gateway = Gateway(self.watcher.api, field_manager="olm-py-pod-runner")
        self.bridges = (
            bridges.HostBridges(self.network, self.forwarder, self.watcher, self.gateway)
            if self.network and self.forwarder
            else None
        )
        self.netns: dict[tuple[str, str], tuple[str, str]] = {}  # pod -> (namespace, pod IP)
        self.volumes: dict[tuple[str, str], dict[str, Path]] = {}
        self.waiting: dict[tuple[str, str], str] = {}  # pod -> why it cannot start yet
        if self.network:
            log.info("pod network %s: pods %s", self.network.block, self.network.pod_cidr)

    def _api_port(self) -> int:
        server = json.loads(self.kubeconfig.read_text())["clusters"][0]["cluster"]["server"]
        return int(str(server).rsplit(":", 1)[1].rstrip("/"))

    def _kubeconfig_for(self, pod: dict[str, Any], directory: Path) -> Path:
        namespace = pod["metadata"]["namespace"]
        account = pod["spec"].get("serviceAccountName") or "default"
        token = self.watcher.token_for(namespace, account)
        admin = json.loads(self.kubeconfig.read_text())
        # The same 127.0.0.1:<port> works inside a pod's namespace: the forwarder listens there.
        cluster = admin["clusters"][0]["cluster"]
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "local", "cluster": cluster}],
            "users": [
                {"name": f"system:serviceaccount:{namespace}:{account}", "user": {"token": token}}
            ],
            "contexts": [
                {
                    "name": "pod",
                    "context": {
                        "cluster": "local",
                        "user": f"system:serviceaccount:{namespace}:{account}",
                        "namespace": namespace,
                    },
                }
            ],
            "current-context": "pod",
        }
        path = directory / "kubeconfig"
        path.write_text(json.dumps(config))
        path.chmod(0o600)
        return path

    def _pod_netns(self, pod: dict[str, Any]) -> tuple[str, str]:
        """The pod's network namespace and IP, created on first use."""
        meta = pod["metadata"]
        pod_key = (meta["namespace"], meta["name"])
        existing = self.netns.get(pod_key)
        if existing is not None:
            return existing
        assert self.network is not None and self.forwarder is not None
        pod_ip = str((pod.get("status") or {}).get("podIP") or "")
        if not pod_ip:
            raise NotYetRunnable("the pod has no IP yet")
        for other, (_, other_ip) in list(self.netns.items()):
            if other_ip == pod_ip:  # kwok recycled the IP of a pod we have not seen go yet
                self._stop(*other)
        name = network.add_pod(self.network, pod_ip)
        try:
            self.forwarder.open(name, self._api_port())
        except network.NetworkError:
            network.remove_pod(self.network, pod_ip)
            raise
        self.netns[pod_key] = (name, pod_ip)
        log.info("pod %s/%s has network namespace %s at %s", *pod_key, name, pod_ip)
        return name, pod_ip

    def _start(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        pod_key = (meta["namespace"], meta["name"])
        pending = []
        for container in pod["spec"].get("containers") or []:
            command = program_for(container.get("image", ""), container)
            if command is not None and (*pod_key, container["name"]) not in self.processes:
                pending.append((container, command))
        if not pending:
            return
        directory = self.pods_dir / f"{meta['namespace']}_{meta['name']}"
        directory.mkdir(parents=True, exist_ok=True)
        if pod_key not in self.volumes:
            self.volumes[pod_key] = materialize_volumes(pod, directory, self.watcher.volume_data)
        for container, command in pending:
            self._start_container(pod, container, command, directory)
        self.waiting.pop(pod_key, None)

    def _start_container(
        self, pod: dict[str, Any], container: dict[str, Any], command: list[str], directory: Path
    ) -> None:
        meta = pod["metadata"]
        pod_key = (meta["namespace"], meta["name"])
        image = container.get("image", "")
        namespace, listen = None, "127.0.0.1"
        if is_olm_py_image(image):
            host_ports = self._host_ports(directory, container)
            command = localize_ports(command, host_ports)
            if "run" in command and not any(a.startswith("--bind-address") for a in command):
                command.append("--bind-address=127.0.0.1")  # the pod's ports, on loopback
            self._publish_ports(pod, host_ports)
        elif self.network is not None and not pod["spec"].get("hostNetwork"):
            namespace, listen = self._pod_netns(pod)
        env = {
            **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "PYTHONPATH")},
            # The pod's address: where its servers listen (loopback on the host's network).
            POD_IP_ENV: listen,
            **resolve_env(
                container, {**pod, "status": {**(pod.get("status") or {}), "podIP": listen}}
            ),
            "KUBECONFIG": str(self._kubeconfig_for(pod, directory)),
            "POD_NAME": meta["name"],
            "POD_NAMESPACE": meta["namespace"],
            MOUNTS_ENV: json.dumps(mounts_for(container, self.volumes.get(pod_key, {}))),
        }
        netns.libc()  # loaded before the fork: the child only calls into it
        netns_fd = netns.open_netns(namespace) if namespace else None

        def prepare() -> None:
            _die_with_parent()
            if netns_fd is not None:
                netns.enter(netns_fd)

        try:
            with (directory / f"{container['name']}.log").open("ab") as out:
                process = subprocess.Popen(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    env=env,
                    preexec_fn=prepare,
                )
        finally:
            if netns_fd is not None:
                os.close(netns_fd)
        self.processes[(*pod_key, container["name"])] = process
        log.info(
            "started %s for pod %s/%s (pid %d%s)",
            " ".join(command[1:]),
            meta["namespace"],
            meta["name"],
            process.pid,
            f", network namespace {namespace} at {listen}" if namespace else "",
        )

    def _publish_ports(self, pod: dict[str, Any], host_ports: dict[int, int]) -> None:
        """An olm-py image pod runs on the host's network; with the pod network, its pod IP
        gets a namespace where each containerPort relays to the port's host port, so a
        Service selecting the pod reaches it (docs/pod-network.md)."""
        has_ip = bool((pod.get("status") or {}).get("podIP"))
        if self.forwarder is None or pod["spec"].get("hostNetwork") or not has_ip:
            return
        try:
            namespace, pod_ip = self._pod_netns(pod)
            for port, host_port in host_ports.items():
                self.forwarder.open(namespace, port, address=pod_ip, target=host_port)
                log.info(
                    "pod %s/%s: %s:%d relays to 127.0.0.1:%d", *_key(pod), pod_ip, port, host_port
                )
        except network.NetworkError as exc:  # the process still runs, on 127.0.0.1
            log.warning("pod %s/%s: ports not published at its pod IP: %s", *_key(pod), exc)

    def _host_ports(self, directory: Path, container: dict[str, Any]) -> dict[int, int]:
        """A free host port for each containerPort (kept across restarts of the process)."""
        path = directory / "ports.json"
        recorded: dict[str, dict[str, int]] = json.loads(path.read_text()) if path.is_file() else {}
        mine = recorded.setdefault(container["name"], {})
        for port in container.get("ports") or []:
            mine.setdefault(str(port["containerPort"]), _free_port())
        path.write_text(json.dumps(recorded, indent=1, sort_keys=True))
        return {int(k): v for k, v in mine.items()}

    def _stop(self, namespace: str, name: str) -> None:
        for key in [k for k in self.processes if k[:2] == (namespace, name)]:
            process = self.processes.pop(key)
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            log.info("stopped the process of pod %s/%s", namespace, name)
        self.volumes.pop((namespace, name), None)
        self.waiting.pop((namespace, name), None)
        pod_netns = self.netns.pop((namespace, name), None)
        if pod_netns is not None and self.network is not None:
            if self.forwarder is not None:
                self.forwarder.close(pod_netns[0])
            network.remove_pod(self.network, pod_netns[1])
            log.info("removed network namespace %s of pod %s/%s", pod_netns[0], namespace, name)

    def _try_start(self, pod: dict[str, Any]) -> None:
        """Start what the pod runs; a pod that cannot start yet is retried by `supervise`."""
        meta = pod["metadata"]
        pod_key = (meta["namespace"], meta["name"])
        try:
            self._start(pod)
        except NotYetRunnable as exc:
            if self.waiting.get(pod_key) != str(exc):
                log.info("pod %s/%s waits: %s", *pod_key, exc)
            self.waiting[pod_key] = str(exc)

    def handle(self, event_type: str, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        pod_key = (meta["namespace"], meta["name"])
        with self.lock:
            ended = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            if event_type == "DELETED" or meta.get("deletionTimestamp") or ended:
                self.pods.pop(pod_key, None)
                self._stop(*pod_key)
            elif (pod.get("status") or {}).get("phase") == "Running":
                self.pods[pod_key] = pod
                self._try_start(pod)

    def restart_exited(self) -> None:
        with self.lock:
            for key, process in list(self.processes.items()):
                if process.poll() is not None:
                    log.warning(
                        "process of pod %s/%s exited (%s); restarting",
                        key[0],
                        key[1],
                        process.returncode,
                    )
                    del self.processes[key]
                    pod = self.pods.get(key[:2])
                    if pod is not None:
                        self._try_start(pod)
            for pod_key in list(self.waiting):
                pod = self.pods.get(pod_key)
                if pod is None:
                    self.waiting.pop(pod_key, None)
                    continue
                try:
                    self._try_start(pod)
                except Exception as exc:  # one pod's trouble stays its own
                    log.warning("cannot run pod %s/%s: %s", *pod_key, exc)

    def stop_all(self) -> None:
        with self.lock:
            for namespace, name in {k[:2] for k in self.processes} | set(self.netns):
                self._stop(namespace, name)
        if self.bridges is not None:
            self.bridges.stop_all()

    def run(self, stop: threading.Event) -> None:
        def supervise() -> None:
            while not stop.wait(RESTART_DELAY):
                try:
                    self.restart_exited()
                    if self.bridges is not None:
                        self.bridges.retry_failed()
                except Exception:  # the supervisor must not die
                    log.exception("supervising the pods' processes failed")

        threading.Thread(target=supervise, daemon=True).start()
        if self.bridges is not None:
            threading.Thread(target=self.bridges.run, args=(stop,), daemon=True).start()
        else:  # no bridges: nothing may say otherwise (a previous runner's, over the same etcd)
            with contextlib.suppress(Exception):
                bridges.withdraw(self.gateway)
        while not stop.is_set():
            try:
                for event_type, pod in self.watcher.events(stop):
                    try:
                        self.handle(event_type, pod)
                    except (
                        Exception
                    ) as exc:  # one pod's trouble (e.g. its account is gone) stays its own
                        meta = body.meta(pod)
                        log.warning(
                            "cannot run pod %s/%s: %s", meta.get("namespace"), meta.get("name"), exc
                        )
            except Exception:  # a broken watch is retried; the runner must not die
                log.exception("pod watch failed; retrying")
                stop.wait(1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="olm-pod-runner",
        description=(
            "Run the programs of the local cluster's pods (sample images, stand-ins, the olm-py"
            " image) as local processes while kwok simulates the pods: started when a pod is"
            " Running, stopped when it ends."
        ),
        epilog="Takes until SIGTERM or SIGINT. Writes each pod's files under STATE_DIR/pods/.",
    )
    parser.add_argument("--kubeconfig", required=True, type=Path)
    parser.add_argument("--state-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    stop = threading.Event()
    runner = PodRunner(args.kubeconfig, args.state_dir)

    def on_signal(*_: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    watcher = threading.Thread(target=runner.run, args=(stop,), daemon=True)
    watcher.start()
    while not stop.wait(0.5):
        pass
    runner.stop_all()
    return 0


if __name__ == "__main__":
    time.sleep(0)
    sys.exit(main())
