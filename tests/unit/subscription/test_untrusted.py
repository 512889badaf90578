"""Subscriptions and `--trusted-catalogs`: a catalog the setting rules out is in scope (its
health is reported) but never resolved from, never waited for, and the Subscription that
names it says why in OLM's CatalogSourcesUnhealthy condition."""

from __future__ import annotations

import dataclasses
from typing import Any

from olm.catalogsource.trust import parse
from olm.subscription.decide import decide
from olm.subscription.snapshot import LoadedCatalog, Snapshot, catalogs_in_scope
from tests.unit.subscription.world import (
    GLOBAL,
    NS,
    V2,
    apply,
    catalog_source,
    samples,
    subscription,
    world,
)


def team_catalog() -> dict[str, Any]:
    """A ConfigMap catalog in the Subscription's namespace, with no status yet."""
    found = catalog_source("team", NS)
    found["spec"] = {"sourceType": "configmap", "configMap": "team-catalog"}
    return found


def snapshot(setting: list[str], loaded: bool = True, **spec: Any) -> Snapshot:
    sources = [catalog_source(), team_catalog()]
    content = {(GLOBAL, "samples"): samples()}
    if loaded:  # as if it had been read before (it never is, with the setting on)
        content[(NS, "team")] = samples()
    base = world([subscription(**spec)], sources=sources, loaded=content)
    catalogs = catalogs_in_scope(
        NS,
        sources,
        {k: LoadedCatalog(v) for k, v in content.items()},
        GLOBAL,
        parse(setting),
    )
    return dataclasses.replace(base, catalogs=catalogs)


def conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions") or []}


def test_an_untrusted_catalog_is_failed_and_its_content_ignored() -> None:
    found = {c.key: c for c in snapshot(["olm=address"]).catalogs}
    team = found[f"{NS}/team"]
    assert team.loaded is None and team.failed and team.known and not team.healthy
    assert team.untrusted.startswith("catalog kind configmap (spec.configMap) is not trusted")
    assert found[f"{GLOBAL}/samples"].healthy and not found[f"{GLOBAL}/samples"].untrusted


def test_a_subscription_to_an_untrusted_catalog_says_why_and_installs_nothing() -> None:
    decision = decide(snapshot(["olm=address"], source="team", sourceNamespace=NS))
    assert decision.create is None
    [write] = decision.statuses
    unhealthy = conditions(write.status)["CatalogSourcesUnhealthy"]
    assert (unhealthy["status"], unhealthy["reason"]) == ("True", "UnhealthyCatalogSourceFound")
    assert unhealthy["message"] == (
        f"targeted catalogsource {NS}/team unhealthy: catalog kind configmap (spec.configMap) is "
        f"not trusted in namespace {NS}: no catalog in namespace {NS} is trusted (olm-py runs "
        f"with --trusted-catalogs olm=address); ask the cluster admin to add {NS}=configmap to "
        "--trusted-catalogs (chart value trustedCatalogs)"
    )
    health = {e["catalogSourceRef"]["name"]: e["healthy"] for e in write.status["catalogHealth"]}
    assert health == {"samples": True, "team": False}
    again = apply(snapshot(["olm=address"], source="team", sourceNamespace=NS), decision)
    assert decide(again).empty, "said once"


def test_the_same_catalog_trusted_in_its_namespace_installs() -> None:
    decision = decide(snapshot([f"olm=address,{NS}=configmap"], source="team", sourceNamespace=NS))
    assert decision.create is not None
    assert decision.create.csv_names == [V2]


def test_an_untrusted_catalog_never_read_does_not_hold_up_other_subscriptions() -> None:
    """Not loaded and no status yet: without the setting resolution would wait for it; ruled
    out, it is known at once, and the Subscription to the trusted catalog resolves."""
    decision = decide(snapshot(["olm=address"], loaded=False))
    assert decision.create is not None and decision.create.csv_names == [V2]
