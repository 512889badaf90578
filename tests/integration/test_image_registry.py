"""The in-process OCI client against a real registry (Debian's docker-registry on 127.0.0.1, as
`olm dev up` runs it) and against a small token-auth server: push then pull round trips,
indexes, tags moving, errors by kind, catalog images read as the CatalogSource controller reads
them, and `opm render --use-http` of the images olm-py builds."""

from __future__ import annotations

import gzip
import hashlib
import json
import queue
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from olm.catalog.samples import CATALOG
from olm.catalogsource.failures import FailureKind
from olm.controllers import catalogimage
from olm.controllers.catalogimage import INDEX_LABEL, ImageCatalogs
from olm.devcluster import pki, registry
from olm.devcluster.build import ensure_binaries
from olm.devcluster.ports import free_ports
from olm.image.build import Blob, Image, scratch_image
from olm.image.cache import BlobCache
from olm.image.client import RegistryClient
from olm.image.errors import ImageError, ImageErrorKind
from olm.image.manifest import OCI_INDEX, OCI_LAYER_GZIP
from olm.image.pull import Options, label_of, pull, push, resolve
from olm.image.reference import parse
from olm.image.scheme import speaks_tls
from tests.support.registry import (
    BUNDLE,
    PASSWORD,
    USER,
    Cdn,
    bundle_dir,
    catalog_by_image,
    catalog_image,
    push_sqlite_index,
    secret,
    start_registry,
    stop_registry,
)


@pytest.fixture(scope="module")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_ports(1)[0]
    process = start_registry(tmp_path_factory.mktemp("registry"), port)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stop_registry(process)


@pytest.fixture(scope="module")
def registry_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """The local cluster's two registries: plain HTTP and TLS over one storage, and the CA."""
    work = tmp_path_factory.mktemp("registry-pair")
    keys = pki.generate(work / "pki")
    plain_port, tls_port = free_ports(2)
    plain = start_registry(work, plain_port)
    try:
        tls = start_registry(work, tls_port, tls=keys, storage=work / "storage")
        try:
            yield f"127.0.0.1:{plain_port}", f"127.0.0.1:{tls_port}", keys.ca_cert
        finally:
            stop_registry(tls)
    finally:
        stop_registry(plain)


@pytest.fixture
def options(tmp_path: Path) -> Options:
    return Options(
        cache=BlobCache(tmp_path / "cache"), retries=0, timeout=10, use_local_configs=False
    )


def test_push_then_pull_round_trip(local_registry: str, options: Options, tmp_path: Path) -> None:
    reference = parse(f"{local_registry}/olm/samples:v1")
    image = catalog_image()
    assert push(reference, image, options) == image.digest
    assert resolve(reference, options) == image.digest
    pulled = pull(reference, tmp_path / "root", options)
    assert pulled.digest == image.digest
    assert pulled.labels == {INDEX_LABEL: "/configs"}
    assert (tmp_path / "root" / "configs" / "catalog.yaml").read_bytes() == CATALOG.read_bytes()
    # Pulled again by digest, from the cache: the same files.
    again = pull(reference.with_digest(image.digest), tmp_path / "again", options, only="/configs")
    assert again.digest == image.digest
    assert (tmp_path / "again" / "configs" / "catalog.yaml").is_file()


def test_the_tls_registry_serves_what_was_pushed_to_the_plain_one_and_olm_pulls_from_both(
    registry_pair: tuple[str, str, Path], options: Options, tmp_path: Path
) -> None:
    """Loopback registries are insecure registries: olm-py learns by one handshake that one
    speaks TLS and the other plain HTTP, and needs no setting for either."""
    plain, tls, ca = registry_pair
    assert speaks_tls(tls) is True
    assert speaks_tls(plain) is False
    assert speaks_tls(f"127.0.0.1:{free_ports(1)[0]}") is None
    image = catalog_image()
    assert push(parse(f"{plain}/olm/both:v1"), image, options) == image.digest
    pulled = pull(parse(f"{tls}/olm/both:v1"), tmp_path / "root", options)
    assert pulled.digest == image.digest
    assert pulled.labels == {INDEX_LABEL: "/configs"}
    # Pushed over TLS, read over plain HTTP.
    other = scratch_image({"configs/x.yaml": b"schema: olm.package\nname: x\n"}, {})
    assert push(parse(f"{tls}/olm/both:v2"), other, options) == other.digest
    assert resolve(parse(f"{plain}/olm/both:v2"), options) == other.digest
    # The certificate is the cluster CA's, for 127.0.0.1: a verifying client accepts it.
    assert registry.healthy(int(tls.rsplit(":", 1)[1]), ca=ca) == (True, "HTTP 200")


def test_a_tag_that_moves_resolves_to_the_new_digest(local_registry: str, options: Options) -> None:
    reference = parse(f"{local_registry}/olm/moving:latest")
    first = scratch_image({"configs/a.yaml": b"a: 1\n"}, {INDEX_LABEL: "/configs"})
    second = scratch_image({"configs/a.yaml": b"a: 2\n"}, {INDEX_LABEL: "/configs"})
    push(reference, first, options)
    assert resolve(reference, options) == first.digest
    push(reference, second, options)
    assert resolve(reference, options) == second.digest != first.digest


def test_an_index_is_resolved_to_its_linux_amd64_image(
    local_registry: str, options: Options, tmp_path: Path
) -> None:
    amd64 = scratch_image({"configs/arch": b"amd64"}, {INDEX_LABEL: "/configs"})
    arm64 = scratch_image({"configs/arch": b"arm64"}, {INDEX_LABEL: "/configs"})
    repository = parse(f"{local_registry}/olm/multi")
    push(repository.with_tag("amd64"), amd64, options)
    push(repository.with_tag("arm64"), arm64, options)
    index = {
        "schemaVersion": 2,
        "mediaType": OCI_INDEX,
        "manifests": [
            {
                **json.loads(arm64.manifest)["config"],
                "mediaType": arm64.media_type,
                "digest": arm64.digest,
                "size": len(arm64.manifest),
                "platform": {"os": "linux", "architecture": "arm64"},
            },
            {
                "mediaType": amd64.media_type,
                "digest": amd64.digest,
                "size": len(amd64.manifest),
                "platform": {"os": "linux", "architecture": "amd64"},
            },
        ],
    }
    body = json.dumps(index).encode()
    client = options.client(repository)
    index_digest = client.push_manifest("olm/multi", "v1", body, OCI_INDEX)
    pulled = pull(repository.with_tag("v1"), tmp_path / "root", options)
    assert pulled.digest == index_digest
    assert (tmp_path / "root" / "configs" / "arch").read_bytes() == b"amd64"


def test_errors_come_by_kind(local_registry: str, options: Options, tmp_path: Path) -> None:
    with pytest.raises(ImageError) as missing:
        resolve(parse(f"{local_registry}/olm/samples:no-such-tag"), options)
    assert missing.value.kind is ImageErrorKind.NOT_FOUND
    assert "has no olm/samples:no-such-tag" in str(missing.value)
    closed = free_ports(1)[0]
    with pytest.raises(ImageError) as down:
        resolve(parse(f"127.0.0.1:{closed}/olm/samples:v1"), options)
    assert down.value.kind is ImageErrorKind.UNREACHABLE
    assert "nothing is listening there" in str(down.value)
    # A layer that is not a tar archive (the registry checks digests, not content).
    garbage = Blob(OCI_LAYER_GZIP, gzip.compress(b"not a tar archive" * 40))
    good = catalog_image()
    manifest = json.loads(good.manifest)
    manifest["layers"] = [garbage.descriptor()]
    corrupt = Image(good.config, (garbage,), json.dumps(manifest).encode())
    reference = parse(f"{local_registry}/olm/corrupt:v1")
    push(reference, corrupt, options)
    with pytest.raises(ImageError) as broken:
        pull(reference, tmp_path / "root", options)
    assert broken.value.kind is ImageErrorKind.CORRUPT


def test_the_controller_reads_a_catalog_image_once_per_digest(
    local_registry: str, tmp_path: Path
) -> None:
    image = f"{local_registry}/olm/controller-catalog:v1"
    images = ImageCatalogs(BlobCache(tmp_path / "cache"), timeout=10, retries=0)
    key = ("ns", "src")
    missing = images.read(key, image, [])
    assert missing.failure is not None and missing.failure.kind is FailureKind.IMAGE_NOT_FOUND
    assert images.read(key, image, []).attempts == 2
    options = Options(cache=BlobCache(tmp_path / "push-cache"), use_local_configs=False)
    digest = push(parse(image), catalog_image(), options)
    first = images.read(key, image, [])
    assert first.failure is None and first.catalog is not None
    assert sorted(first.catalog.packages) == ["memcached-dashboard", "memcached-operator"]
    assert first.resolved == f"{local_registry}/olm/controller-catalog@{digest}"
    assert images.read(key, image, []).catalog is first.catalog, "same digest: not pulled again"
    not_catalog = f"{local_registry}/olm/not-a-catalog:v1"
    push(parse(not_catalog), scratch_image({"etc/motd": b"hi"}, {}), options)
    wrong = images.read(("ns", "other"), not_catalog, [])
    assert wrong.failure is not None and wrong.failure.kind is FailureKind.NOT_A_CATALOG
    assert INDEX_LABEL in wrong.failure.summary


def test_the_olm_commands_push_images_opm_renders(
    local_registry: str, options: Options, tmp_path: Path
) -> None:
    opm = ensure_binaries(build=False).path("opm")
    if not opm.is_file():
        pytest.skip("opm is not built (make setup)")
    catalog_ref = f"{local_registry}/olm/cli-samples:v1"
    bundle_ref = f"{local_registry}/olm/memcached-bundle:v0.0.1"
    from olm.cli import main

    assert main(["catalog", "push", str(CATALOG.parent), catalog_ref]) == 0
    assert main(["bundle", "push", str(BUNDLE), bundle_ref]) == 0
    labels = label_of(parse(bundle_ref), options).labels
    assert labels["operators.operatorframework.io.bundle.package.v1"] == "memcached-operator"
    assert labels["operators.operatorframework.io.bundle.mediatype.v1"] == "registry+v1"
    rendered = {}
    for ref in (catalog_ref, bundle_ref):
        result = subprocess.run(
            [str(opm), "render", "--use-http", "-o", "json", ref],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        decoder, text, blobs = json.JSONDecoder(), result.stdout.strip(), []
        while text:
            blob, end = decoder.raw_decode(text)
            blobs.append(blob)
            text = text[end:].strip()
        rendered[ref] = blobs
    assert {b["name"] for b in rendered[catalog_ref] if b["schema"] == "olm.bundle"} == {
        "memcached-operator.v0.0.1",
        "memcached-operator.v0.0.2",
        "memcached-operator.v0.0.3",
        "memcached-operator.v0.1.0",
        "memcached-dashboard.v0.1.0",
    }
    (bundle,) = rendered[bundle_ref]
    assert bundle["schema"] == "olm.bundle" and bundle["image"] == bundle_ref
    assert bundle["package"] == "memcached-operator"


# ----- a registry behind bearer-token auth -----------------------------------------------------


def test_bearer_token_flow_with_docker_config_credentials(
    token_registry: str, tmp_path: Path
) -> None:
    options = Options(
        configs=[secret(USER, PASSWORD, token_registry)],
        cache=BlobCache(tmp_path / "cache"),
        retries=0,
        use_local_configs=False,
    )
    reference = parse(f"{token_registry}/olm/private:v1")
    pulled = pull(reference, tmp_path / "root", options)
    assert pulled.digest == Cdn.image.digest
    assert (tmp_path / "root" / "configs" / "catalog.yaml").read_bytes() == CATALOG.read_bytes()
    cdn = [auth for _, path, auth in Cdn.requests if path.startswith("/cdn/")]
    assert cdn and not any(cdn), "no Authorization header is sent along a redirect elsewhere"
    assert hashlib.sha256(Cdn.image.layers[0].data).hexdigest() in "".join(
        p for _, p, _ in Cdn.requests
    )


@pytest.mark.parametrize(
    ("configs", "fragment"),
    [
        ([], "(none were configured)"),
        ([secret(USER, "wrong", "placeholder")], "refused the credentials"),
    ],
)
def test_wrong_or_missing_credentials_are_unauthorized(
    token_registry: str, tmp_path: Path, configs: list[dict[str, Any]], fragment: str
) -> None:
    configs = [json.loads(json.dumps(c).replace("placeholder", token_registry)) for c in configs]
    options = Options(
        configs=configs, cache=BlobCache(tmp_path / "cache"), retries=0, use_local_configs=False
    )
    with pytest.raises(ImageError) as raised:
        resolve(parse(f"{token_registry}/olm/private:v1"), options)
    assert raised.value.kind is ImageErrorKind.UNAUTHORIZED
    assert fragment in str(raised.value)


def test_a_registry_client_retries_with_backoff(tmp_path: Path) -> None:
    slept: list[float] = []
    closed = free_ports(1)[0]
    client = RegistryClient(f"127.0.0.1:{closed}", retries=3, sleep=slept.append)
    with pytest.raises(ImageError) as raised:
        client.resolve("olm/x", "v1")
    assert raised.value.kind is ImageErrorKind.UNREACHABLE
    assert slept == [0.5, 1.0, 2.0]


# ----- bundles by image --------------------------------------------------------------------------


def test_bundles_by_image_are_unpacked_when_asked(
    local_registry: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from olm.cli import main

    images = {}
    for version in ("0.0.1", "0.0.2"):
        ref = f"{local_registry}/olm/memcached-operator-bundle:v{version}"
        assert main(["bundle", "push", str(bundle_dir(tmp_path, version)), ref]) == 0
        images[f"memcached-operator.v{version}"] = ref
    images["memcached-operator.v0.0.2"] = f"{local_registry}/olm/not-a-bundle:v1"
    options = Options(cache=BlobCache(tmp_path / "push"), use_local_configs=False)
    push(parse(images["memcached-operator.v0.0.2"]), scratch_image({"etc/x": b"x"}, {}), options)
    files = {"configs/catalog.yaml": catalog_by_image(images)}
    catalog_ref = f"{local_registry}/olm/by-image:v1"
    push(parse(catalog_ref), scratch_image(files, {INDEX_LABEL: "/configs"}), options)

    reader = ImageCatalogs(BlobCache(tmp_path / "cache"), timeout=10, retries=0)
    ended: queue.Queue[tuple[str, str]] = queue.Queue()
    reader.on_unpacked = ended.put
    key = ("ns", "src")
    fetched = reader.read(key, catalog_ref, [])
    assert fetched.catalog is not None and fetched.failure is None
    bundles = fetched.catalog.packages["memcached-operator"].bundles
    # Reading the catalog unpacks nothing: only the bundles a Subscription needs are.
    assert all(bundles[name].objects == [] for name in images)
    reader.keep(key, fetched.catalog)
    for image in images.values():
        assert reader.unpack(key, image) is None
    assert {ended.get(timeout=60), ended.get(timeout=60)} == {key}
    unpacked = bundles["memcached-operator.v0.0.1"]
    assert unpacked.csv is not None and unpacked.csv["metadata"]["name"] == unpacked.name
    assert sorted(o["kind"] for o in unpacked.objects) == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
    ]
    assert bundles["memcached-operator.v0.0.2"].objects == []
    (warning,) = [p for p in fetched.catalog.problems if p.rule == "bundle-unpack"]
    assert warning.level == "warning" and "no /manifests directory" in warning.message
    retry = reader.unpack(key, images["memcached-operator.v0.0.2"])
    assert retry is not None and 0 < retry <= 5, "tried again after a backoff"
    # The broken bundle image is fixed: asked again after its backoff, it is unpacked.
    ref = f"{local_registry}/olm/not-a-bundle:v1"
    assert main(["bundle", "push", str(bundle_dir(tmp_path / "fixed", "0.0.2")), ref]) == 0
    monkeypatch.setattr(catalogimage, "UNPACK_RETRY_SECONDS", 0.0)
    reader.forget(key)  # (the CatalogSource recreated: no backoff left)
    again = reader.read(key, catalog_ref, [])
    assert again.catalog is not None
    reader.keep(key, again.catalog)
    assert reader.unpack(key, ref) is None
    assert ended.get(timeout=60) == key
    assert again.catalog.packages["memcached-operator"].bundles["memcached-operator.v0.0.2"].csv
    assert not [p for p in again.catalog.problems if p.rule == "bundle-unpack"]


# ----- legacy SQLite index images ----------------------------------------------------------------


def test_a_sqlite_index_image_built_by_opm_is_read(local_registry: str, tmp_path: Path) -> None:
    reference = push_sqlite_index(local_registry, tmp_path, "olm/sqlite-index")
    reader = ImageCatalogs(BlobCache(tmp_path / "cache"), timeout=10, retries=0)
    fetched = reader.read(("ns", "src"), reference, [])
    assert fetched.failure is None and fetched.catalog is not None
    assert not fetched.catalog.problems
    package = fetched.catalog.packages["memcached-operator"]
    assert package.default_channel == "alpha"
    entries = [(e.name, e.replaces) for e in package.channels["alpha"].entries]
    assert sorted(entries) == [
        ("memcached-operator.v0.0.1", ""),
        ("memcached-operator.v0.0.2", "memcached-operator.v0.0.1"),
    ]
    for bundle in package.bundles.values():
        assert bundle.csv is not None and bundle.csv["metadata"]["name"] == bundle.name
        assert bundle.version == bundle.name.split(".v", 1)[1]
        assert {"group": "cache.example.com", "version": "v1alpha1", "kind": "Memcached"} in (
            bundle.props("olm.gvk")
        )


def test_a_registry_outage_serves_the_catalog_read_last_then_recovers(tmp_path: Path) -> None:
    port = free_ports(1)[0]
    process = start_registry(tmp_path, port)
    image = f"127.0.0.1:{port}/olm/outage:v1"
    options = Options(cache=BlobCache(tmp_path / "push"), use_local_configs=False)
    reader = ImageCatalogs(BlobCache(tmp_path / "cache"), timeout=5, retries=0)
    try:
        push(parse(image), catalog_image(), options)
        first = reader.read(("ns", "src"), image, [])
        assert first.catalog is not None and first.failure is None
    finally:
        stop_registry(process)
    down = reader.read(("ns", "src"), image, [])
    assert down.failure is not None and down.failure.kind is FailureKind.REGISTRY_UNREACHABLE
    assert down.catalog is first.catalog and down.resolved == first.resolved
    assert down.attempts == 1
    process = start_registry(tmp_path, port)  # same storage: the image is still there
    try:
        back = reader.read(("ns", "src"), image, [])
        assert back.failure is None and back.catalog is first.catalog and back.attempts == 0
    finally:
        stop_registry(process)
