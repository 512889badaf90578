"""A chosen bundle known by image only (its catalog was read without unpacking it): the
decision asks for the unpack, the Subscription waits with OLM's BundleUnpacking condition
(reason UnpackingInProgress) and no InstallPlan, and the plan is made once the objects are
there. A failed unpack is asked for again (the unpacker applies the backoff)."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from olm.catalog.model import Catalog
from olm.subscription.decide import REQUEUE_WHILE_UNPACKING, decide
from olm.subscription.snapshot import LoadedCatalog, UnpackRequest, catalogs_in_scope
from tests.unit.subscription.world import (
    GLOBAL,
    NS,
    V1,
    V2,
    broken,
    catalog_source,
    conditions,
    converge,
    samples,
    status_of,
    subscription,
    world,
)

IMAGE = "127.0.0.1:5000/team/memcached-bundle:{}"


def by_image(*bundles: str) -> Catalog:
    """The samples catalog with these bundles known by image only (no inline objects)."""
    catalog = copy.deepcopy(samples())
    for bundle in catalog.packages["memcached-operator"].bundles.values():
        if bundle.name in bundles:
            bundle.image = IMAGE.format(bundle.name)
            bundle.properties = [p for p in bundle.properties if p["type"] != "olm.bundle.object"]
    return catalog


def loaded(catalog: Catalog) -> dict[tuple[str, str], Catalog]:
    return {(GLOBAL, "samples"): catalog}


@pytest.mark.parametrize(
    ("subscriptions", "bundle"),
    [
        ([subscription()], V2),  # the channel head
        ([subscription(startingCSV=V1)], V1),  # a starting CSV
    ],
)
def test_the_subscription_waits_for_the_unpack(
    subscriptions: list[dict[str, object]], bundle: str
) -> None:
    snapshot, _ = converge(world(subscriptions, loaded=loaded(by_image(V1, V2))))
    status = status_of(snapshot)
    found = conditions(status)
    condition = found["BundleUnpacking"]
    assert (condition["status"], condition["reason"]) == ("True", "UnpackingInProgress")
    assert condition["message"] == (
        f"unpacking bundle image {IMAGE.format(bundle)} of {bundle} (catalog {GLOBAL}/samples)"
    )
    assert not {"BundleUnpackFailed", "ResolutionFailed"} & set(found)
    assert not snapshot.plans, "no InstallPlan before the bundle's objects are known"
    assert not status.get("currentCSV")
    plan = decide(snapshot)
    assert plan.empty, "nothing more to write while the unpack runs"
    assert plan.unpacks == [UnpackRequest(GLOBAL, "samples", IMAGE.format(bundle))]
    assert plan.requeue_after == REQUEUE_WHILE_UNPACKING


def test_only_the_chosen_bundle_is_asked_for() -> None:
    snapshot, _ = converge(world(loaded=loaded(by_image(V1, V2))))
    assert [r.image for r in decide(snapshot).unpacks] == [IMAGE.format(V2)]


def test_the_plan_is_made_once_the_objects_are_there() -> None:
    snapshot, _ = converge(world(loaded=loaded(by_image(V2))))
    assert "BundleUnpacking" in conditions(status_of(snapshot))
    unpacked = dataclasses.replace(
        snapshot,
        catalogs=catalogs_in_scope(
            NS, [catalog_source()], {(GLOBAL, "samples"): LoadedCatalog(samples())}, GLOBAL
        ),
    )
    done, _ = converge(unpacked)
    status = status_of(done)
    assert status.get("currentCSV") == V2 and done.plans
    assert not {"BundleUnpacking", "BundleUnpackFailed"} & set(conditions(status))
    assert decide(done).unpacks == []


def test_inline_bundles_need_no_unpack() -> None:
    snapshot, _ = converge(world(loaded=loaded(samples())))
    assert snapshot.plans and decide(snapshot).unpacks == []


def test_a_failed_unpack_is_asked_for_again() -> None:
    snapshot, _ = converge(world(loaded=loaded(broken())))
    assert "BundleUnpackFailed" in conditions(status_of(snapshot))
    assert "BundleUnpacking" not in conditions(status_of(snapshot))
    plan = decide(snapshot)
    assert plan.empty
    assert [r.image for r in plan.unpacks] == ["127.0.0.1:5000/team/memcached-bundle:v0.0.2"]
