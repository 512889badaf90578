"""The local registry `olm dev up` starts: its configuration, and `olm dev env` naming it."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import yaml

from olm.catalog.documents import bundle_csv
from olm.catalog.fbc import load_fbc
from olm.catalog.model import Bundle
from olm.catalog.samples import build
from olm.devcluster import registry
from olm.devcluster.cluster import DevCluster
from olm.image.build import Image


def test_the_registry_listens_on_loopback_and_stores_in_the_state_dir(tmp_path: Path) -> None:
    config = json.loads(registry.config(tmp_path / "registry", 5123))
    assert config["http"]["addr"] == "127.0.0.1:5123"
    assert config["storage"]["filesystem"]["rootdirectory"] == str(tmp_path / "registry")
    assert config["storage"]["delete"]["enabled"] is True
    assert registry.argv(Path("/usr/bin/docker-registry"), tmp_path / "c.json") == [
        "/usr/bin/docker-registry",
        "serve",
        str(tmp_path / "c.json"),
    ]
    assert registry.APT_INSTALL[:3] == ["apt-get", "-o", "DPkg::Lock::Timeout=600"]


def test_dev_env_names_the_registry_only_when_one_runs(tmp_path: Path) -> None:
    cluster = DevCluster(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    record = {"bin_dir": "/bin", "processes": [], "ports": {}}
    cluster.record_path.write_text(json.dumps(record))
    assert registry.REGISTRY_ENV not in cluster.env()
    assert registry.REGISTRY_TLS_ENV not in cluster.env()
    cluster.record_path.write_text(json.dumps({**record, "registry": "127.0.0.1:5123"}))
    assert cluster.env()[registry.REGISTRY_ENV] == "127.0.0.1:5123"
    with_tls = {**record, "registry_tls": "127.0.0.1:5124", "registry_ca": "/pki/ca.crt"}
    cluster.record_path.write_text(json.dumps(with_tls))
    assert cluster.env()[registry.REGISTRY_TLS_ENV] == "127.0.0.1:5124"
    assert cluster.env()[registry.REGISTRY_CA_ENV] == "/pki/ca.crt"


def test_the_tls_registry_serves_with_the_certificate_it_is_given(tmp_path: Path) -> None:
    config = json.loads(
        registry.config(tmp_path / "registry", 5124, (tmp_path / "r.crt", tmp_path / "r.key"))
    )
    assert config["http"]["addr"] == "127.0.0.1:5124"
    assert config["http"]["tls"] == {
        "certificate": str(tmp_path / "r.crt"),
        "key": str(tmp_path / "r.key"),
    }


def test_a_port_with_nothing_listening_is_not_healthy() -> None:
    from olm.devcluster.ports import free_ports

    ok, detail = registry.healthy(free_ports(1)[0], timeout=0.5)
    assert not ok and detail


def _layer_files(image: Image) -> dict[str, bytes]:
    (layer,) = image.layers
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer.data))) as tar:
        return {
            m.name.lstrip("./"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def _labels(image: Image) -> dict[str, str]:
    labels: dict[str, str] = json.loads(image.config.data)["config"]["Labels"]
    return labels


def test_the_samples_are_published_as_bundle_images_and_a_catalog_naming_them(
    tmp_path: Path,
) -> None:
    catalog = build()
    images = dict(registry.sample_images("127.0.0.1:5000", catalog))
    bundles = {
        "127.0.0.1:5000/olm-py/memcached-operator-bundle:v0.0.1": (
            "memcached-operator",
            2,
            "alpha,webhooks",
        ),
        "127.0.0.1:5000/olm-py/memcached-operator-bundle:v0.0.2": (
            "memcached-operator",
            2,
            "alpha,webhooks",
        ),
        "127.0.0.1:5000/olm-py/memcached-operator-bundle:v0.0.3": (
            "memcached-operator",
            2,
            "beta,webhooks",
        ),
        "127.0.0.1:5000/olm-py/memcached-operator-bundle:v0.1.0": ("memcached-operator", 2, "beta"),
        "127.0.0.1:5000/olm-py/memcached-dashboard-bundle:v0.1.0": (
            "memcached-dashboard",
            1,
            "alpha",
        ),
    }
    catalog_ref = "127.0.0.1:5000/olm-py/samples-catalog:latest"
    assert sorted(images) == sorted([*bundles, catalog_ref])
    for reference, (package, objects, channels) in bundles.items():
        labels = _labels(images[reference])
        prefix = "operators.operatorframework.io.bundle."
        assert labels[f"{prefix}mediatype.v1"] == "registry+v1"
        assert labels[f"{prefix}package.v1"] == package
        assert labels[f"{prefix}channels.v1"] == channels
        files = _layer_files(images[reference])
        manifests = [name for name in files if name.startswith("manifests/")]
        assert len(manifests) == objects
        assert yaml.safe_load(files["metadata/annotations.yaml"])["annotations"] == labels
    # The display name and publisher are what `kubectl operator catalog add` defaults to.
    assert _labels(images[catalog_ref]) == {
        "operators.operatorframework.io.index.configs.v1": "/configs",
        "alpha.operators.operatorframework.io.index.display-name.v1": "olm-py samples",
        "alpha.operators.operatorframework.io.index.publisher.v1": "olm-py",
    }
    (tmp_path / "catalog.yaml").write_bytes(
        _layer_files(images[catalog_ref])["configs/catalog.yaml"]
    )

    def catalog_bundle(bundle: Bundle) -> Bundle:
        return catalog.packages[bundle.package].bundles[bundle.name]

    served = load_fbc(tmp_path)
    for package in served.packages.values():
        for bundle in package.bundles.values():
            assert bundle.image in bundles and bundle.objects == []
            assert bundle.version and bundle.image.endswith(f":v{bundle.version}")
            # Described as opm render describes a bundle image: by its CSV's metadata.
            original = bundle_csv(catalog.packages[package.name], catalog_bundle(bundle))
            described = bundle_csv(package, bundle)
            assert original is not None and described is not None
            for field in ("displayName", "description", "installModes", "provider"):
                assert described["spec"][field] == original["spec"][field]
            assert (
                described["spec"]["customresourcedefinitions"]
                == (original["spec"]["customresourcedefinitions"])
            )
            assert described["metadata"]["annotations"] == original["metadata"]["annotations"]
    # The catalog given is not changed, and the images are the same every time.
    assert all(not b.image for p in catalog.packages.values() for b in p.bundles.values())
    again = dict(registry.sample_images("127.0.0.1:5000", build()))
    assert {r: i.digest for r, i in again.items()} == {r: i.digest for r, i in images.items()}


def test_dev_env_names_the_samples_catalog_image_once_published(tmp_path: Path) -> None:
    cluster = DevCluster(tmp_path)
    record = {"bin_dir": "/bin", "processes": [], "ports": {}, "registry": "127.0.0.1:5123"}
    cluster.record_path.write_text(json.dumps(record))
    assert registry.SAMPLES_IMAGE_ENV not in cluster.env()
    image = "127.0.0.1:5123/olm-py/samples-catalog:latest"
    cluster.record_path.write_text(json.dumps({**record, "samples_image": image}))
    assert cluster.env()[registry.SAMPLES_IMAGE_ENV] == image


def test_publishing_to_a_registry_that_is_not_there_is_a_sentence_not_an_error(
    tmp_path: Path,
) -> None:
    from olm.devcluster.ports import free_ports

    image, problem = registry.try_publish_samples(f"127.0.0.1:{free_ports(1)[0]}", tmp_path)
    assert image is None and "127.0.0.1" in problem
