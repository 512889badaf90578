"""Images built by podman, not by olm-py, read by olm-py (issue 12, "opm interop"): a catalog
image and a bundle image built `FROM scratch` with the standard labels, in both of podman's
manifest formats (OCI and Docker v2 schema 2), pushed to the local docker-registry on
127.0.0.1 and read as the CatalogSource controller reads them."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from olm.catalog.samples import CATALOG
from olm.controllers.catalogimage import INDEX_LABEL, ImageCatalogs
from olm.devcluster.image_base import podman_env
from olm.devcluster.ports import free_ports
from olm.image.cache import BlobCache
from olm.image.pull import Options, pull, resolve
from olm.image.reference import parse
from tests.support.registry import BUNDLE, start_registry, stop_registry

BUNDLE_LABELS = {
    "operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
    "operators.operatorframework.io.bundle.manifests.v1": "manifests/",
    "operators.operatorframework.io.bundle.metadata.v1": "metadata/",
    "operators.operatorframework.io.bundle.package.v1": "memcached-operator",
    "operators.operatorframework.io.bundle.channels.v1": "alpha",
}

pytestmark = pytest.mark.skipif(
    shutil.which("podman") is None, reason="podman is not installed (make image installs it)"
)


@pytest.fixture(scope="module")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_ports(1)[0]
    process = start_registry(tmp_path_factory.mktemp("registry"), port)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stop_registry(process)


def podman(*args: str) -> str:
    done = subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"podman {' '.join(args)}: {done.stderr}"
    return done.stdout


def build_and_push(context: Path, labels: dict[str, str], reference: str, fmt: str) -> None:
    """`podman build` of a FROM-scratch image copying everything in `context`, pushed over
    plain HTTP to the local registry, then removed from podman's storage."""
    lines = ["FROM scratch", "COPY . /"]
    lines += [f'LABEL {key}="{value}"' for key, value in labels.items()]
    (context / "Containerfile").write_text("\n".join(lines) + "\n")
    (context / ".containerignore").write_text("Containerfile\n.containerignore\n")
    podman(
        "build", "--pull=never", "--network=none", f"--format={fmt}", "-t", reference, str(context)
    )
    try:
        podman("push", "--tls-verify=false", reference)
    finally:
        podman("rmi", "--force", reference)


@pytest.mark.parametrize("fmt", ["oci", "docker"])
def test_a_catalog_image_built_by_podman_is_served(
    local_registry: str, tmp_path: Path, fmt: str
) -> None:
    context = tmp_path / "context"
    shutil.copytree(CATALOG.parent, context / "configs")
    reference = f"{local_registry}/podman/samples-{fmt}:v1"
    build_and_push(context, {INDEX_LABEL: "/configs"}, reference, fmt)

    reader = ImageCatalogs(BlobCache(tmp_path / "cache"), timeout=10, retries=0)
    fetched = reader.read(("ns", "src"), reference, [])
    assert fetched.failure is None, fetched.failure
    assert fetched.catalog is not None
    assert sorted(fetched.catalog.packages) == ["memcached-dashboard", "memcached-operator"]
    assert fetched.resolved.startswith(f"{local_registry}/podman/samples-{fmt}@sha256:")


@pytest.mark.parametrize("fmt", ["oci", "docker"])
def test_a_bundle_image_built_by_podman_is_unpacked(
    local_registry: str, tmp_path: Path, fmt: str
) -> None:
    context = tmp_path / "context"
    shutil.copytree(BUNDLE / "manifests", context / "manifests")
    shutil.copytree(BUNDLE / "metadata", context / "metadata")
    reference = f"{local_registry}/podman/memcached-bundle-{fmt}:v0.0.1"
    build_and_push(context, BUNDLE_LABELS, reference, fmt)

    options = Options(cache=BlobCache(tmp_path / "cache"), retries=0, use_local_configs=False)
    digest = resolve(parse(reference), options)
    root = tmp_path / "root"
    pulled = pull(parse(reference), root, options)
    assert pulled.digest == digest and digest.startswith("sha256:")
    assert BUNDLE_LABELS.items() <= pulled.labels.items()
    manifests = sorted(p.name for p in (root / "manifests").iterdir())
    assert any(name.endswith(".clusterserviceversion.yaml") for name in manifests), manifests
    assert (root / "metadata" / "annotations.yaml").is_file()
