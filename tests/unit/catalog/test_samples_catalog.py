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


def test_the_webhook_samples_have_channels_of_their_own() -> None:
    """0.0.3 (validating webhook, any group) in `webhooks`; 0.1.0 (conversion webhook, so
    AllNamespaces alone, as OLM requires) in `beta`; `alpha` keeps its head at 0.0.2."""
    from olm.csv.definitions import definition_problem

    catalog = load(CATALOG.parent)
    channels = inspect(catalog)["memcached-operator"]["channels"]
    assert channels["webhooks"]["head"] == "memcached-operator.v0.0.3"
    assert channels["beta"] == {
        "head": "memcached-operator.v0.1.0",
        "entries": ["memcached-operator.v0.1.0", "memcached-operator.v0.0.3"],
    }
    bundles = catalog.packages["memcached-operator"].bundles
    modes = {}
    for name in ("memcached-operator.v0.0.3", "memcached-operator.v0.1.0"):
        csv = bundles[name].csv
        assert csv is not None
        assert definition_problem(csv, {"memcached-operator"}) is None
        modes[name] = {m["type"] for m in csv["spec"]["installModes"] if m["supported"]}
        kinds = [w["type"] for w in csv["spec"]["webhookdefinitions"]]
        assert kinds[0] == "ValidatingAdmissionWebhook"
        assert ("ConversionWebhook" in kinds) == (name.endswith("v0.1.0"))
    assert modes["memcached-operator.v0.0.3"] == {
        "OwnNamespace",
        "SingleNamespace",
        "AllNamespaces",
    }
    assert modes["memcached-operator.v0.1.0"] == {"AllNamespaces"}
    [crd] = [
        o
        for o in bundles["memcached-operator.v0.1.0"].objects
        if o["kind"] != "ClusterServiceVersion"
    ]
    assert [(v["name"], v["served"], v["storage"]) for v in crd["spec"]["versions"]] == [
        ("v1alpha1", True, True),  # objects written by 0.0.x stay as they are stored
        ("v1beta1", True, False),
    ]
