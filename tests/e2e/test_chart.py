"""olm-py in the cluster, the user's way: `helm install` of charts/olm-py, or `olm install`.

Each story starts a fresh local cluster of its own (no CRDs, no namespaces, and no `olm run` on
the host): the session's `control_plane` has OLM's manifests pre-installed and may have a host
`olm run` (the `olm_operator` fixture) running, which would be a second OLM.

The local pod runner runs the chart's pods as `olm run` processes authenticated as the chart's
ServiceAccount, so the stories below exercise exactly the chart's RBAC.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

import olm
from olm.progress import Progress
from tests.support.chart import STARTED, fresh_cluster, lease_holder, olm_crds, olm_pods, pod_dir
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.paths import REPO
from tests.support.stories import SAMPLE, operator_group, phase, wait_phase

CHART = REPO / "charts" / "olm-py"
# The chart has no default image; on the local cluster, pods of any `.../olm-py` image run as
# this venv's `olm` (olm/devcluster/podrunner.py). `make image` builds this one.
IMAGE_REPOSITORY = "localhost/olm-py"
IMAGE = f"{IMAGE_REPOSITORY}:dev"
SET_IMAGE = ("--set", f"image.repository={IMAGE_REPOSITORY}")
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
SA_USER = "system:serviceaccount:olm:olm-py"
OLM_METRICS = (
    "csv_count",
    "csv_succeeded",
    "install_plan_count",
    "subscription_count",
    "catalog_source_count",
    "catalogsource_ready",
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def helm_plane() -> Iterator[ControlPlane]:
    yield from fresh_cluster("chart")


@pytest.fixture
def helm(helm_plane: ControlPlane, tmp_path: Path) -> Callable[..., str]:
    from olm.devcluster.tools import ensure_helm

    binary = ensure_helm(progress=Progress())
    env = {
        **helm_plane.env(),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }

    def run(*args: str) -> str:
        result = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, env=env, timeout=300
        )
        assert result.returncode == 0, f"helm {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result.stdout

    return run


# ----- what a person would look at ---------------------------------------------------------


def olm_processes(plane: ControlPlane) -> dict[int, dict[str, str]]:
    """pid -> environment of every `olm run` process of this cluster (host or pod)."""
    found: dict[int, dict[str, str]] = {}
    admin = str(plane.kubeconfig)
    pods_dir = str(plane.cluster.state_dir / "pods")
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            raw = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"run" not in argv or not any(a.endswith((b"/olm", b"olm.cli")) for a in argv):
            continue
        env = dict(item.decode().split("=", 1) for item in raw if b"=" in item)
        kubeconfig = env.get("KUBECONFIG", "")
        if kubeconfig == admin or kubeconfig.startswith(pods_dir):
            found[int(proc.name)] = env
    return found


def pid_of(plane: ControlPlane, pod: str) -> int:
    for pid, env in olm_processes(plane).items():
        if env.get("POD_NAME") == pod:
            return pid
    return 0


def metrics_port(plane: ControlPlane, pod: str) -> int:
    ports = json.loads((pod_dir(plane, pod) / "ports.json").read_text())
    return int(ports["olm-py"]["8080"])


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def kubectl_csv_story(plane: ControlPlane, namespace: str) -> None:
    """The getting-started story: kubectl apply a CSV with its CRD and RBAC -> Succeeded."""
    plane.kubectl("create", "namespace", namespace)
    operator_group(plane, namespace)
    plane.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    plane.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
    csv = yaml.safe_load((SAMPLE / f"{OLD}.csv.yaml").read_text())
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(csv))
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")


def subscribe(plane: ControlPlane, namespace: str) -> None:
    plane.kubectl("create", "namespace", namespace)
    operator_group(plane, namespace)
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "memcached"},
        "spec": {
            "name": "memcached-operator",
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
            "installPlanApproval": "Automatic",
            "startingCSV": OLD,
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def subscription_completes(
    plane: ControlPlane, namespace: str, timeout: float = STEP_TIMEOUT
) -> None:
    """The Subscription story's end: the channel head Succeeded, the Subscription at it."""
    wait_for(
        lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=timeout,
        what=f"{NEW} Succeeded in {namespace}",
    )
    status = wait_for(
        lambda: (
            (
                s := plane.get_json(
                    "subscription.operators.coreos.com", "memcached", "-n", namespace
                )["status"]
            ).get("state")
            == "AtLatestKnown"
            and s
        ),
        what="AtLatestKnown",
    )
    assert status["installedCSV"] == NEW


# ----- the stories -------------------------------------------------------------------------


def test_helm_install_runs_olm_py_as_the_charts_service_account(
    helm_plane: ControlPlane, helm: Callable[..., str]
) -> None:
    plane = helm_plane
    assert olm_crds(plane) == [], "the cluster must start without OLM"

    helm("install", "olm-py", str(CHART), *SET_IMAGE, "--wait", "--timeout=3m")

    # The rendered manifests pass the API server's strict server-side validation.
    rendered = helm("template", "olm-py", str(CHART), *SET_IMAGE)
    result = plane.kubectl(
        "apply", "--dry-run=server", "--validate=strict", "-f", "-", stdin=rendered
    )
    assert "(server dry run)" in result.stdout

    # Two pods, each running `olm run` as the chart's ServiceAccount; no olm-py on the host.
    pods = wait_for(lambda: len(olm_pods(plane)) == 2 and olm_pods(plane), what="2 olm-py pods")
    wait_for(lambda: all(pid_of(plane, pod) for pod in pods), what="their olm run processes")
    for pid, env in olm_processes(plane).items():
        assert env.get("POD_NAME") in pods, f"pid {pid} is an olm run outside the chart's pods"
        config = json.loads(Path(env["KUBECONFIG"]).read_text())
        assert config["users"][0]["name"] == SA_USER
        assert env["POD_NAMESPACE"] == "olm"
    wait_for(lambda: lease_holder(plane) in pods, timeout=60, what="a leader among the pods")

    # Users browse the catalogs first: the PackageManifest API, served by the pods behind
    # Service olm/packageserver-service (reached at the pods' IPs on the local pod network).
    if (plane.cluster.state_dir / "network.json").is_file():
        listed = wait_for(
            lambda: (
                (r := plane.kubectl("get", "packagemanifests", "-n", "default", check=False))
                and "memcached-operator" in r.stdout
                and r.stdout
            ),
            timeout=STEP_TIMEOUT,
            what="kubectl get packagemanifests answered by the chart's olm-py",
        )
        assert "olm-py samples" in listed

    # The kubectl story and the Subscription story, reconciled by the chart's olm-py.
    kubectl_csv_story(plane, "chart-kubectl")
    subscribe(plane, "chart-subscription")
    subscription_completes(plane, "chart-subscription")

    # Prometheus metrics of the leader, with OLM's names and the stories' values.
    leader = lease_holder(plane)
    text = wait_for(
        lambda: (t := scrape(metrics_port(plane, leader))) and f'"{NEW}"' in t and t,
        timeout=60,
        what="the leader's metrics to show the installed CSV",
    )
    for name in OLM_METRICS:
        assert f"\n{name}" in text or text.startswith(name), f"no {name} in /metrics"
    succeeded = [
        line for line in text.splitlines() if line.startswith("csv_succeeded{") and NEW in line
    ]
    assert succeeded and succeeded[0].endswith(" 1.0"), succeeded


def test_the_pods_are_admitted_under_pod_security_restricted(helm_plane: ControlPlane) -> None:
    """The chart's namespace enforces Pod Security `restricted`, the API server's PodSecurity
    admission really enforces it there, and the chart's pods were admitted and are ready."""
    plane = helm_plane
    labels = plane.get_json("namespace", "olm")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
    # The admission plugin is on (default since Kubernetes 1.25): a pod that breaks
    # `restricted` is refused in that namespace, and the reason names the profile.
    refused = plane.kubectl(
        "run",
        "psa-probe",
        "-n",
        "olm",
        "--image=registry.invalid/probe:1",
        "--dry-run=server",
        "--overrides",
        json.dumps(
            {
                "spec": {
                    "containers": [
                        {"name": "psa-probe", "image": "x", "securityContext": {"privileged": True}}
                    ]
                }
            }
        ),
        check=False,
    )
    assert refused.returncode != 0 and 'violates PodSecurity "restricted' in refused.stderr, (
        refused.stdout + refused.stderr
    )

    # The chart's pods: admitted there (they exist), Running and Ready.
    def ready() -> list[str]:
        pods = plane.get_json("pods", "-n", "olm", "-l", "app.kubernetes.io/name=olm-py")["items"]
        return [
            p["metadata"]["name"]
            for p in pods
            if any(
                c["type"] == "Ready" and c["status"] == "True"
                for c in (p.get("status") or {}).get("conditions") or []
            )
        ]

    assert len(wait_for(lambda: len(ready()) == 2 and ready(), what="2 ready olm-py pods")) == 2
    # The same pod again, checked once more by the admission (no warning, no refusal).
    pod = plane.get_json("pods", "-n", "olm", "-l", "app.kubernetes.io/name=olm-py")["items"][0]
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "olm-py-admission-probe", "namespace": "olm"},
        "spec": {k: v for k, v in pod["spec"].items() if k not in ("nodeName",)},
    }
    admitted = plane.kubectl("create", "--dry-run=server", "-f", "-", stdin=json.dumps(probe))
    assert "created (server dry run)" in admitted.stdout
    assert "PodSecurity" not in admitted.stderr, admitted.stderr


def olm_py_logs(plane: ControlPlane) -> str:
    """Everything the chart's olm-py containers wrote, as the pod runner keeps it."""
    return "".join(
        path.read_text(errors="replace")
        for path in sorted((plane.cluster.state_dir / "pods").glob("olm_olm-py-*/olm-py.log"))
    )


def test_the_standby_takes_over_and_a_story_in_flight_completes(
    helm_plane: ControlPlane,
) -> None:
    plane = helm_plane
    pods = olm_pods(plane)
    leader = wait_for(lambda: lease_holder(plane) in pods and lease_holder(plane), what="leader")
    (standby,) = [pod for pod in pods if pod != leader]
    leader_pid = pid_of(plane, leader)
    assert leader_pid, f"no process for the leader {leader}"

    subscribe(plane, "chart-failover")  # the story is in flight...
    os.kill(leader_pid, signal.SIGSTOP)  # ...and the leader hangs (a dead node, a partition)
    try:
        stopped = time.monotonic()
        wait_for(
            lambda: lease_holder(plane) == standby, timeout=STEP_TIMEOUT, what=f"{standby} to lead"
        )
        took = time.monotonic() - stopped
        print(f"the standby took over {took:.1f}s after the leader stopped", file=sys.stderr)
        subscription_completes(plane, "chart-failover")
    finally:
        os.kill(leader_pid, signal.SIGKILL)  # the pod runner restarts it, as a kubelet would
    # The chart's RBAC sufficed for every story so far: no request of olm-py was forbidden.
    logs = olm_py_logs(plane)
    assert logs, "no olm-py container log found"
    forbidden = [line for line in logs.splitlines() if "forbidden" in line.lower()]
    assert not forbidden, "\n".join(forbidden[:10])


def test_helm_upgrade_rolls_olm_py_with_the_new_values(
    helm_plane: ControlPlane, helm: Callable[..., str]
) -> None:
    plane = helm_plane
    before = set(olm_pods(plane))
    helm(
        "upgrade",
        "olm-py",
        str(CHART),
        *SET_IMAGE,
        "--set",
        "logFormat=json,copiedCSVs=false",
        "--wait",
    )
    config = plane.get_json("olmconfig", "cluster")
    assert config["spec"]["features"]["disableCopiedCSVs"] is True

    def rolled() -> list[str]:
        pods = olm_pods(plane)
        return pods if len(pods) == 2 and not before & set(pods) else []

    pods = wait_for(rolled, timeout=120, what="the upgraded pods")
    wait_for(lambda: lease_holder(plane) in pods, timeout=60, what="a new pod to lead")
    for pod in pods:
        pid = wait_for(lambda pod=pod: pid_of(plane, pod), what=f"the process of {pod}")
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert b"--log-format=json" in argv
    # The new leader reconciles: a story started after the upgrade completes.
    kubectl_csv_story(plane, "chart-upgraded")


def test_helm_uninstall_keeps_crds_and_users_objects(
    helm_plane: ControlPlane, helm: Callable[..., str]
) -> None:
    plane = helm_plane
    crds = olm_crds(plane)
    assert len(crds) >= 8
    helm("uninstall", "olm-py", "--wait", "--timeout=2m")
    wait_for(lambda: not olm_processes(plane), timeout=60, what="the olm run processes to stop")
    assert olm_pods(plane) == []
    assert olm_crds(plane) == crds
    for namespace in ("olm", "operators", "chart-kubectl", "chart-subscription"):
        plane.kubectl("get", "namespace", namespace)
    assert phase(plane, "chart-kubectl", OLD) == "Succeeded/InstallSucceeded"
    assert phase(plane, "chart-subscription", NEW) == "Succeeded/InstallSucceeded"
    plane.kubectl(
        "get", "subscription.operators.coreos.com", "memcached", "-n", "chart-subscription"
    )
    plane.kubectl("get", "operatorgroup", "global-operators", "-n", "operators")
    plane.kubectl("get", "olmconfig", "cluster")
    for kind in ("deployment/olm-py", "serviceaccount/olm-py", "service/olm-py-metrics"):
        assert plane.kubectl("get", kind, "-n", "olm", check=False).returncode != 0
    assert plane.kubectl("get", "clusterrole", "olm-py", check=False).returncode != 0


@pytest.fixture(scope="module")
def install_plane() -> Iterator[ControlPlane]:
    for cluster in STARTED:  # the helm stories are done: one extra cluster at a time
        cluster.down()
    yield from fresh_cluster("install")


def olm_command(plane: ControlPlane, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "olm.cli", *args],
        capture_output=True,
        text=True,
        env=plane.env(),
        timeout=300,
    )


def test_olm_install_on_a_fresh_cluster(install_plane: ControlPlane) -> None:
    plane = install_plane
    assert olm_crds(plane) == []
    assert olm_command(plane, "status").returncode == 1  # nothing installed yet
    # No default image (nothing publishes one): the first install names it.
    refused = olm_command(plane, "install")
    assert refused.returncode == 1 and "olm install needs --image" in refused.stderr
    assert "make release REGISTRY=" in refused.stderr
    assert olm_crds(plane) == [], "a refused install changes nothing"

    started = time.monotonic()
    result = olm_command(plane, "install", "--image", IMAGE)
    took = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    print(f"`olm install` on a fresh cluster: ready in {took:.1f}s", file=sys.stderr)
    assert "ready" in result.stdout
    assert "CRDs" in result.stderr and "Deployment olm/olm-py" in result.stderr  # progress
    # Ready means a replica leads: olm-py reconciles from now on.
    assert lease_holder(plane) in olm_pods(plane)

    status = olm_command(plane, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "Available, 2/2 ready" in status.stdout and "8/8 established" in status.stdout

    kubectl_csv_story(plane, "install-kubectl")

    # Again: an upgrade/repair, not an error; it keeps the installed image.
    assert olm_command(plane, "install").returncode == 0
    assert f"olm-py:      {olm.__version__} ({IMAGE})" in olm_command(plane, "status").stdout

    # CRDs with users' objects are not deleted unless forced.
    refused = olm_command(plane, "uninstall", "--delete-crds")
    assert refused.returncode == 1
    assert "refusing to delete OLM's CRDs" in refused.stderr and "--force" in refused.stderr
    assert len(olm_crds(plane)) == 8
    assert olm_pods(plane), "a refused uninstall changes nothing"

    removed = olm_command(plane, "uninstall")
    assert removed.returncode == 0, removed.stderr
    assert olm_pods(plane) == []
    assert len(olm_crds(plane)) == 8
    assert phase(plane, "install-kubectl", OLD) == "Succeeded/InstallSucceeded"
    assert olm_command(plane, "status").returncode == 1

    forced = olm_command(plane, "uninstall", "--delete-crds", "--force")
    assert forced.returncode == 0, forced.stderr
    wait_for(lambda: olm_crds(plane) == [], what="OLM's CRDs to be deleted")
