"""A chosen bundle whose image could not be unpacked when its catalog was read: the
Subscription says which image and why, with OLM's BundleUnpackFailed condition (not
ResolutionFailed), writes nothing more while nothing changes, and recovers once the catalog
read unpacks it."""

from __future__ import annotations

import dataclasses

import pytest

from olm.catalog.model import Catalog
from olm.subscription.decide import decide
from olm.subscription.snapshot import LoadedCatalog, catalogs_in_scope
from tests.unit.subscription.world import (
    GLOBAL,
    IMAGE,
    NS,
    V2,
    WHY,
    broken,
    catalog_source,
    conditions,
    converge,
    samples,
    status_of,
    subscription,
    world,
)


def loaded(catalog: Catalog) -> dict[tuple[str, str], Catalog]:
    return {(GLOBAL, "samples"): catalog}


@pytest.mark.parametrize(
    ("why", "fragment"),
    [
        (WHY, "has no team/memcached-bundle:v0.0.2"),
        (
            "it has no /manifests directory: it is not a registry+v1 bundle image",
            "it is not a registry+v1 bundle image",
        ),
    ],
)
def test_the_subscription_says_which_image_and_why(why: str, fragment: str) -> None:
    snapshot, _ = converge(world(loaded=loaded(broken(why))))
    status = status_of(snapshot)
    found = conditions(status)
    assert "ResolutionFailed" not in found
    condition = found["BundleUnpackFailed"]
    assert (condition["status"], condition["reason"]) == ("True", "BundleUnpackFailed")
    message = condition["message"]
    assert message.startswith(f"bundle image {IMAGE} of {V2} could not be unpacked: ")
    assert fragment in message
    assert f"(catalog {GLOBAL}/samples)" in message
    assert "olm-py tries again with backoff" in message
    assert "no ClusterServiceVersion" not in message
    assert not snapshot.plans, "no InstallPlan for a bundle that has no objects"
    # Nothing more to write while nothing changes (the transition time is kept).
    later = dataclasses.replace(snapshot, now=snapshot.now.replace(year=2031))
    assert decide(later).empty


def test_recovery_once_the_image_is_unpacked() -> None:
    snapshot, _ = converge(world(loaded=loaded(broken())))
    assert "BundleUnpackFailed" in conditions(status_of(snapshot))
    fixed = dataclasses.replace(
        snapshot,
        catalogs=catalogs_in_scope(
            NS, [catalog_source()], {(GLOBAL, "samples"): LoadedCatalog(samples())}, GLOBAL
        ),
    )
    recovered, _ = converge(fixed)
    status = status_of(recovered)
    assert status.get("currentCSV") == V2 and recovered.plans
    assert not {"BundleUnpackFailed", "ResolutionFailed"} & set(conditions(status))


def test_a_bundle_that_came_inline_is_not_an_unpack_failure() -> None:
    """Only a bundle left without objects counts (a stale problem on an unpacked one does not)."""
    snapshot, _ = converge(world(loaded=loaded(broken(inline=True))))
    status = status_of(snapshot)
    assert status.get("currentCSV") == V2
    assert "BundleUnpackFailed" not in conditions(status)


def test_other_subscriptions_are_unaffected() -> None:
    dashboard = subscription("dashboard", package="memcached-dashboard")
    snapshot, _ = converge(world([subscription(), dashboard], loaded=loaded(broken())))
    assert "BundleUnpackFailed" in conditions(status_of(snapshot))
    assert "BundleUnpackFailed" not in conditions(status_of(snapshot, "dashboard"))
