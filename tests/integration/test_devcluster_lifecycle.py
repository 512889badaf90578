"""`olm dev up` / `down` of a cluster of its own, and the ways starting one can fail.

Each failure must give a clear error and leave nothing of ours running.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from olm.api.devbridge import HOST_BRIDGE_ANNOTATION
from olm.devcluster import network
from olm.devcluster.build import Binaries, ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.image.cache import BlobCache
from olm.image.pull import Options, label_of
from olm.image.reference import parse
from tests.support.cluster import STEP_TIMEOUT, ControlPlane
from tests.support.pod_network import serving_pair


def our_processes(state_dir: Path) -> list[str]:
    """Command lines of live processes that refer to `state_dir` (our components do, and the
    pod runner's programs through their environment)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (proc / "environ").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if str(state_dir) in cmdline + environ and state != "Z":
            found.append(cmdline)
    return found


def network_claims(state_dir: Path) -> list[str]:
    """The machine-wide pod network claims (olm/devcluster/network.py) owned by `state_dir`."""
    claims = []
    for entry in network.REGISTRY_DIR.glob("slot-*.json"):
        try:
            owner = json.loads(entry.read_text())["state_dir"]
        except (OSError, ValueError, KeyError):
            continue
        if Path(owner) == state_dir.resolve():
            claims.append(entry.name)
    return claims


@pytest.fixture(scope="module")
def binaries(control_plane: ControlPlane) -> Binaries:
    # The session cluster already made sure the cache is complete.
    return ensure_binaries(build=False)


def olm_dev(state_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "olm.cli", "dev", f"--state-dir={state_dir}", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_up_then_down_leaves_no_process_running(tmp_path: Path, binaries: Binaries) -> None:
    state = tmp_path / "cluster"
    up = olm_dev(state, "up", "--nodes=2")
    try:
        assert up.returncode == 0, up.stderr
        assert "Nodes are Ready" in up.stderr and "[" in up.stderr  # progress with elapsed time
        check_up_and_down(tmp_path, state)
    finally:
        olm_dev(state, "down")  # whatever failed above, nothing of this cluster stays behind


def check_up_and_down(tmp_path: Path, state: Path) -> None:
    # etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok, the pod runner and
    # the local OCI registry (docker-registry, plain HTTP and TLS over one storage).
    running = our_processes(state)
    assert len(running) == 8, running
    assert sum("docker-registry" in cmdline for cmdline in running) == 2
    # ... where the samples catalog and its bundles are published as images.
    env = olm_dev(state, "env")
    assert env.returncode == 0, env.stderr
    (samples,) = [line for line in env.stdout.splitlines() if "OLM_SAMPLES_IMAGE=" in line]
    image = samples.split("=", 1)[1].strip("'\"")
    assert image.endswith("/olm-py/samples-catalog:latest")
    pulled = label_of(parse(image), Options(cache=BlobCache(tmp_path / "images")))
    assert pulled.labels["operators.operatorframework.io.index.configs.v1"] == "/configs"
    # The same image over TLS, whose certificate the cluster's CA signed.
    (tls,) = [line for line in env.stdout.splitlines() if "OLM_REGISTRY_TLS=" in line]
    over_tls = image.replace(image.split("/")[0], tls.split("=", 1)[1].strip("'\""))
    assert label_of(parse(over_tls), Options(cache=BlobCache(tmp_path / "tls"))).digest == (
        pulled.digest
    )
    again = olm_dev(state, "up")
    assert again.returncode == 0 and "already up" in again.stderr
    pod_network = network.load(state)
    if network.unavailable_reason(install=False) is None:
        # A pod with a network namespace of its own, and a pod runner that dies without
        # cleaning up: `down` must still remove every namespace, link and route.
        assert pod_network is not None
        start_a_pod_in_its_own_namespace(state, pod_network)
        bridge_a_service(state, pod_network)
        runner = next(p for p in DevCluster(state).processes() if p.name == "pod-runner")
        os.kill(runner.pid, signal.SIGKILL)
    down = olm_dev(state, "down")
    assert down.returncode == 0, down.stderr
    assert "kube-apiserver" in down.stdout
    assert our_processes(state) == []
    if pod_network is not None:
        assert network.leftovers(pod_network) == []
    assert network_claims(state) == []
    assert not state.exists()
    assert olm_dev(state, "status").returncode == 1


def bridge_a_service(state: Path, pod_network: network.ClusterNetwork) -> None:
    """A host bridge (docs/pod-network.md): a namespace of its own too, named `...b<i>`."""
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "bridged",
            "namespace": "default",
            "annotations": {HOST_BRIDGE_ANNOTATION: '{"5443": 40123}'},
        },
        "spec": {"ports": [{"port": 443, "targetPort": 5443}]},
    }
    DevCluster(state).kubectl("apply", "-f", "-", stdin=json.dumps(service))
    name = pod_network.bridge_names(network.BRIDGE_INDEXES[0])[0]
    deadline = time.monotonic() + STEP_TIMEOUT
    while f"netns {name}" not in network.leftovers(pod_network):
        assert time.monotonic() < deadline, "the pod runner made no host bridge"
        time.sleep(0.5)


def start_a_pod_in_its_own_namespace(state: Path, pod_network: network.ClusterNetwork) -> None:
    cluster = DevCluster(state)
    cert, key = serving_pair("echo.default.svc")
    cluster.kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "echo", "namespace": "default"},
                "spec": {
                    "containers": [
                        {
                            "name": "echo",
                            "image": "olm-py.local/echo-webhook:v1",
                            "volumeMounts": [
                                {
                                    "name": "cert",
                                    "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                }
                            ],
                        }
                    ],
                    "volumes": [{"name": "cert", "secret": {"secretName": "echo-cert"}}],
                },
            }
        ),
    )
    cluster.kubectl(
        "create",
        "secret",
        "generic",
        "echo-cert",
        "-n",
        "default",
        f"--from-literal=tls.crt={cert.decode()}",
        f"--from-literal=tls.key={key.decode()}",
    )
    deadline = time.monotonic() + STEP_TIMEOUT  # scheduled, then started: slow under load
    while not any(item.startswith("netns ") for item in network.leftovers(pod_network)):
        assert time.monotonic() < deadline, "the pod runner made no network namespace"
        time.sleep(0.5)


def test_port_already_taken_is_refused_before_anything_starts(
    tmp_path: Path, binaries: Binaries
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster = DevCluster(tmp_path / "cluster", binaries=binaries)
        with pytest.raises(
            ClusterError, match=rf"Port 127\.0\.0\.1:{port}.*already in use.*--api-port"
        ):
            cluster.up(api_port=port)
        result = olm_dev(tmp_path / "cli", "up", f"--api-port={port}")
    assert result.returncode == 1
    assert "already in use" in result.stderr and "Traceback" not in result.stderr
    assert our_processes(tmp_path) == []


def test_a_component_that_dies_at_start_is_reported_and_everything_stops(
    tmp_path: Path, binaries: Binaries
) -> None:
    state = tmp_path / "cluster"
    cluster = DevCluster(state, binaries=binaries)
    with pytest.raises(ClusterError) as failure:
        cluster.up(extra_args={"kube-apiserver": ["--no-such-flag=1"]})
    message = str(failure.value)
    assert "kube-apiserver exited during start" in message
    assert "unknown flag: --no-such-flag" in message
    assert "Everything started so far has been stopped" in message
    assert our_processes(state) == [], "etcd, started before the apiserver, must be stopped"
    assert network_claims(state) == [], "the pod network of a failed start is released"
    assert (state / "logs" / "kube-apiserver.log").is_file(), "logs are kept for diagnosis"


def test_a_corrupt_binary_is_reported_and_nothing_is_left(
    tmp_path: Path, binaries: Binaries
) -> None:
    fake = tmp_path / "cache"
    (fake / "bin").mkdir(parents=True)
    for binary in binaries.bin_dir.iterdir():
        (fake / "bin" / binary.name).symlink_to(binary)
    (fake / "kwok-stages.yaml").symlink_to(binaries.stages)
    (fake / "bin" / "kube-apiserver").unlink()
    (fake / "bin" / "kube-apiserver").write_bytes(b"\x7fELF but not really")
    (fake / "bin" / "kube-apiserver").chmod(0o755)
    cluster = DevCluster(tmp_path / "cluster", binaries=Binaries(fake))
    with pytest.raises(ClusterError, match=r"kube-apiserver could not be started.*olm dev build"):
        cluster.up()
    assert our_processes(tmp_path / "cluster") == []


def test_a_cluster_left_half_started_is_cleaned_up_by_the_next_up(
    tmp_path: Path, binaries: Binaries
) -> None:
    state = tmp_path / "cluster"
    cluster = DevCluster(state, binaries=binaries)
    with pytest.raises(ClusterError):
        cluster.up(extra_args={"kube-controller-manager": ["--no-such-flag=1"]})
    assert our_processes(state) == []
    assert cluster.down() == []
