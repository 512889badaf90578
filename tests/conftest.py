"""Shared pytest fixtures: a real local control plane, and a fresh namespace per test; the
marker of each test's folder; the logs and states attached to a failing cluster test.
The helpers the fixtures hand out (ControlPlane, OlmOperator, wait_for...) live in
tests/support, where test modules import them from.

The control plane is session-scoped. With OLM_TEST_CLUSTER=reuse the tests use the cluster
that `olm dev up` started (fast iteration); otherwise the session starts its own cluster in a
state directory of its own and stops it at the end. A session that crashed leaves its
cluster behind; the next session stops it by the PIDs it recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import settings

from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.devcluster.components import START_ORDER
from olm.devcluster.process import log_tail
from olm.progress import Progress
from tests.support.cluster import (
    ControlPlane,
    fresh_namespace,
    namespace_report,
    session_state_root,
)
from tests.support.olm_run import KubectlOperator, OlmOperator
from tests.support.registry import Cdn, catalog_image

# Fuzz sizes. `make test` and `make unit` run 1,000 examples per fuzz test, the same ones on
# every run (HYPOTHESIS_PROFILE=thorough: CI is deterministic); a bare `pytest` runs 200 drawn
# afresh each time (quick), so `pytest -m unit` stays under a minute while it still explores.
settings.register_profile("thorough", max_examples=1000, derandomize=True)
settings.register_profile("quick", max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "quick"))

REUSE_ENV = "OLM_TEST_CLUSTER"


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


def _sweep_crashed_sessions() -> None:
    """Stop clusters left by test sessions whose pytest process is gone."""
    root = session_state_root()
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
    state = session_state_root() / f"session-{os.getpid()}"
    cluster = DevCluster(state, binaries=binaries, progress=progress)
    cluster.up()
    try:
        manifests.install(cluster)
        yield ControlPlane(cluster, binaries)
    finally:
        cluster.down()


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
        # The status a person reads when a story stalls (phase, reason, conditions, catalog
        # connection), so a story needs no try/except of its own to show it.
        try:
            summary = namespace_report(plane, namespace)
        except Exception as failed:  # the cluster itself may be what failed
            summary = f"(not read: {failed})"
        report.sections.append((f"status in {namespace}", summary))


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


@pytest.fixture
def token_registry() -> Iterator[str]:
    """A registry that asks for a bearer token and redirects blobs to a CDN (`Cdn`), serving
    the samples catalog image; used by the integration and e2e image tests."""
    Cdn.image = catalog_image()
    Cdn.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Cdn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
