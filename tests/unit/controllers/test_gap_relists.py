"""Relists after a watch gap: when kopf lists a kind again, olm-py relists every kind within
seconds, so a deletion the gap hid is purged (and woken) before the next periodic resync."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from olm.controllers import resync
from olm.controllers.queue import WorkQueue
from olm.controllers.resync import Gaps, relist_and_wake
from olm.controllers.store import Store, StoreKind
from olm.controllers.watch import WATCHED, _make_handler
from tests.unit.controllers.test_cache import drain


def plan(name: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "demo", "name": name, "resourceVersion": "3"}}


class Lister:
    def __init__(self, keys: list[tuple[str, str]]) -> None:
        self.keys, self.paths = keys, []

    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]:
        self.paths.append(path)
        return self.keys if path.endswith("/installplans") else []


def synced_store() -> Store:
    store = Store()
    store.synced.set()
    return store


def test_listings_of_the_first_seconds_after_the_barrier_ask_nothing() -> None:
    gaps = Gaps(synced_store(), delay=2.0, grace=30.0)
    gaps.listed(StoreKind.INSTALL_PLAN, now=100.0)  # the initial listing, delivered
    gaps.listed(StoreKind.INSTALL_PLAN, now=129.0)
    assert gaps.take_due(now=1000.0) == []


def test_a_listing_after_the_grace_is_relisted_once_after_its_last_event() -> None:
    gaps = Gaps(synced_store(), delay=2.0, grace=30.0)
    gaps.listed(StoreKind.NAMESPACE, now=100.0)
    gaps.listed(StoreKind.INSTALL_PLAN, now=200.0)
    gaps.listed(StoreKind.INSTALL_PLAN, now=201.0)  # kopf's listing goes on
    assert gaps.take_due(now=202.5) == []
    assert gaps.take_due(now=203.0) == [StoreKind.INSTALL_PLAN]
    assert gaps.take_due(now=204.0) == [], "taken once"


def test_no_listing_counts_before_the_barrier() -> None:
    gaps = Gaps(Store(), delay=0.0, grace=0.0)
    gaps.listed(StoreKind.INSTALL_PLAN, now=5.0)
    assert gaps.take_due(now=10.0) == []


def test_a_gap_relist_purges_only_its_kind_and_wakes_what_the_deletion_would() -> None:
    store, queue = synced_store(), WorkQueue()
    store.upsert(StoreKind.INSTALL_PLAN, plan("install-kept"))
    store.upsert(StoreKind.INSTALL_PLAN, plan("install-deleted-in-the-gap"))
    store.upsert(StoreKind.SUBSCRIPTION, plan("sub-not-listed"))
    lister = Lister([("demo", "install-kept")])
    assert relist_and_wake(store, lister, queue, [StoreKind.INSTALL_PLAN]) == 1
    assert lister.paths == ["/apis/operators.coreos.com/v1alpha1/installplans"]
    assert store.keys(StoreKind.INSTALL_PLAN) == [("demo", "install-kept")]
    assert store.keys(StoreKind.SUBSCRIPTION) == [("demo", "sub-not-listed")]
    woken = drain(queue)
    assert ("installplan", "demo", "install-deleted-in-the-gap") in woken


def test_the_watch_handler_notes_listing_events_only() -> None:
    noted: list[StoreKind] = []

    class Notes:
        def listed(self, kind: StoreKind) -> None:
            noted.append(kind)

    store, queue = synced_store(), WorkQueue()
    handler = _make_handler(StoreKind.INSTALL_PLAN, store, queue, Notes())
    asyncio.run(handler(event={"type": None, "object": plan("a")}))
    asyncio.run(handler(event={"type": "MODIFIED", "object": plan("b")}))
    asyncio.run(handler(event={"type": "DELETED", "object": plan("b")}))
    assert noted == [StoreKind.INSTALL_PLAN]


def test_a_gap_relists_every_kind_without_waiting_for_the_full_resync() -> None:
    store, queue, stop = synced_store(), WorkQueue(), threading.Event()
    store.upsert(StoreKind.INSTALL_PLAN, plan("install-deleted-in-the-gap"))
    gaps = Gaps(store, delay=0.0, grace=0.0)
    gaps.listed(StoreKind.INSTALL_PLAN)

    class StoppingLister(Lister):
        def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]:
            stop.set()
            return super().list_keys(path, selector)

    lister = StoppingLister([])
    resync.TICK, tick = 0.01, resync.TICK
    try:
        resync.run(queue, store, lister, 3600.0, stop, gaps)
    finally:
        resync.TICK = tick
    assert store.keys(StoreKind.INSTALL_PLAN) == []
    # Every kind (a kind whose relist finds nothing sends no listing event to notice), once.
    assert sorted(lister.paths) == sorted(w.path for w in WATCHED)
