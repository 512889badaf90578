"""Shared pytest fixtures: a real local control plane, and a fresh namespace per test.

The control plane is session-scoped. With OLM_TEST_CLUSTER=reuse the tests use the cluster
that `olm dev up` started (fast iteration); otherwise the session starts its own cluster in a
state directory of its own and stops it at the end. A session that crashed leaves its
cluster behind; the next session stops it by the PIDs it recorded.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from olm.devcluster import manifests
from olm.devcluster.build import Binaries, ensure_binaries
from olm.devcluster.cluster import DevCluster, default_state_dir
from olm.devcluster.components import START_ORDER
from olm.devcluster.process import log_tail
from olm.devcluster.progress import Progress

REUSE_ENV = "OLM_TEST_CLUSTER"
SESSION_LABEL = "olm-py.test/session"
SESSION_ID = uuid.uuid4().hex[:8]
REPO = Path(__file__).resolve().parents[1]
# ../shared beside the repo holds the upstream fixtures and corpus the tests read.
SHARED = Path(os.environ.get("OLM_PY_SHARED", REPO.parent / "shared"))
# The bound of a state-based wait for one cluster step (a Deployment rollout, a CSV phase, an
# InstallPlan, a catalog READY, a namespace deletion): a step of seconds may take minutes on a
# loaded 2-core machine running the whole suite. Only a failing wait ever lasts this long.
STEP_TIMEOUT = 240.0


@dataclass
class ControlPlane:
    """What tests need of the running cluster."""

    cluster: DevCluster
    binaries: Binaries | None

    @property
    def kubeconfig(self) -> Path:
        return self.cluster.kubeconfig_path

    @property
    def bin_dir(self) -> Path:
        bin_dir = self.cluster.bin_dir
        assert bin_dir is not None
        return bin_dir

    def env(self) -> dict[str, str]:
        return {**os.environ, **self.cluster.env()}

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.bin_dir / "kubectl"), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
            )
        return result

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


# The folders of tests/ whose tests carry the folder's name as a marker (`pytest -m unit`).
FOLDER_MARKERS = ("unit", "integration", "e2e", "parity")
TESTS = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the folder it lives in, before `-m` selects by marker."""
    for item in items:
        try:
            folder = item.path.resolve().relative_to(TESTS).parts[0]
        except ValueError:
            continue  # a test outside tests/ (a path given on the command line)
        if folder in FOLDER_MARKERS:
            item.add_marker(folder)


def _test_state_root() -> Path:
    return default_state_dir().parent / "pytest"


def _sweep_crashed_sessions() -> None:
    """Stop clusters left by test sessions whose pytest process is gone."""
    root = _test_state_root()
    for state in root.glob("session-*") if root.is_dir() else []:
        owner = state.name.rsplit("-", 1)[-1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            DevCluster(state).down()


@pytest.fixture(scope="session")
def control_plane() -> Iterator[ControlPlane]:
    progress = Progress()
    if os.environ.get(REUSE_ENV) == "reuse":
        cluster = DevCluster(progress=progress)
        if not cluster.is_up():
            pytest.exit(
                f"{REUSE_ENV}=reuse but no cluster is up in {cluster.state_dir}: "
                "run `olm dev up` first, or unset the variable to let the tests start one.",
                returncode=2,
            )
        manifests.install(cluster)
        yield ControlPlane(cluster, None)
        return
    _sweep_crashed_sessions()
    binaries = ensure_binaries(progress=progress)
    state = _test_state_root() / f"session-{os.getpid()}"
    cluster = DevCluster(state, binaries=binaries, progress=progress)
    cluster.up()
    try:
        manifests.install(cluster)
        yield ControlPlane(cluster, binaries)
    finally:
        cluster.down()


def fresh_namespace(plane: ControlPlane) -> Iterator[str]:
    """A new namespace of this session (for a fixture to yield from), deleted in the background."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", name)
    plane.kubectl("label", "namespace", name, f"{SESSION_LABEL}={SESSION_ID}")
    yield name
    plane.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def namespace(control_plane: ControlPlane) -> Iterator[str]:
    """A fresh namespace, deleted (in the background) after the test."""
    yield from fresh_namespace(control_plane)


@pytest.fixture
def pod_network(control_plane: ControlPlane) -> None:
    """Tests whose webhooks or API services are really called need the local pod network."""
    if not (control_plane.cluster.state_dir / "network.json").is_file():
        pytest.skip("the local cluster has no pod network (docs/pod-network.md, Requirements)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """On failure of a test that used the cluster, attach the tails of the component logs."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    plane = getattr(item, "funcargs", {}).get("control_plane")
    if plane is None:
        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, ControlPlane):
                plane = value
    if isinstance(plane, ControlPlane):
        logs = plane.cluster.state_dir / "logs"
        for component in START_ORDER:
            report.sections.append(
                (f"{component} log (last lines)", log_tail(logs / f"{component}.log", 25))
            )
        _attach_olm_state(item, report, plane)


def _olm_run_stacks(operator: OlmOperator) -> str:
    """Every thread's stack in the running `olm run` (it dumps them on SIGUSR1), so a failure
    where olm-py stopped acting shows where its workers were."""
    process = operator.process
    if process is None or process.poll() is not None:
        return ""
    size = operator.log_path.stat().st_size
    if size <= operator.started_at:
        return ""  # just started: no handler for SIGUSR1 yet, which would kill it
    process.send_signal(signal.SIGUSR1)
    text, previous = "", None
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (not text or text != previous):
        time.sleep(0.2)  # the dump is written at once: read until it stops growing
        previous = text
        with operator.log_path.open("rb") as log:
            log.seek(size)
            text = log.read().decode(errors="replace")
    kept = ("Thread", "Current thread", "  File")
    return "\n".join(line for line in text.splitlines() if line.startswith(kept))


def _attach_olm_state(item: pytest.Item, report: pytest.TestReport, plane: ControlPlane) -> None:
    """What olm-py logged about the test's namespace and what its objects say, so a failure
    that happened only under load can be read afterwards."""
    funcargs = getattr(item, "funcargs", {})
    namespace = funcargs.get("namespace")
    operator = funcargs.get("olm_operator")
    if isinstance(operator, OlmOperator) and operator.log_path.is_file():
        lines = operator.log_path.read_text(errors="replace").splitlines()
        if isinstance(namespace, str):
            lines = [line for line in lines if namespace in line]
        report.sections.append(("olm run log (last lines)", "\n".join(lines[-60:])))
        stacks = _olm_run_stacks(operator)
        if stacks:
            report.sections.append(("olm run threads (SIGUSR1)", stacks))
    if isinstance(namespace, str):
        listing = plane.kubectl(
            "get",
            "csv,installplan,subscription,operatorgroup,deployment",
            "-n",
            namespace,
            "-o",
            "wide",
            check=False,
        )
        report.sections.append((f"objects in {namespace}", str(listing.stdout)))


class OlmOperator:
    """`olm run` as a subprocess against the test cluster; can be killed and restarted."""

    def __init__(self, plane: ControlPlane, log_path: Path) -> None:
        self.plane = plane
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0
        # Extra `olm run` flags of the current process (a story that needs a setting restarts
        # it with them, and without them when it ends: `restart()`).
        self.args: tuple[str, ...] = ()

    def start(self) -> None:
        # Where this process's output begins: until it has written something it may not have
        # installed its SIGUSR1 handler yet, and the signal would kill it (_olm_run_stacks).
        self.started_at = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olm.cli", "run", "--resync=30", *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.plane.env(),
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self, *args: str) -> None:
        """Kill it and start it again, with `args` as its extra flags (none: the defaults),
        and wait until its caches are synced (it acts on the cluster from then on, and a
        SIGTERM stops it cleanly)."""
        self.stop()
        self.args = args
        self.start()
        wait_for(self._synced, timeout=STEP_TIMEOUT, what="olm run to sync its caches")

    def _synced(self) -> bool:
        with self.log_path.open("rb") as log:
            log.seek(self.started_at)
            return b"caches synced" in log.read()


@pytest.fixture(scope="session")
def olm_operator(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OlmOperator]:
    operator = OlmOperator(control_plane, tmp_path_factory.mktemp("olm-run") / "olm-run.log")
    operator.start()
    yield operator
    operator.stop()
    assert operator.process is not None
    assert operator.process.returncode == 0, "olm run must stop cleanly on SIGTERM"


@pytest.fixture
def restore_olm(olm_operator: OlmOperator) -> Iterator[OlmOperator]:
    """The session's olm, for a story that restarts it with a setting (`restart(flags...)`):
    restarted with the defaults afterwards, for the session's other stories."""
    yield olm_operator
    if olm_operator.args:
        olm_operator.restart()


KubectlOperator = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def kubectl_operator(
    control_plane: ControlPlane, tmp_path_factory: pytest.TempPathFactory
) -> KubectlOperator:
    """`kubectl operator ARGS...` against the test cluster, as OLM users run it: kubectl finds
    the kubectl-operator v0.6.0 plugin (built or reused by `make kubectl-operator`) on PATH.
    `env` adds variables (SSL_CERT_FILE for `catalog add`). It runs in a directory of its own:
    `catalog add` makes and then removes `./cache` in its working directory. Returns the
    finished process; `check=True` (the default) fails the test on a non-zero exit, showing
    the output."""
    from olm.devcluster.tools import ensure_kubectl_operator

    plugin_dir = ensure_kubectl_operator(Progress()).parent
    workdir = tmp_path_factory.mktemp("kubectl-operator")

    def run(
        *args: str, check: bool = True, timeout: float = 120, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        environment = {**control_plane.env(), **(env or {})}
        environment["PATH"] = f"{plugin_dir}{os.pathsep}{environment.get('PATH', '')}"
        result = subprocess.run(
            [str(control_plane.bin_dir / "kubectl"), "operator", *args],
            capture_output=True,
            text=True,
            env=environment,
            timeout=timeout,
            cwd=workdir,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl operator {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout}{result.stderr}"
            )
        return result

    return run


class Recorder:
    """`kubectl get <kind> -w -o json` in the background: every state a user could see."""

    def __init__(self, plane: ControlPlane, namespace: str, resource: str = "csv") -> None:
        self.process = subprocess.Popen(
            [
                str(plane.bin_dir / "kubectl"),
                "get",
                resource,
                "-n",
                namespace,
                "-w",
                "-o",
                "json",
                "--output-watch-events",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=plane.env(),
            text=True,
        )
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        decoder = json.JSONDecoder()
        buffer = ""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            buffer += line
            while buffer.strip():
                try:
                    event, end = decoder.raw_decode(buffer.lstrip())
                except ValueError:
                    break
                buffer = buffer.lstrip()[end:]
                self.events.append((event["type"], event["object"]))

    def phases(self, name: str) -> list[str]:
        """'Phase/Reason' for each distinct state of `name`, in order, then 'DELETED'."""
        seen: list[str] = []
        for event_type, obj in list(self.events):
            if obj["metadata"]["name"] != name:
                continue
            status = obj.get("status") or {}
            state = (
                "DELETED"
                if event_type == "DELETED"
                else f"{status.get('phase', '')}/{status.get('reason', '')}"
            )
            if state != "/" and (not seen or seen[-1] != state):
                seen.append(state)
        return seen

    def wait_until_watching(self, name: str, timeout: float = 30) -> None:
        """Block until the watch has delivered `name` once, so later changes are all seen."""
        wait_for(
            lambda: any(obj["metadata"]["name"] == name for _, obj in list(self.events)),
            timeout=timeout,
            what=f"the watch to list {name}",
        )

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()


def wait_for(
    check: Any, timeout: float = 60, interval: float = 0.5, what: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")
