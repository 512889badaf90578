"""The Subscription controller over the in-memory gateway: one InstallPlan per CSV set even
when the cache lags or olm-py stopped half-way; a second pass writes nothing; a terminating
namespace gets status writes only."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.catalogsource.decide import Cached
from olm.controllers.catalogsource import CatalogCache
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.controllers.subscription import SubscriptionController
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from tests.unit.subscription.world import (
    GLOBAL,
    NS,
    V1,
    catalog_source,
    install_plan,
    namespace_object,
    samples,
    subscription,
)

CACHED = {
    "Subscription": "subscription",
    "InstallPlan": "installplan",
    "ClusterServiceVersion": "csv",
    "CatalogSource": "catalogsource",
    "Namespace": "namespace",
}
IP = ("operators.coreos.com/v1alpha1", "InstallPlan")
SUB = ("operators.coreos.com/v1alpha1", "Subscription")


def sync(store: Store, fake: FakeGateway) -> None:
    """What the watch would bring: every cached kind as the fake holds it now."""
    for (_, kind, _, _), obj in fake.objects.items():
        if kind in CACHED:
            store.upsert(CACHED[kind], copy.deepcopy(obj))


def world(
    *objects: dict[str, Any], terminating: bool = False
) -> tuple[FakeGateway, Store, SubscriptionController]:
    fake = FakeGateway()
    fake.put(namespace_object(terminating))
    source = catalog_source()
    source["status"] = {"connectionState": {"lastObservedState": "READY"}}
    fake.put(source)
    for obj in objects:
        fake.put(obj)
    store = Store()
    sync(store, fake)
    cache = CatalogCache()
    cache.put(GLOBAL, "samples", Cached(samples(), 1, 0))
    return fake, store, SubscriptionController(store, fake, WorkQueue(), cache)


def plans(fake: FakeGateway) -> list[dict[str, Any]]:
    return [o for k, o in fake.objects.items() if k[:2] == IP]


def sub_status(fake: FakeGateway) -> dict[str, Any]:
    status: dict[str, Any] = fake.get(*SUB, NS, "memcached").get("status") or {}
    return status


def test_a_subscription_gets_one_plan_and_a_second_pass_writes_nothing() -> None:
    fake, store, controller = world(subscription(startingCSV=V1))
    assert controller.reconcile("", NS) is None
    [plan] = plans(fake)
    assert plan["status"]["phase"] == "Installing" and plan["spec"][
        "clusterServiceVersionNames"
    ] == [V1]
    status = sub_status(fake)
    assert status["installPlanRef"]["name"] == plan["metadata"]["name"]
    assert status["installPlanRef"]["uid"] == plan["metadata"]["uid"]
    assert status["state"] == "UpgradePending" and status["currentCSV"] == V1
    cached = store.get("subscription", NS, "memcached")
    assert cached is not None and cached["status"]["currentCSV"] == V1, "written through"
    fake.take_writes()
    controller.reconcile("", NS)  # over the written-through cache
    sync(store, fake)
    controller.reconcile("", NS)  # over what the watch brings
    assert fake.changes() == []


def test_a_cache_that_has_not_seen_the_plan_yet_does_not_make_a_second_one() -> None:
    fake, store, controller = world(subscription(startingCSV=V1))
    controller.reconcile("", NS)
    [plan] = plans(fake)
    # The cache loses the plan and the Subscription's status (a stale watch), as after a
    # create whose answer never arrived.
    store.delete("installplan", NS, plan["metadata"]["name"])
    store.upsert("subscription", subscription(startingCSV=V1))
    controller.reconcile("", NS)
    assert [p["metadata"]["name"] for p in plans(fake)] == [plan["metadata"]["name"]]
    assert sub_status(fake)["installPlanRef"]["name"] == plan["metadata"]["name"]


def test_a_plan_left_without_status_is_adopted() -> None:
    unwritten = install_plan("install-abcde", [V1], None)
    fake, _store, controller = world(subscription(startingCSV=V1), unwritten)
    controller.reconcile("", NS)
    [plan] = plans(fake)
    assert plan["metadata"]["name"] == "install-abcde"
    assert plan["status"]["phase"] == "Installing" and plan["status"]["plan"]
    assert sub_status(fake)["installPlanRef"]["name"] == "install-abcde"


def test_a_terminating_namespace_gets_no_plan() -> None:
    fake, _store, controller = world(subscription(labelled=False, startingCSV=V1), terminating=True)
    controller.reconcile("", NS)
    assert plans(fake) == []
    assert {w.verb for w in fake.writes} <= {"patch_status"}


def test_a_refused_create_is_said_on_the_subscription_and_retried() -> None:
    fake, store, controller = world(subscription(startingCSV=V1))
    fake.fail("create", GatewayError("installplans is forbidden", 403), kind="InstallPlan")
    with pytest.raises(GatewayError):
        controller.reconcile("", NS)
    failed = next(c for c in sub_status(fake)["conditions"] if c["type"] == "BundleUnpackFailed")
    assert (failed["status"], failed["reason"]) == ("True", "EnsureInstallPlanFailed")
    assert "installplans is forbidden" in failed["message"]
    sync(store, fake)
    controller.reconcile("", NS)  # the retry
    assert len(plans(fake)) == 1
    types = {c["type"] for c in sub_status(fake)["conditions"]}
    assert "BundleUnpackFailed" not in types and "InstallPlanPending" in types
