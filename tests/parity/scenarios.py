"""Parity scenarios: what an admin types, and the snapshots taken on the way.

Each scenario drives one side (a cluster running the real OLM v0 or olm-py) through kubectl
and Subscription steps, waits on observable conditions, and returns its snapshots: point name
-> the objects `harness.collect` read there. The same scenario runs on both sides, in the same
order, with the same namespace names, so cluster-scoped state (CRDs) evolves alike.
"""

from __future__ import annotations

from tests.parity.harness import Scope, Side, settled, wait
from tests.parity.scenarios_catalog import (
    all_namespaces,
    crd_upgrade,
    packagemanifests,
    replace_rings,
    unsupported_kind,
)
from tests.parity.scenarios_metadata import dependency_upgrade, deprecations, generic_constraint
from tests.parity.steps import (
    MEMCACHED_API,
    NEW,
    OLD,
    SAMPLE,
    TIMEOUT,
    Scenario,
    Snapshots,
    approve,
    condition,
    csv_state,
    gone,
    namespace,
    operator_group,
    plan_for,
    sample_csv,
    subscribe,
    subscription_status,
    wait_csv,
)

__all__ = ["SCENARIOS", "Scenario", "Snapshots"]

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
    wait(lambda: gone(side, ns, OLD), TIMEOUT, f"{OLD} deleted")
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
    wait(lambda: gone(side, ns, NEW), TIMEOUT, f"{NEW} deleted")
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
    wait(lambda: gone(side, ns, OLD), TIMEOUT, f"{OLD} deleted")
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
    wait(lambda: gone(side, ns, OLD), TIMEOUT, f"{OLD} deleted")
    return {"upgraded": settled(side, scope)}


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
    Scenario("dependency-upgrade", dependency_upgrade),
]
