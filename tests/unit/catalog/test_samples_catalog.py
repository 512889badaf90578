"""catalogs/samples is generated from manifests/samples, validates clean, and holds what the
Subscription story needs: memcached-operator 0.0.1 -> 0.0.2 inline, and a dependent package."""

from __future__ import annotations

from olm.catalog.formats import load
from olm.catalog.inspect import inspect
from olm.catalog.samples import CATALOG, rendered
from olm.catalog.validate import validate


def test_the_committed_catalog_is_up_to_date() -> None:
    assert CATALOG.read_text() == rendered(), (
        "run `python -m olm.catalog.samples` and commit the result"
    )


def test_samples_catalog() -> None:
    catalog = load(CATALOG.parent)
    assert validate(catalog) == []
    facts = inspect(catalog)
    memcached = facts["memcached-operator"]
    assert memcached["defaultChannel"] == "alpha"
    assert memcached["channels"]["alpha"] == {
        "head": "memcached-operator.v0.0.2",
        "entries": ["memcached-operator.v0.0.2", "memcached-operator.v0.0.1"],
    }
    for bundle in catalog.packages["memcached-operator"].bundles.values():
        assert bundle.image == "" and bundle.csv is not None
        assert {o["kind"] for o in bundle.objects} == {
            "ClusterServiceVersion",
            "CustomResourceDefinition",
        }
    dashboard = facts["memcached-dashboard"]["bundles"]["memcached-dashboard.v0.1.0"]
    assert {
        "type": "olm.package.required",
        "value": {"packageName": "memcached-operator", "versionRange": ">=0.0.1"},
    } in dashboard["dependencies"]
