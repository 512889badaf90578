"""Step manifests and writes shaped as OLM v0.38 shapes them (issue 9, parity suite):
no `optional`, no `olm.managed` in the generated RBAC manifests (added when written), the
bundle's `spec.replaces` kept, the properties annotation, and installed-alongside on CRDs."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.installplan.decide import decide
from olm.installplan.objects import alongside_key, managed, with_alongside
from olm.installplan.steps import go_json, plan_bundle, properties_annotation
from tests.unit.installplan.plans import NS, established, install_plan, live, objects_of, snap

PREFIX = "operatorframework.io/installed-alongside-"
V1, V2 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"


def bundle(name: str) -> Any:
    return load(CATALOG.parent).packages["memcached-operator"].bundles[name]


# Keys as the real OLM v0.38 wrote them in the parity suite's crd-upgrade scenario.
@pytest.mark.parametrize(
    ("namespace", "name", "key"),
    [
        ("parity-crd-upgrade", "widget-operator.v1.0.0", PREFIX + "2481000528ba6d8a"),
        ("parity-crd-upgrade", "widget-operator.v2.0.0", PREFIX + "2b9d0f33879efa97"),
    ],
)
def test_alongside_keys_are_olms(namespace: str, name: str, key: str) -> None:
    assert alongside_key(namespace, name) == key


def _crd(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "widgets.example.com"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
    }


OLD_REF = {alongside_key("ns", "w.v1"): "ns/w.v1"}
MINE = {alongside_key("ns", "w.v2"): "ns/w.v2"}


@pytest.mark.parametrize(
    ("manifest", "existing", "expected"),
    [
        # a new CRD: this plan's CSV only
        (_crd(), None, MINE),
        # an upgrade: the CSV it was installed with stays beside the new one
        (_crd(), _crd(OLD_REF), {**OLD_REF, **MINE}),
        # written again for the same CSV: one entry
        (_crd(), _crd(MINE), MINE),
        # other annotations of the manifest stay; foreign keys of the live CRD are not taken
        (_crd({"a": "b"}), _crd({"x": "y"}), {"a": "b", **MINE}),
        # a malformed reference is dropped
        (_crd(), _crd({PREFIX + "0": "no-slash"}), MINE),
    ],
)
def test_crds_record_the_csvs_they_were_installed_with(
    manifest: dict[str, Any], existing: dict[str, Any] | None, expected: dict[str, str]
) -> None:
    before = copy.deepcopy(manifest)
    assert with_alongside(manifest, existing, "ns", "w.v2")["metadata"]["annotations"] == expected
    assert manifest == before, "the input is not modified"


@pytest.mark.parametrize(
    ("present", "expected"),
    [
        ({("ns", "w.v1"): True}, {**OLD_REF, **MINE}),  # still there: kept
        ({("ns", "w.v1"): False}, MINE),  # gone or a copy: dropped, as OLM drops it
        ({}, {**OLD_REF, **MINE}),  # nothing known of it: kept
    ],
)
def test_references_to_csvs_that_are_gone_are_dropped(
    present: dict[tuple[str, str], bool], expected: dict[str, str]
) -> None:
    """Corpus (etcd v0.9.0 -> v0.9.4 and five more): OLM's CRDs no longer name the first CSV
    once it was replaced; olm-py's named every CSV they had ever been installed with."""
    written = with_alongside(_crd(), _crd(OLD_REF), "ns", "w.v2", present)
    assert written["metadata"]["annotations"] == expected


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1, "a": [True, None]}, '{"b":1,"a":[true,null]}'),
        ({"range": ">=1.0.0 <2.0.0 & more"}, '{"range":"\\u003e=1.0.0 \\u003c2.0.0 \\u0026 more"}'),
        ({"name": "café"}, '{"name":"café"}'),
    ],
)
def test_go_json(value: Any, text: str) -> None:
    assert go_json(value) == text


@pytest.mark.parametrize(
    ("properties", "annotation"),
    [
        (
            [
                {"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}},
                {"type": "olm.bundle.object", "value": {"data": "e30="}},
                {"type": "olm.gvk", "value": {"group": "g", "kind": "K", "version": "v1"}},
            ],
            '{"properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},'
            '{"type":"olm.gvk","value":{"group":"g","kind":"K","version":"v1"}}]}',
        ),
        ([], '{"properties":null}'),
    ],
)
def test_properties_annotation(properties: list[dict[str, Any]], annotation: str) -> None:
    assert properties_annotation(properties) == annotation


def test_the_csv_step_carries_olms_properties_annotation() -> None:
    memcached = bundle(V1)
    steps = plan_bundle(
        memcached.objects, "ns", ("samples", "olm"), properties=memcached.properties
    )
    # as the real OLM v0.38 wrote it for this bundle
    assert steps[0].manifest["metadata"]["annotations"]["operatorframework.io/properties"] == (
        '{"properties":[{"type":"olm.gvk","value":{"group":"cache.example.com","kind":"Memcached",'
        '"version":"v1alpha1"}},{"type":"olm.package","value":{"packageName":"memcached-operator",'
        '"version":"0.0.1"}}]}'
    )
    plain = plan_bundle(memcached.objects, "ns", ("samples", "olm"))
    assert "operatorframework.io/properties" not in (
        plain[0].manifest["metadata"].get("annotations") or {}
    )


@pytest.mark.parametrize(
    ("resolver_replaces", "expected"),
    [
        # No edge from the resolver (its channel entry replaces nothing): none, whatever the
        # bundle says (OLM's NewStepResourceFromBundle); the caller passes the entry's edge.
        ("", None),
        (V1, V1),  # the channel entry's edge, or the installed CSV being upgraded
        ("memcached-operator.v0.0.0", "memcached-operator.v0.0.0"),  # the resolver's edge wins
    ],
)
def test_the_csv_replaces_what_the_resolver_says(
    resolver_replaces: str, expected: str | None
) -> None:
    steps = plan_bundle(bundle(V2).objects, "ns", ("samples", "olm"), resolver_replaces)
    assert steps[0].manifest["spec"].get("replaces") == expected


def test_step_entries_and_generated_manifests_are_olms() -> None:
    steps = plan_bundle(bundle(V1).objects, "ns", ("samples", "olm"))
    for step in steps:
        assert "optional" not in step.status_entry()
    by_kind = {s.manifest["kind"]: s.manifest for s in steps}
    assert "labels" not in by_kind["ServiceAccount"]["metadata"]
    for kind in ("Role", "RoleBinding"):
        labels = by_kind[kind]["metadata"]["labels"]
        assert "olm.managed" not in labels and labels["olm.owner"] == V1


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (None, {"olm.managed": "true"}),
        ({"a": "b"}, {"a": "b", "olm.managed": "true"}),
    ],
)
def test_managed(labels: dict[str, str] | None, expected: dict[str, str]) -> None:
    body: dict[str, Any] = {"metadata": {"name": "x", **({"labels": labels} if labels else {})}}
    assert managed(body)["metadata"]["labels"] == expected


def test_a_plan_writes_crds_with_installed_alongside_and_the_rest_managed() -> None:
    ip = install_plan()
    crd_pass = decide(snap(ip))
    crd_write = next(a for a in crd_pass.actions if a.body["kind"] == "CustomResourceDefinition")
    assert crd_write.body["metadata"]["annotations"] == {alongside_key(NS, V1): f"{NS}/{V1}"}
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-csv")
    done = {
        **ip,
        "status": {
            **ip["status"],
            "plan": [
                {**e, "status": "Created"}
                if json.loads(e["resource"]["manifest"])["kind"]
                in ("CustomResourceDefinition", "ClusterServiceVersion")
                else e
                for e in ip["status"]["plan"]
            ],
        },
    }
    rest = decide(snap(done, established(steps["CustomResourceDefinition"]), csv))
    written = [a.body for a in rest.actions]
    assert {b["kind"] for b in written} == {"ServiceAccount", "Role", "RoleBinding"}
    assert all(b["metadata"]["labels"]["olm.managed"] == "true" for b in written)
