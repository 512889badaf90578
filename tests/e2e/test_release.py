"""An image a user can pull: `make release` publishes olm-py, and its chart installs with no values.

The story, on a fresh local cluster (nothing of OLM in it) and its local registry
(OLM_REGISTRY, plain HTTP on 127.0.0.1):
- `helm install` of the checkout's chart without `image.repository` fails at once, saying what
  to set and pointing at `make release`, with no release and none of the chart's objects made
  (Helm applies `crds/` before it reads values, so OLM's CRDs are there, as they would be);
- `olm dev release` (what `make release` runs) pushes the image `make image` built and the chart;
- `helm install` of the pushed OCI chart with no values brings olm-py up: two pods Running and
  ready, whose `/readyz` answers 200, one of them leading.

The image is the one `make image` built (`--no-build`; built here only when podman has none):
the local pod runner runs pods of any `.../olm-py` image as this venv's `olm`, so the release's
image is checked in the registry (it is the local image, byte for byte) rather than run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

import olm
from olm.devcluster.image import package_version
from olm.devcluster.image_base import podman_env
from olm.devcluster.registry import REGISTRY_ENV
from olm.image.cache import BlobCache
from olm.image.pull import Options, label_of
from olm.image.reference import parse
from olm.progress import Progress
from tests.support.chart import fresh_cluster, lease_holder, olm_crds, olm_pods, pod_dir
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.paths import REPO

pytestmark = pytest.mark.e2e

CHART = REPO / "charts" / "olm-py"
SOURCE_IMAGE = "localhost/olm-py:dev"
VERSION = f"{olm.__version__}-rc.1"  # VERSION=...: the image tag and the chart's version


@pytest.fixture(scope="module")
def release_plane() -> Iterator[ControlPlane]:
    yield from fresh_cluster("release")


@pytest.fixture(scope="module")
def local_image() -> str:
    """The image `make image` built, built now only if podman has none."""
    exists = subprocess.run(
        ["podman", "image", "exists", SOURCE_IMAGE], env=podman_env(), capture_output=True
    )
    if exists.returncode != 0:
        from olm.devcluster.image import build_image

        build_image(progress=Progress())
    return SOURCE_IMAGE


def image_id(reference: str) -> str:
    result = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Id}}", reference],
        env=podman_env(),
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


@pytest.fixture
def env(release_plane: ControlPlane, tmp_path: Path) -> dict[str, str]:
    """The cluster's environment, with a Helm home of the test's own (no user's logins)."""
    return {
        **release_plane.env(),
        "HELM_CACHE_HOME": str(tmp_path / "helm-cache"),
        "HELM_CONFIG_HOME": str(tmp_path / "helm-config"),
        "HELM_DATA_HOME": str(tmp_path / "helm-data"),
    }


def olm_release(env: dict[str, str] | None, *args: str) -> subprocess.CompletedProcess[str]:
    """`olm dev release ARGS`, the command `make release` runs, in a new process."""
    command = [sys.executable, "-m", "olm.cli", "dev", "release", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)


def helm(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    from olm.devcluster.tools import ensure_helm

    return subprocess.run(
        [str(ensure_helm()), *args], capture_output=True, text=True, env=env, timeout=300
    )


def ready_pods(plane: ControlPlane) -> list[str]:
    pods = plane.get_json("pods", "-n", "olm", "-l", "app.kubernetes.io/name=olm-py")["items"]
    ready = []
    for pod in pods:
        conditions = {c["type"]: c["status"] for c in pod["status"].get("conditions") or []}
        if pod["status"].get("phase") == "Running" and conditions.get("Ready") == "True":
            ready.append(pod["metadata"]["name"])
    return sorted(ready)


def readyz(plane: ControlPlane, pod: str) -> int:
    """The HTTP status of the pod's olm-py /readyz (its health port, mapped by the runner)."""
    try:
        ports = json.loads((pod_dir(plane, pod) / "ports.json").read_text())
        port = int(ports["olm-py"]["8081"])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as answer:
            return int(answer.status)
    except (OSError, KeyError, ValueError):
        return 0


def test_the_released_chart_installs_with_no_values_and_the_repo_chart_says_what_to_set(
    release_plane: ControlPlane, env: dict[str, str], local_image: str
) -> None:
    plane = release_plane
    registry = plane.env().get(REGISTRY_ENV)
    assert registry, f"`olm dev env` names no local registry ({REGISTRY_ENV})"
    assert olm_crds(plane) == [], "the cluster must start without OLM"

    # The checkout's chart names no image: helm install fails before creating anything.
    refused = helm(env, "install", "olm-py", str(CHART), "--wait", "--timeout=1m")
    assert refused.returncode != 0
    assert "image.repository is not set" in refused.stderr, refused.stderr
    assert "--set image.repository=<registry>/olm-py" in refused.stderr
    assert "make release REGISTRY=" in refused.stderr
    # No release and none of the chart's objects; Helm has applied crds/ already (it does that
    # before it reads the values), as a successful install would.
    assert helm(env, "list", "-A", "-q").stdout.strip() == ""
    for namespace in ("olm", "operators"):
        assert plane.kubectl("get", "namespace", namespace, check=False).returncode != 0

    # `make release REGISTRY=127.0.0.1:<port> VERSION=... PLAIN_HTTP=1`, reusing `make image`.
    released = olm_release(
        env, "--registry", registry, "--version", VERSION, "--plain-http", "--no-build"
    )
    assert released.returncode == 0, released.stderr
    image, chart = f"{registry}/olm-py:{VERSION}", f"oci://{registry}/charts/olm-py"
    assert released.stdout.split() == [image, f"{chart}:{VERSION}"]
    assert f"helm install olm-py {chart} --version {VERSION} --plain-http" in released.stderr
    assert "Pushing localhost/olm-py:dev as" in released.stderr  # progress

    # The registry holds exactly the local image under the release's tag.
    options = Options(cache=BlobCache(plane.cluster.state_dir / "blobs"), use_local_configs=False)
    reference = parse(image)
    pulled = label_of(reference, options)
    assert pulled.labels["org.opencontainers.image.title"] == "olm-py"
    assert pulled.labels["org.opencontainers.image.version"] == package_version()
    body, _, _ = options.client(reference).manifest(reference.repository, reference.reference)
    assert json.loads(body)["config"]["digest"] == f"sha256:{image_id(local_image)}"

    # The pushed chart, with no values, installs olm-py from that image.
    installed = helm(
        env,
        "install",
        "olm-py",
        chart,
        "--version",
        VERSION,
        "--plain-http",
        "--wait",
        "--timeout=3m",
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    deployment = plane.get_json("deployment", "olm-py", "-n", "olm")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == image
    assert deployment["metadata"]["labels"]["app.kubernetes.io/version"] == VERSION

    pods = wait_for(
        lambda: len(ready_pods(plane)) == 2 and ready_pods(plane),
        timeout=STEP_TIMEOUT,
        what="2 olm-py pods Running and Ready",
    )
    for pod in pods:
        wait_for(lambda pod=pod: readyz(plane, pod) == 200, what=f"{pod}'s /readyz to answer 200")
    wait_for(lambda: lease_holder(plane) in olm_pods(plane), timeout=60, what="a leader")


def test_a_release_to_a_registry_that_is_not_there_says_what_to_do(local_image: str) -> None:
    # Port 1 on loopback: nothing listens there.
    result = olm_release(None, "--registry", "127.0.0.1:1/team", "--no-build")
    assert result.returncode == 1
    assert "podman push) failed" in result.stderr
    assert "Nothing answers at 127.0.0.1:1: check REGISTRY" in result.stderr
    assert "Traceback" not in result.stderr
