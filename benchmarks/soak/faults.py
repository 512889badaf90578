"""The soak's faults: real processes, real signals, in the order of what they tell us.

- `kill-olm`: kill -9 of an `olm run` (the leader when there are two), started again at once;
- `stop-apiserver`: SIGSTOP of kube-apiserver for 5-30 s, then SIGCONT;
- `restart-apiserver`: kill -9 of kube-apiserver, started again with its own command line
  (through DevCluster.start_process, so `down` still stops it), waited ready;
- `compact-etcd`: etcd compacted (physically) at its current revision through its HTTP API:
  every watch that resumes from an older resourceVersion gets 410 Gone and relists;
- `bounce-catalog`: kill -9 of the catalog server, down 5-30 s, back with a new generation
  (a new head, a new digest);
- `kill-leader`: with two `olm run --leader-elect`, kill -9 of the Lease holder; done when the
  other took the Lease; the killed one comes back as the standby;
- `node-notready`: SIGSTOP of kwok until a node reads NotReady (the node controller's grace),
  held 10 s, then SIGCONT until every node is Ready again.

Each returns a `FaultRecord` (start, end, detail); the end is when the fault is over (the
thing is back), the moment convergence is timed from.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.soak.catalog import Catalog
from benchmarks.watching import Kube, KubectlError
from olm.devcluster import health
from olm.devcluster.cluster import DevCluster
from olm.devcluster.components import APISERVER, KWOK

ORDER = (
    "kill-olm",
    "stop-apiserver",
    "restart-apiserver",
    "compact-etcd",
    "bounce-catalog",
    "kill-leader",
    "node-notready",
)
LEASE = ("olm", "olm-py")


@dataclass
class FaultRecord:
    kind: str
    start: float
    end: float = 0.0
    detail: str = ""


class OlmRun:
    """One `olm run` replica, its output appended to `log`. `supervise` restarts it when it
    exits on its own (as the Deployment's kubelet would: a replica that lost the Lease exits
    with status 1 by design); `kill` holds it down until `start`."""

    def __init__(self, env: dict[str, str], log: Path, args: tuple[str, ...]) -> None:
        self.env, self.log, self.args = env, log, args
        self.process: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.held = False  # killed on purpose, waiting for `start`
        self.exits: list[tuple[float, int]] = []  # (monotonic, status) of exits on its own

    @property
    def pid(self) -> int | None:
        alive = self.process is not None and self.process.poll() is None
        return self.process.pid if alive and self.process is not None else None

    def start(self) -> None:
        with self.lock:
            self.held = False
            self._spawn()

    def _spawn(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olm.cli", "run", *self.args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
            )

    def supervise(self) -> None:
        """Restart the process if it exited while not held down (call every second or so)."""
        with self.lock:
            process = self.process
            if self.held or process is None or process.poll() is None:
                return
            self.exits.append((time.monotonic(), int(process.returncode)))
            self._spawn()

    def kill(self) -> None:
        with self.lock:
            self.held = True
            if self.process is not None and self.process.poll() is None:
                self.process.kill()
                self.process.wait()

    def stop(self) -> None:
        with self.lock:
            self.held = True
            if self.process is not None and self.process.poll() is None:
                self.process.terminate()
                try:
                    self.process.wait(20)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()


@dataclass
class Injector:
    cluster: DevCluster
    kube: Kube
    replicas: list[OlmRun]
    catalog: Catalog
    rng: random.Random
    say: Callable[[str], None]
    api_down: Callable[[bool], None]  # tells the user to wait (True) or go on (False)
    resync: Callable[[], None]  # the observer re-lists what its watches may have missed
    counts: dict[str, int] = field(default_factory=dict)

    def available(self) -> list[str]:
        return [k for k in ORDER if k != "kill-leader" or len(self.replicas) > 1]

    def inject(self, kind: str) -> FaultRecord:
        record = FaultRecord(kind, time.monotonic())
        handler: Callable[[FaultRecord], None] = getattr(self, "_" + kind.replace("-", "_"))
        handler(record)
        record.end = time.monotonic()
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return record

    # ----- helpers ------------------------------------------------------------------------

    def _pid(self, name: str) -> int:
        return next(p.pid for p in self.cluster.processes() if p.name == name)

    def _api_ready(self, timeout: float = 120.0) -> None:
        keys = self.cluster.state_dir / "pki"
        context = health.admin_context(keys / "ca.crt", keys / "admin.crt", keys / "admin.key")
        url = json.loads(self.cluster.record_path.read_text())["api_url"]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if health.apiserver_ready(url, context)[0]:
                return
            time.sleep(0.5)
        raise RuntimeError("kube-apiserver did not become ready again")

    def leader(self) -> OlmRun | None:
        """The replica holding the Lease (by the pid in its identity), if any."""
        try:
            lease = self.kube.get_json("lease", LEASE[1], "-n", LEASE[0])
        except KubectlError:
            return None
        holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
        pid = holder.rsplit("_", 1)[-1]
        return next((r for r in self.replicas if str(r.pid) == pid), None)

    # ----- the faults ---------------------------------------------------------------------

    def _kill_olm(self, record: FaultRecord) -> None:
        victim = self.leader() or self.rng.choice(self.replicas)
        record.detail = f"pid {victim.pid}"
        victim.kill()
        time.sleep(self.rng.uniform(0.0, 0.5))
        victim.start()

    def _stop_apiserver(self, record: FaultRecord) -> None:
        pid, seconds = self._pid(APISERVER), self.rng.uniform(5.0, 30.0)
        record.detail = f"{seconds:.1f} s"
        self.api_down(True)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)
        self.api_down(False)

    def _restart_apiserver(self, record: FaultRecord) -> None:
        pid = self._pid(APISERVER)
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().rstrip(b"\0").split(b"\0")
        self.api_down(True)
        try:
            os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)  # our child (DevCluster.up started it): no zombie
            while Path(f"/proc/{pid}").exists() and _state(pid) not in ("Z", None):
                time.sleep(0.1)
            self.cluster.start_process(APISERVER, [a.decode() for a in argv], env=dict(os.environ))
            self._api_ready()
        finally:
            self.api_down(False)
        record.detail = f"was pid {pid}"
        self.resync()

    def _compact_etcd(self, record: FaultRecord) -> None:
        port = json.loads(self.cluster.record_path.read_text())["ports"]["etcd_client"]
        base = f"http://127.0.0.1:{port}/v3/kv"
        key = base64.b64encode(b"/registry").decode()
        header = _post(f"{base}/range", {"key": key, "limit": 1})["header"]
        revision = int(header["revision"])
        _post(f"{base}/compaction", {"revision": revision, "physical": True})
        record.detail = f"compacted at revision {revision}"

    def _bounce_catalog(self, record: FaultRecord) -> None:
        seconds = self.rng.uniform(5.0, 30.0)
        self.catalog.kill()
        time.sleep(seconds)
        self.catalog.advance()
        self.catalog.start()
        record.detail = f"down {seconds:.1f} s, back at generation {self.catalog.generation}"

    def _kill_leader(self, record: FaultRecord) -> None:
        victim = self.leader()
        if victim is None:
            record.detail = "no leader found; killed a replica"
            victim = self.rng.choice(self.replicas)
        old = victim.pid
        victim.kill()
        deadline = time.monotonic() + 120
        taken = None
        while time.monotonic() < deadline:
            taken = self.leader()
            if taken is not None and taken is not victim:
                break
            time.sleep(0.5)
        record.detail = record.detail or (
            f"leader pid {old} killed; pid {taken.pid if taken else None} took over "
            f"after {time.monotonic() - record.start:.1f} s"
        )
        victim.start()

    def _node_notready(self, record: FaultRecord) -> None:
        pid = self._pid(KWOK)
        os.kill(pid, signal.SIGSTOP)
        try:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and not self._nodes_not_ready():
                time.sleep(1.0)
            went = time.monotonic() - record.start
            time.sleep(10.0)
        finally:
            os.kill(pid, signal.SIGCONT)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self._nodes_not_ready():
            time.sleep(1.0)
        readied = self._ready_pods_again()
        record.detail = (
            f"NotReady after {went:.0f} s, Ready again after "
            f"{time.monotonic() - record.start:.0f} s; {readied} pods marked Ready again"
        )

    def _ready_pods_again(self) -> int:
        """What a kubelet does once its node is back and kwok does not: its running pods,
        marked not Ready by the node controller, report Ready again (kwok's pod-ready stage
        only moves Pending pods). Without this every Deployment stays unavailable for good."""
        try:
            pods = self.kube.get_json("pods", "--all-namespaces")["items"]
        except KubectlError:
            return 0
        patch = json.dumps(
            {
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True"},
                        {"type": "ContainersReady", "status": "True"},
                    ]
                }
            }
        )
        count = 0
        for pod in pods:
            status = pod.get("status") or {}
            ready = [c for c in status.get("conditions") or [] if c.get("type") == "Ready"]
            if status.get("phase") != "Running" or not ready or ready[0].get("status") == "True":
                continue
            meta = pod["metadata"]
            self.kube.run(
                "patch",
                "pod",
                meta["name"],
                "-n",
                meta["namespace"],
                "--subresource=status",
                "--type=strategic",
                "-p",
                patch,
                check=False,
            )
            count += 1
        return count

    def _nodes_not_ready(self) -> list[str]:
        try:
            nodes = self.kube.get_json("nodes")["items"]
        except KubectlError:
            return []
        return [
            n["metadata"]["name"]
            for n in nodes
            if any(
                c.get("type") == "Ready" and c.get("status") != "True"
                for c in (n.get("status") or {}).get("conditions") or []
            )
        ]


def _post(url: str, body: dict[str, object]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        loaded = json.loads(response.read())
    assert isinstance(loaded, dict)
    return loaded


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
