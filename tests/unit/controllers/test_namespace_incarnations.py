"""A namespace deleted and made again is another namespace: what the cache still holds of the
old one (its own DELETED events lost in a watch gap) is dropped as soon as the cache learns the
old one ended, and is never acted on in the new one (soak, issue 30: an InstallPlan of the old
namespace was carried out into the new one, and its CSV then blocked a new Subscription)."""

from __future__ import annotations

import asyncio
from typing import Any

from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.controllers.watch import _make_handler, open_barrier
from tests.unit.controllers.test_cache import drain

OLD_DAY = "2026-11-27T20:58:17Z"  # the old namespace's objects were made then
ENDED = "2026-11-27T20:58:24Z"  # the old namespace's deletionTimestamp
REMADE = "2026-11-27T20:59:23Z"  # the new namespace's creationTimestamp
LATER = "2026-11-27T21:01:35Z"


def namespace(uid: str, rv: str, created: str, deleting: str = "") -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "soak-025",
        "uid": uid,
        "resourceVersion": rv,
        "creationTimestamp": created,
    }
    if deleting:
        meta["deletionTimestamp"] = deleting
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def thing(name: str, created: str, space: str = "soak-025", rv: str = "5") -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": space,
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": rv,
            "creationTimestamp": created,
        }
    }


def cached(store: Store) -> list[tuple[str, str, str]]:
    return sorted(
        (kind.value, *key)
        for kind in (StoreKind.INSTALL_PLAN, StoreKind.CSV, StoreKind.SUBSCRIPTION)
        for key in store.keys(kind)
    )


def old_world() -> Store:
    store = Store()
    store.upsert(StoreKind.NAMESPACE, namespace("uid-old", "10", "2026-11-27T20:00:00Z"))
    store.upsert(StoreKind.INSTALL_PLAN, thing("install-x7gx5", OLD_DAY))
    store.upsert(StoreKind.CSV, thing("memcached-operator.v0.0.2-soak.28", OLD_DAY))
    store.upsert(StoreKind.CSV, thing("elsewhere", OLD_DAY, space="soak-026"))
    return store


def test_a_namespace_of_another_uid_drops_what_the_old_one_left() -> None:
    store = old_world()
    store.upsert(StoreKind.SUBSCRIPTION, thing("memcached", LATER, rv="30"))  # the new one's
    new = namespace("uid-new", "20", REMADE)
    old = store.upsert(StoreKind.NAMESPACE, new)
    dropped = store.renewed(StoreKind.NAMESPACE, old, new)
    assert sorted(str(body["metadata"]["name"]) for _, body in dropped) == [
        "install-x7gx5",
        "memcached-operator.v0.0.2-soak.28",
    ]
    assert cached(store) == [
        ("csv", "soak-026", "elsewhere"),
        ("subscription", "soak-025", "memcached"),
    ]


def test_the_same_namespace_changing_drops_nothing() -> None:
    store = old_world()
    new = namespace("uid-old", "11", "2026-11-27T20:00:00Z", deleting=ENDED)
    assert store.renewed(StoreKind.NAMESPACE, store.upsert(StoreKind.NAMESPACE, new), new) == []
    assert len(cached(store)) == 3


def test_a_namespace_deleted_drops_what_was_made_before_its_deletion() -> None:
    store = old_world()
    # An object of the very second the deletion began is kept: timestamps are whole seconds.
    store.upsert(StoreKind.SUBSCRIPTION, thing("same-second", ENDED))
    dropped = store.forget(
        StoreKind.NAMESPACE, namespace("uid-old", "12", "2026-11-27T20:00:00Z", deleting=ENDED)
    )
    assert len(dropped) == 2
    assert store.get(StoreKind.NAMESPACE, "", "soak-025") is None
    assert cached(store) == [
        ("csv", "soak-026", "elsewhere"),
        ("subscription", "soak-025", "same-second"),
    ]


def test_objects_without_a_creation_time_are_left_to_the_relist() -> None:
    store = old_world()
    store.upsert(StoreKind.SUBSCRIPTION, {"metadata": {"namespace": "soak-025", "name": "bare"}})
    new = namespace("uid-new", "20", REMADE)
    store.renewed(StoreKind.NAMESPACE, store.upsert(StoreKind.NAMESPACE, new), new)
    assert ("subscription", "soak-025", "bare") in cached(store)


def test_the_watch_handler_drops_the_old_plan_before_anything_is_woken() -> None:
    """The soak's sequence: the old namespace's deletion happened while the watch was down;
    the next event is the new namespace (a relist after the gap). Its InstallPlan must be
    gone from the cache before the workers the event wakes look at it."""
    store, queue = old_world(), WorkQueue()
    open_barrier(store, queue)
    drain(queue)
    handler = _make_handler(StoreKind.NAMESPACE, store, queue)
    asyncio.run(handler(event={"type": None, "object": namespace("uid-new", "20", REMADE)}))
    assert store.get(StoreKind.INSTALL_PLAN, "soak-025", "install-x7gx5") is None
    woken = drain(queue)
    # The dropped plan's own key is woken as its deletion would have woken it: its worker
    # finds it gone and does nothing.
    assert ("installplan", "soak-025", "install-x7gx5") in woken


def test_secrets_and_copies_keep_their_creation_time_in_the_cache() -> None:
    from olm.controllers.watch import trim

    full = {**thing("s", OLD_DAY), "data": {"k": "dg=="}}
    for kind in (StoreKind.SECRET, StoreKind.COPIED_CSV):
        assert trim(kind, full)["metadata"]["creationTimestamp"] == OLD_DAY


def test_the_old_namespaces_deletion_time_bounds_what_is_dropped_when_the_cache_saw_it() -> None:
    """Several API servers' clocks may differ: an object of the new namespace stamped a second
    before the namespace itself is kept when the cache knows when the old one began to go."""
    store = old_world()
    store.upsert(
        StoreKind.NAMESPACE, namespace("uid-old", "11", "2026-11-27T20:00:00Z", deleting=ENDED)
    )
    store.upsert(StoreKind.SUBSCRIPTION, thing("skewed", "2026-11-27T20:59:22Z", rv="30"))
    new = namespace("uid-new", "20", REMADE)
    store.renewed(StoreKind.NAMESPACE, store.upsert(StoreKind.NAMESPACE, new), new)
    assert ("subscription", "soak-025", "skewed") in cached(store)
    assert ("installplan", "soak-025", "install-x7gx5") not in cached(store)


def test_a_namespace_without_a_name_drops_nothing() -> None:
    store = old_world()
    store.upsert(StoreKind.CLUSTER_ROLE, thing("cluster-wide", OLD_DAY, space=""))
    assert store.forget(StoreKind.NAMESPACE, {"metadata": {"deletionTimestamp": LATER}}) == []
    assert store.get(StoreKind.CLUSTER_ROLE, "", "cluster-wide") is not None
