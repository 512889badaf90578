"""Every catalog in ../shared/fixtures: the valid ones pass with the expected heads, the
invalid one fails with its specific error. Every format reads into the same model."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm.catalog.fbc import blobs_to_catalog
from olm.catalog.formats import detect, load
from olm.catalog.graph import heads
from olm.catalog.inspect import inspect
from olm.catalog.render import to_json, to_yaml
from olm.catalog.validate import validate
from olm.catalog.yamlio import iter_documents
from tests.support.paths import SHARED

FIXTURES = SHARED / "fixtures"
FBC = FIXTURES / "fbc-testdata"

pytestmark = pytest.mark.skipif(
    not FIXTURES.is_dir(), reason="needs ../shared/fixtures beside the repo"
)

EXPECTED_HEADS = {
    "index-declcfgs-latest": {
        "bar": {"alpha": ["bar.v1.0.0"], "stable": ["bar.v1.0.0"]},
        "baz": {"stable": ["baz.v1.1.0"]},
        "foo": {"beta": ["foo.v0.3.1"]},
    },
    "list-index": {
        "foo": {"beta": ["foo.v0.2.0"], "stable": ["foo.v0.2.0"]},
        "bar": {"beta": ["bar.v0.2.0"], "stable": ["bar.v0.2.0"]},
    },
    "webhook-operator": {"webhook-operator": {"preview": ["webhook-operator.v0.0.1"]}},
}


def all_heads(path: Path) -> dict[str, dict[str, list[str]]]:
    catalog = load(path)
    return {n: {c: heads(p.channels[c]) for c in p.channels} for n, p in catalog.packages.items()}


@pytest.mark.parametrize("name", sorted(EXPECTED_HEADS))
def test_valid_fbc_fixtures(name: str) -> None:
    catalog = load(FBC / name)
    assert validate(catalog) == []
    assert all_heads(FBC / name) == EXPECTED_HEADS[name]


def test_the_invalid_legacy_catalog_fails_with_its_error() -> None:
    messages = [p.message for p in validate(load(FBC / "invalid-legacy-prometheus-json"))]
    assert (
        'package "prometheus", bundle "prometheusoperator.0.14.0" not found in any channel entries'
        in messages
    )


def test_package_manifest_fixture() -> None:
    path = FIXTURES / "package-manifest-etcd"
    facts = inspect(load(path))["etcd"]
    assert facts["defaultChannel"] == "alpha"
    assert facts["channels"]["alpha"]["head"] == "etcdoperator.v0.9.2"
    assert set(facts["bundles"]) == {
        "etcdoperator.v0.6.1",
        "etcdoperator.v0.9.0",
        "etcdoperator.v0.9.2",
    }


def test_configmap_fixture() -> None:
    catalog = load(FIXTURES / "configmap-catalog")
    assert detect(FIXTURES / "configmap-catalog") == "configmap-dir"
    assert all_heads(FIXTURES / "configmap-catalog") == {
        "etcd": {"alpha": ["etcdoperator.v0.9.2"]},
        "prometheus": {"alpha": ["prometheusoperator.0.22.2"]},
    }
    assert validate(catalog) == []


def test_bundle_directory_fixture() -> None:
    path = FIXTURES / "operator-sdk-memcached" / "bundle"
    assert detect(path) == "bundle"
    catalog = load(path)
    [bundle] = catalog.packages["memcached-operator"].bundles.values()
    assert bundle.csv is not None and bundle.csv["kind"] == "ClusterServiceVersion"
    assert {
        "type": "olm.package",
        "value": {"packageName": "memcached-operator", "version": bundle.version},
    } in bundle.properties
    assert any(p["type"] == "olm.gvk" for p in bundle.properties)
    assert validate(catalog) == []


@pytest.mark.parametrize(
    "path",
    [
        FBC / "index-declcfgs-latest",
        FIXTURES / "package-manifest-etcd",
        FIXTURES / "configmap-catalog",
    ],
)
def test_render_round_trips(path: Path) -> None:
    original = load(path)
    for text in (to_yaml(original), to_json(original)):
        blobs = [(doc, ("rendered", str(i))) for i, doc in iter_documents(text)]
        again = blobs_to_catalog(blobs)
        assert inspect(again) == inspect(original)
        assert validate(again) == []
