"""Parity scenarios: what an admin types, and the snapshots taken on the way.

Each scenario drives one side (a cluster running the real OLM v0 or olm-py) through kubectl
and Subscription steps, waits on observable conditions, and returns its snapshots: point name
-> the objects `harness.collect` read there. The same scenario runs on both sides, in the same
order, with the same namespace names, so cluster-scoped state (CRDs) evolves alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from tests.parity import packagemanifests as pm
from tests.parity.catalogs import Bundle, Package, load_manifests, write_catalog
from tests.parity.harness import Scope, Side, settled, wait
from tests.support.paths import REPO, SHARED
from tests.support.stories import minimal_csv

SAMPLE = REPO / "manifests" / "samples" / "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
MEMCACHED_API = "memcacheds.cache.example.com"
TIMEOUT = 180.0  # the real OLM is slower than olm-py; generous, but a stall still fails
COPY_TIMEOUT = 420.0

Snapshots = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Side], Snapshots]


# --- building blocks ---------------------------------------------------------------------


def namespace(side: Side, name: str) -> None:
    side.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def operator_group(side: Side, ns: str, targets: list[str] | None, name: str = "og") -> None:
    spec: dict[str, Any] = {} if targets is None else {"targetNamespaces": targets}
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        }
    )


def csv_state(side: Side, ns: str, name: str) -> str:
    csv = side.get("clusterserviceversions.operators.coreos.com", name, ns)
    if csv is None:
        return "absent"
    status = csv.get("status") or {}
    return f"{status.get('phase', '')}/{status.get('reason', '')}"


def wait_csv(side: Side, ns: str, name: str, state: str = "Succeeded/InstallSucceeded") -> None:
    wait(lambda: csv_state(side, ns, name) == state, TIMEOUT, f"{ns}/{name} {state}")


def sample_csv(name: str) -> dict[str, Any]:
    version = name.rsplit(".v", 1)[-1]
    loaded: dict[str, Any] = yaml.safe_load(
        (SAMPLE / f"memcached-operator.v{version}.csv.yaml").read_text()
    )
    return loaded


def subscribe(side: Side, ns: str, approval: str, sub: str = "memcached", **spec: str) -> None:
    body: dict[str, Any] = {
        "name": "memcached-operator",
        "channel": "alpha",
        "source": "samples",
        "sourceNamespace": "olm",
        "installPlanApproval": approval,
    }
    body.update(spec)
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": sub, "namespace": ns},
            "spec": body,
        }
    )


def subscription_status(side: Side, ns: str, name: str = "memcached") -> dict[str, Any]:
    sub = side.get("subscriptions.operators.coreos.com", name, ns) or {}
    status: dict[str, Any] = sub.get("status") or {}
    return status


def plan_for(side: Side, ns: str, csv: str, phase: str) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        for plan in side.items("installplans.operators.coreos.com", ns):
            if csv in plan["spec"]["clusterServiceVersionNames"] and (
                (plan.get("status") or {}).get("phase") == phase
            ):
                return plan
        return None

    found: dict[str, Any] = wait(find, TIMEOUT, f"an InstallPlan for {csv} in phase {phase}")
    return found


def approve(side: Side, ns: str, plan: dict[str, Any]) -> None:
    side.kubectl(
        "patch",
        "installplans.operators.coreos.com",
        plan["metadata"]["name"],
        "-n",
        ns,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"approved": True}}),
    )


# --- scenarios ---------------------------------------------------------------------------


def kubectl_story(side: Side) -> Snapshots:
    """The getting-started story with kubectl only: CRD and RBAC by hand, CSV 0.0.1, then
    0.0.2 replacing it, the operator Deployment deleted and put back, the CSV deleted."""
    ns = "parity-kubectl"
    scope = Scope([ns], catalogs=[], api_prefixes=[MEMCACHED_API])
    snaps: Snapshots = {}
    namespace(side, ns)
    operator_group(side, ns, [ns])
    side.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    side.kubectl("apply", "-n", ns, "-f", str(SAMPLE / "rbac.yaml"))
    side.apply(sample_csv(OLD), ns)
    wait_csv(side, ns, OLD)
    snaps["installed"] = settled(side, scope)

    side.apply(sample_csv(NEW), ns)
    wait_csv(side, ns, NEW)
    wait(lambda: csv_state(side, ns, OLD) == "absent", TIMEOUT, f"{OLD} deleted")
    snaps["replaced"] = settled(side, scope)

    before = side.get("deployments.apps", "memcached-operator", ns) or {}
    side.kubectl("delete", "deployment", "memcached-operator", "-n", ns)
    wait(
        lambda: (
            (d := side.get("deployments.apps", "memcached-operator", ns)) is not None
            and d["metadata"]["uid"] != before.get("metadata", {}).get("uid")
        ),
        TIMEOUT,
        "the operator Deployment put back",
    )
    wait_csv(side, ns, NEW)
    snaps["deployment-restored"] = settled(side, scope)

    side.kubectl("delete", "csv", NEW, "-n", ns)
    wait(lambda: csv_state(side, ns, NEW) == "absent", TIMEOUT, f"{NEW} deleted")
    wait(
        lambda: side.get("deployments.apps", "memcached-operator", ns) is None,
        TIMEOUT,
        "the operator Deployment garbage-collected",
    )
    snaps["deleted"] = settled(side, scope)
    return snaps


def subscription_manual(side: Side) -> Snapshots:
    """Subscribe with Manual approval at 0.0.1; approve it, then approve the upgrade to 0.0.2."""
    ns = "parity-sub-manual"
    scope = Scope([ns], api_prefixes=[MEMCACHED_API])
    snaps: Snapshots = {}
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Manual", startingCSV=OLD)
    first = plan_for(side, ns, OLD, "RequiresApproval")
    wait(
        lambda: subscription_status(side, ns).get("state") == "UpgradePending",
        TIMEOUT,
        "Subscription UpgradePending",
    )
    snaps["pending"] = settled(side, scope)

    approve(side, ns, first)
    wait_csv(side, ns, OLD)
    second = plan_for(side, ns, NEW, "RequiresApproval")
    wait(
        lambda: subscription_status(side, ns).get("currentCSV") == NEW,
        TIMEOUT,
        "Subscription currentCSV 0.0.2",
    )
    snaps["installed"] = settled(side, scope)

    approve(side, ns, second)
    wait_csv(side, ns, NEW)
    wait(
        lambda: subscription_status(side, ns).get("state") == "AtLatestKnown",
        TIMEOUT,
        "Subscription AtLatestKnown",
    )
    wait(lambda: csv_state(side, ns, OLD) == "absent", TIMEOUT, f"{OLD} deleted")
    snaps["upgraded"] = settled(side, scope)
    return snaps


def subscription_automatic(side: Side) -> Snapshots:
    """Subscribe with Automatic approval at 0.0.1: it installs and upgrades to 0.0.2 alone."""
    ns = "parity-sub-auto"
    scope = Scope([ns], api_prefixes=[MEMCACHED_API])
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Automatic", startingCSV=OLD)
    wait_csv(side, ns, NEW)
    wait(
        lambda: (
            subscription_status(side, ns).get("state") == "AtLatestKnown"
            and subscription_status(side, ns).get("installedCSV") == NEW
        ),
        TIMEOUT,
        "Subscription AtLatestKnown at 0.0.2",
    )
    wait(lambda: csv_state(side, ns, OLD) == "absent", TIMEOUT, f"{OLD} deleted")
    return {"upgraded": settled(side, scope)}


def condition(side: Side, ns: str, kind: str, name: str, type_: str) -> dict[str, Any]:
    obj = side.get(kind, name, ns) or {}
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            found: dict[str, Any] = cond
            return found
    return {}


def resolution_failures(side: Side) -> Snapshots:
    """Subscriptions that cannot resolve: a package, a channel, a catalog that do not exist."""
    cases = {
        "parity-res-package": {"name": "no-such-operator"},
        "parity-res-channel": {"channel": "no-such-channel"},
        "parity-res-catalog": {"source": "no-such-catalog"},
    }
    for ns, spec in cases.items():
        namespace(side, ns)
        operator_group(side, ns, [ns])
        subscribe(side, ns, "Automatic", **spec)
    sub = "subscriptions.operators.coreos.com"
    for ns in cases:
        wait(
            lambda ns=ns: any(
                condition(side, ns, sub, "memcached", t).get("status") == "True"
                for t in ("ResolutionFailed", "CatalogSourcesUnhealthy")
            ),
            TIMEOUT,
            f"{ns}: the Subscription says why it cannot resolve",
        )
    return {"failed": settled(side, Scope(list(cases)))}


def operator_group_targets(side: Side) -> Snapshots:
    """An operator installed for its own namespace; then its group targets another one."""
    ns, other = "parity-og-a", "parity-og-b"
    scope = Scope([ns, other], api_prefixes=[MEMCACHED_API])
    namespace(side, ns)
    namespace(side, other)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Automatic")
    wait_csv(side, ns, NEW)
    snaps = {"installed": settled(side, scope)}

    operator_group(side, ns, [other])

    def retargeted() -> bool:
        csv = side.get("clusterserviceversions.operators.coreos.com", NEW, ns) or {}
        annotations = csv.get("metadata", {}).get("annotations") or {}
        return (
            annotations.get("olm.targetNamespaces") == other
            and csv_state(side, ns, NEW) == "Succeeded/InstallSucceeded"
        )

    wait(retargeted, TIMEOUT, f"{NEW} Succeeded for target {other}")
    snaps["retargeted"] = settled(side, scope)
    return snaps


# --- scenarios on the parity catalog (catalogs.py: inline bundles, served by opm) ---------

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
        lambda: csv_state(side, ns, "widget-operator.v1.0.0") == "absent",
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
    wait(lambda: csv_state(side, one_by_one, "ring-c") == "absent", TIMEOUT, "ring-c replaced")
    side.apply(ring_csv("ring-a", RING["ring-a"]), one_by_one)
    wait_csv(side, one_by_one, "ring-a")
    wait(lambda: csv_state(side, one_by_one, "ring-b") == "absent", TIMEOUT, "ring-b replaced")
    snaps["one-by-one"] = settled(side, Scope([one_by_one], catalogs=[]))
    return snaps


PHASES_AT_REST = ("Pending", "Failed")  # OLM's and olm-py's answers to a ring


def packagemanifests(side: Side) -> Snapshots:
    """`kubectl get packagemanifests` and its icon subresource (tests/parity/packagemanifests.py)."""
    return pm.run(side, parity_catalog)


# --- catalog metadata: deprecations and generic constraints (catalogs.py, opm serve) ------

DEPRECATED = "tiny-deprecated.v1.0.0"
DEPRECATION_FAMILY = ("Deprecated", "PackageDeprecated", "ChannelDeprecated", "BundleDeprecated")


def deprecations(side: Side) -> Snapshots:
    """A package whose package, alpha channel and only bundle are deprecated in the catalog's
    `olm.deprecations`: it still installs, and the Subscription carries the four conditions."""
    ns, source = "parity-deprecations", "parity-deprecations"
    directory = side.log_dir / source
    if not directory.exists():
        package = Package(
            "tiny-deprecated",
            "alpha",
            [Bundle([minimal_csv(DEPRECATED)])],
            deprecations=[
                {"reference": {"schema": "olm.package"}, "message": "tiny is end of life"},
                {
                    "reference": {"schema": "olm.channel", "name": "alpha"},
                    "message": "alpha gets no more updates",
                },
                {
                    "reference": {"schema": "olm.bundle", "name": DEPRECATED},
                    "message": f"{DEPRECATED} loses data on restart",
                },
            ],
        )
        write_catalog(directory, [package])
    side.catalog(source, directory)
    namespace(side, ns)
    operator_group(side, ns, [ns])
    subscribe(side, ns, "Automatic", sub="tiny", **{"name": "tiny-deprecated", "source": source})
    wait_csv(side, ns, DEPRECATED)
    sub = "subscriptions.operators.coreos.com"
    wait(
        lambda: (
            subscription_status(side, ns, "tiny").get("state") == "AtLatestKnown"
            and all(
                condition(side, ns, sub, "tiny", t).get("status") == "True"
                for t in DEPRECATION_FAMILY
            )
        ),
        TIMEOUT,
        "Subscription AtLatestKnown with the four deprecation conditions",
    )
    return {"installed": settled(side, Scope([ns], catalogs=[source]))}


def needs(package: str, failure_message: str = "") -> dict[str, Any]:
    """An `olm.constraint` property whose CEL rule asks for a bundle of PACKAGE."""
    value: dict[str, Any] = {
        "cel": {
            "rule": f"properties.exists(p, p.type == 'olm.package' && "
            f"p.value.packageName == '{package}')"
        }
    }
    if failure_message:
        value["failureMessage"] = failure_message
    return {"type": "olm.constraint", "value": value}


def generic_constraint(side: Side) -> Snapshots:
    """Two packages whose bundles carry an `olm.constraint` CEL rule: one satisfied by another
    package of the catalog (it is installed as a dependency), one asking for a package no
    catalog has (with a failureMessage: the Subscription says ResolutionFailed)."""
    ok, failing, source = "parity-constraint-ok", "parity-constraint-fail", "parity-constraints"
    directory = side.log_dir / source
    if not directory.exists():
        packages = [
            Package("provider", "alpha", [Bundle([minimal_csv("provider.v1.0.0")])]),
            Package(
                "needy",
                "alpha",
                [Bundle([minimal_csv("needy.v1.0.0")], properties=[needs("provider")])],
            ),
            Package(
                "lonely",
                "alpha",
                [
                    Bundle(
                        [minimal_csv("lonely.v1.0.0")],
                        properties=[needs("absent", "lonely needs the absent operator")],
                    )
                ],
            ),
        ]
        write_catalog(directory, packages)
    side.catalog(source, directory)
    for ns, package in ((ok, "needy"), (failing, "lonely")):
        namespace(side, ns)
        operator_group(side, ns, [ns])
        subscribe(side, ns, "Automatic", sub=package, **{"name": package, "source": source})
    wait_csv(side, ok, "needy.v1.0.0")
    wait_csv(side, ok, "provider.v1.0.0")
    wait(
        lambda: subscription_status(side, ok, "needy").get("state") == "AtLatestKnown",
        TIMEOUT,
        "needy AtLatestKnown",
    )
    sub = "subscriptions.operators.coreos.com"
    wait(
        lambda: condition(side, failing, sub, "lonely", "ResolutionFailed").get("status") == "True",
        TIMEOUT,
        "lonely ResolutionFailed",
    )
    return {"resolved": settled(side, Scope([ok, failing], catalogs=[source]))}


SCENARIOS = [
    Scenario("kubectl-story", kubectl_story),
    Scenario("subscription-manual", subscription_manual),
    Scenario("subscription-automatic", subscription_automatic),
    Scenario("resolution-failures", resolution_failures),
    Scenario("operatorgroup-targets", operator_group_targets),
    Scenario("crd-upgrade", crd_upgrade),
    Scenario("all-namespaces", all_namespaces),
    Scenario("replace-rings", replace_rings),
    Scenario("packagemanifests", packagemanifests),
    Scenario("unsupported-kind", unsupported_kind),
    Scenario("deprecations", deprecations),
    Scenario("generic-constraint", generic_constraint),
]
