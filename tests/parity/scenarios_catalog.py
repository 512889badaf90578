"""Parity scenarios on the parity catalog (catalogs.py: inline bundles, served by opm): a CRD
that grows on upgrade, a bundle kind OLM does not install, a global operator from the corpus,
spec.replaces rings, and the PackageManifest API.
"""

from __future__ import annotations

import json
from typing import Any

from tests.parity import packagemanifests as pm
from tests.parity.catalogs import Bundle, Package, load_manifests, write_catalog
from tests.parity.harness import Scope, Side, settled, wait
from tests.parity.steps import (
    COPY_TIMEOUT,
    TIMEOUT,
    Snapshots,
    approve,
    csv_state,
    gone,
    namespace,
    operator_group,
    plan_for,
    subscribe,
    wait_csv,
)
from tests.support.paths import SHARED
from tests.support.stories import minimal_csv

WIDGETS = "widgets.parity.example.com"
DVO = "deployment-validation-operator"
DVO_BUNDLE = SHARED / "corpus" / "community-operators" / "operators" / DVO / "0.7.12" / "manifests"


def widget_crd(upgraded: bool) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    }
    versions: list[dict[str, Any]] = [
        {"name": "v1alpha1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}
    ]
    if upgraded:  # a new served version, and a new field in the stored one
        grown = json.loads(json.dumps(schema))
        grown["properties"]["spec"]["properties"]["colour"] = {"type": "string"}
        versions = [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": grown},
            },
            {
                "name": "v1beta1",
                "served": True,
                "storage": False,
                "schema": {"openAPIV3Schema": grown},
            },
        ]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": WIDGETS},
        "spec": {
            "group": "parity.example.com",
            "scope": "Namespaced",
            "names": {
                "kind": "Widget",
                "listKind": "WidgetList",
                "plural": "widgets",
                "singular": "widget",
            },
            "versions": versions,
        },
    }


def widget_csv(version: str, replaces: str = "") -> dict[str, Any]:
    labels = {"app": "widget-operator"}
    spec: dict[str, Any] = {
        "displayName": "Widget operator",
        "version": version,
        "installModes": [
            {"type": "OwnNamespace", "supported": True},
            {"type": "SingleNamespace", "supported": True},
            {"type": "MultiNamespace", "supported": False},
            {"type": "AllNamespaces", "supported": False},
        ],
        "customresourcedefinitions": {
            "owned": [
                {"name": WIDGETS, "version": "v1alpha1", "kind": "Widget", "displayName": "Widget"}
            ]
        },
        "install": {
            "strategy": "deployment",
            "spec": {
                "permissions": [
                    {
                        "serviceAccountName": "widget-operator",
                        "rules": [
                            {
                                "apiGroups": ["parity.example.com"],
                                "resources": ["widgets"],
                                "verbs": ["get", "list", "watch"],
                            }
                        ],
                    }
                ],
                "deployments": [
                    {
                        "name": "widget-operator",
                        "spec": {
                            "replicas": 1,
                            "selector": {"matchLabels": labels},
                            "template": {
                                "metadata": {"labels": labels},
                                "spec": {
                                    "serviceAccountName": "widget-operator",
                                    "containers": [
                                        {
                                            "name": "manager",
                                            "image": f"registry.invalid/widget:{version}",
                                        }
                                    ],
                                },
                            },
                        },
                    }
                ],
            },
        },
    }
    if replaces:
        spec["replaces"] = replaces
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": f"widget-operator.v{version}"},
        "spec": spec,
    }


def parity_catalog(side: Side) -> None:
    """CatalogSource olm/parity: the widget operator (1.0.0, 2.0.0 growing its CRD) and the
    corpus's deployment-validation-operator 0.7.12 (AllNamespaces), all inline."""
    directory = side.log_dir / "parity-catalog"
    if not directory.exists():
        dvo = Package(DVO, "alpha", [Bundle(load_manifests(DVO_BUNDLE))])
        widget = Package(
            "widget-operator",
            "alpha",
            [
                Bundle([widget_csv("1.0.0"), widget_crd(False)]),
                Bundle(
                    [widget_csv("2.0.0", "widget-operator.v1.0.0"), widget_crd(True)],
                    replaces="widget-operator.v1.0.0",
                ),
            ],
        )
        write_catalog(directory, [dvo, widget])
    side.catalog("parity", directory)


def crd_upgrade(side: Side) -> Snapshots:
    """An operator whose upgrade grows its CRD (a new field, a new served version) while a
    Widget exists; the CR stays as it was."""
    ns = "parity-crd-upgrade"
    scope = Scope(
        [ns], catalogs=["parity"], api_prefixes=[WIDGETS], crds=[WIDGETS], resources=[WIDGETS]
    )
    parity_catalog(side)
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(
        side,
        ns,
        "Manual",
        sub="widget",
        **{"name": "widget-operator", "source": "parity", "startingCSV": "widget-operator.v1.0.0"},
    )
    approve(side, ns, plan_for(side, ns, "widget-operator.v1.0.0", "RequiresApproval"))
    wait_csv(side, ns, "widget-operator.v1.0.0")
    side.apply(
        {
            "apiVersion": "parity.example.com/v1alpha1",
            "kind": "Widget",
            "metadata": {"name": "w1", "namespace": ns},
            "spec": {"size": 3},
        }
    )
    second = plan_for(side, ns, "widget-operator.v2.0.0", "RequiresApproval")
    snaps = {"installed": settled(side, scope)}

    approve(side, ns, second)
    wait_csv(side, ns, "widget-operator.v2.0.0")
    wait(
        lambda: gone(side, ns, "widget-operator.v1.0.0"),
        TIMEOUT,
        "widget-operator.v1.0.0 deleted",
    )
    snaps["upgraded"] = settled(side, scope)
    return snaps


GIZMO = "gizmo-operator.v1.0.0"


def gizmo_bundle() -> Bundle:
    """An operator without APIs whose bundle also ships a PodTemplate: a kind neither OLM nor
    olm-py installs from a bundle by default."""
    csv = widget_csv("1.0.0")
    csv["metadata"]["name"] = GIZMO
    csv["spec"]["displayName"] = "Gizmo operator"
    del csv["spec"]["customresourcedefinitions"]
    csv["spec"]["install"]["spec"]["permissions"][0]["rules"][0] = {
        "apiGroups": [""],
        "resources": ["configmaps"],
        "verbs": ["get"],
    }
    template = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "gizmo-template"},
        "template": {
            "metadata": {"labels": {"app": "gizmo"}},
            "spec": {"containers": [{"name": "gizmo", "image": "registry.invalid/gizmo:1"}]},
        },
    }
    return Bundle([csv, template])


def unsupported_kind(side: Side) -> Snapshots:
    """A bundle with a kind outside OLM's installable list: the InstallPlan fails on both
    sides, its step `UnsupportedResource` (olm-py before writing anything, OLM after writing
    the steps before it and a minute of retries: docs/differences.md)."""
    ns = "parity-unsupported-kind"
    scope = Scope([ns], catalogs=["parity-kinds"])
    directory = side.log_dir / "parity-kinds"
    if not directory.exists():
        write_catalog(directory, [Package("gizmo-operator", "alpha", [gizmo_bundle()])])
    side.catalog("parity-kinds", directory)
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(
        side,
        ns,
        "Automatic",
        sub="gizmo",
        **{"name": "gizmo-operator", "source": "parity-kinds", "startingCSV": GIZMO},
    )
    plan_for(side, ns, GIZMO, "Failed")
    return {"failed": settled(side, scope)}


def all_namespaces(side: Side) -> Snapshots:
    """The corpus's deployment-validation-operator installed for all namespaces: copied CSVs in
    a namespace created before and in one created after, cluster-wide RBAC, namespace labels."""
    ns, before, after = "parity-allns", "parity-allns-before", "parity-allns-after"
    csv = "deployment-validation-operator.v0.7.12"
    parity_catalog(side)
    namespace(side, ns)
    namespace(side, before)
    operator_group(side, ns, None)
    subscribe(side, ns, "Automatic", sub="dvo", **{"name": DVO, "source": "parity"})
    wait_csv(side, ns, csv)
    wait(
        lambda: csv_state(side, before, csv) == "Succeeded/Copied",
        TIMEOUT,
        f"the copy of {csv} in {before}",
    )
    snaps = {"installed": settled(side, Scope([ns, before], catalogs=["parity"]))}

    namespace(side, after)
    # The real OLM copies into a namespace created later only at a resync (about 3 min here).
    wait(
        lambda: csv_state(side, after, csv) == "Succeeded/Copied",
        COPY_TIMEOUT,
        f"the copy of {csv} in {after}",
    )
    snaps["namespace-added"] = settled(side, Scope([ns, before, after], catalogs=["parity"]))
    return snaps


def ring_csv(name: str, replaces: str) -> dict[str, Any]:
    """One CSV of the ring ring-a -> ring-b -> ring-c -> ring-a (spec.replaces)."""
    return minimal_csv(name, replaces=replaces)


RING = {"ring-a": "ring-b", "ring-b": "ring-c", "ring-c": "ring-a"}


def replace_rings(side: Side) -> Snapshots:
    """Three CSVs whose spec.replaces form a ring, applied two ways: in one `kubectl apply`
    (the ring exists at once) and one at a time, each settled first (it never does)."""
    together, one_by_one = "parity-ring-together", "parity-ring-one-by-one"
    for ns in (together, one_by_one):
        namespace(side, ns)
        operator_group(side, ns, [ns])
    side.apply([ring_csv(n, RING[n]) for n in ("ring-c", "ring-b", "ring-a")], together)
    for name in RING:
        wait(
            lambda name=name: csv_state(side, together, name).split("/")[0] in PHASES_AT_REST,
            TIMEOUT,
            f"{together}/{name} Pending or Failed",
        )
    snaps = {"together": settled(side, Scope([together], catalogs=[]))}

    side.apply(ring_csv("ring-b", RING["ring-b"]), one_by_one)
    wait_csv(side, one_by_one, "ring-b")
    side.apply(ring_csv("ring-c", RING["ring-c"]), one_by_one)
    wait(lambda: gone(side, one_by_one, "ring-c"), TIMEOUT, "ring-c replaced")
    side.apply(ring_csv("ring-a", RING["ring-a"]), one_by_one)
    wait_csv(side, one_by_one, "ring-a")
    wait(lambda: gone(side, one_by_one, "ring-b"), TIMEOUT, "ring-b replaced")
    snaps["one-by-one"] = settled(side, Scope([one_by_one], catalogs=[]))
    return snaps


PHASES_AT_REST = ("Pending", "Failed")  # OLM's and olm-py's answers to a ring


def packagemanifests(side: Side) -> Snapshots:
    """`kubectl get packagemanifests` and its icon subresource (tests/parity/packagemanifests.py)."""
    return pm.run(side, parity_catalog)
