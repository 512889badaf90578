"""The informer cache: the sync barrier, relist purges and which keys a change wakes."""

from __future__ import annotations

import copy
from typing import Any

from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.controllers.watch import (
    WATCHED,
    Watched,
    open_barrier,
    related_keys,
    relist,
    resync_keys,
    unchanged,
)


def obj(namespace: str, name: str, rv: str = "1", **parts: Any) -> dict[str, Any]:
    return {"metadata": {"namespace": namespace, "name": name, "resourceVersion": rv}, **parts}


def drain(queue: WorkQueue) -> list[Any]:
    keys = []
    while (key := queue.get(timeout=0)) is not None:
        keys.append(key)
        queue.done(key)
    return keys


class FakeLister:
    def __init__(self, listings: dict[str, list[tuple[str, str]]]) -> None:
        self.listings = listings
        self.calls: list[tuple[str, str]] = []

    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]:
        self.calls.append((path, selector))
        return self.listings.get(path, [])


# ----- the store -----------------------------------------------------------------------------


def test_upsert_returns_the_entry_it_replaced() -> None:
    store = Store()
    first, second = obj("a", "x", "1"), obj("a", "x", "2")
    assert store.upsert("csv", first) is None
    assert store.upsert("csv", second) is first
    assert store.get("csv", "a", "x") is second


def test_an_older_version_never_replaces_a_newer_one() -> None:
    # A write's answer (resourceVersion 5) reaching the store after the watch brought the
    # object's next version (7, its status written by another controller) is dropped.
    store = Store()
    watched = obj("a", "dep", "7", status={"observedGeneration": 1})
    store.upsert("deployment", watched)
    assert store.upsert("deployment", obj("a", "dep", "5")) is watched
    assert store.get("deployment", "a", "dep") is watched
    # The same version again (a controller's copy with the status it just wrote) is kept.
    written = obj("a", "dep", "7", status={"observedGeneration": 2})
    store.upsert("deployment", written)
    assert store.get("deployment", "a", "dep") is written
    # Revisions compare as numbers, not text.
    store.upsert("deployment", obj("a", "dep", "10"))
    assert store.get("deployment", "a", "dep")["metadata"]["resourceVersion"] == "10"


def test_versions_that_are_not_numbers_are_not_compared() -> None:
    store = Store()
    store.upsert("csv", obj("a", "x", "b"))
    store.upsert("csv", obj("a", "x", "a"))
    assert store.get("csv", "a", "x")["metadata"]["resourceVersion"] == "a"


def test_retain_purges_only_entries_unchanged_since_the_relist_began() -> None:
    store = Store()
    gone, kept, touched = obj("a", "gone"), obj("a", "kept"), obj("a", "touched")
    for o in (gone, kept, touched):
        store.upsert("csv", o)
    before = store.snapshot("csv")
    store.upsert("csv", obj("a", "touched", "2"))  # a watch event during the relist wins
    store.upsert("csv", obj("a", "new"))  # created after the list was taken
    purged = store.retain("csv", before, {("a", "kept")})
    assert purged == [("a", "gone")]
    assert sorted(store.keys("csv")) == [("a", "kept"), ("a", "new"), ("a", "touched")]


def test_the_store_starts_unsynced() -> None:
    assert not Store().synced.is_set()


# ----- the sync barrier ----------------------------------------------------------------------


def test_opening_the_barrier_wakes_every_object_once() -> None:
    store, queue = Store(), WorkQueue()
    store.upsert("csv", obj("a", "csv-1"))
    store.upsert("operatorgroup", obj("a", "og"))
    store.upsert("installplan", obj("b", "install-1"))
    store.upsert("catalogsource", obj("olm", "samples"))
    store.upsert("subscription", obj("b", "sub"))
    store.upsert("deployment", obj("a", "dep"))  # not a controller's own kind
    open_barrier(store, queue)
    open_barrier(store, queue)  # idempotent
    assert store.synced.is_set()
    assert sorted(drain(queue)) == sorted(
        [
            ("csv", "a", "csv-1"),
            ("operatorgroup", "a", "og"),
            ("installplan", "b", "install-1"),
            ("catalogsource", "olm", "samples"),
            ("namespace", "", "b"),
            # the scope controllers (olm.controllers.scope): per CSV and per group
            ("scope", "a", "csv-1"),
            ("scope-group", "a", "og"),
            # the adoption controller (olm.controllers.operator): namespaces with CSVs or
            # Subscriptions
            ("adoption", "", "a"),
            ("adoption", "", "b"),
        ]
    )


def test_resync_keys_name_each_subscription_namespace_once() -> None:
    store = Store()
    store.upsert("subscription", obj("b", "one"))
    store.upsert("subscription", obj("b", "two"))
    assert resync_keys(store) == [("namespace", "", "b"), ("adoption", "", "b")]


# ----- relist --------------------------------------------------------------------------------


def test_relist_purges_what_a_watch_gap_deleted_and_uses_the_watch_selector() -> None:
    store = Store()
    store.upsert("deployment", obj("a", "still-here"))
    store.upsert("deployment", obj("a", "deleted-while-unwatched"))
    deployments = next(w for w in WATCHED if w.kind == "deployment")
    lister = FakeLister({deployments.path: [("a", "still-here")]})
    assert [entry for _, entry in relist(store, lister, [deployments])] == [
        obj("a", "deleted-while-unwatched")
    ]
    assert store.keys("deployment") == [("a", "still-here")]
    assert lister.calls == [("/apis/apps/v1/deployments", "olm.owner")]


def test_watched_paths_are_the_list_paths_of_every_namespace() -> None:
    assert Watched("namespace", "", "v1", "namespaces").path == "/api/v1/namespaces"
    csv = next(w for w in WATCHED if w.kind == "csv")
    assert csv.path == "/apis/operators.coreos.com/v1alpha1/clusterserviceversions"
    assert csv.selector == "!olm.copiedFrom", "copies are watched as a kind of their own"


# ----- what a change wakes -------------------------------------------------------------------


def test_an_event_with_the_stored_resource_version_is_no_change() -> None:
    stored = obj("a", "x", "7")
    assert unchanged(stored, copy.deepcopy(stored))
    assert not unchanged(stored, obj("a", "x", "8"))
    assert not unchanged(None, stored)


def csv_store() -> Store:
    store = Store()
    store.upsert("operatorgroup", obj("a", "og"))
    store.upsert("csv", obj("a", "v1", spec={}))
    store.upsert("csv", obj("a", "v2", spec={"replaces": "v1"}))
    store.upsert("csv", obj("a", "unrelated", spec={}))
    return store


def test_a_csv_status_write_does_not_wake_its_operator_group_or_unrelated_csvs() -> None:
    store = csv_store()
    old = obj("a", "v2", "1", spec={"replaces": "v1"}, status={"phase": "Pending"})
    new = obj("a", "v2", "2", spec={"replaces": "v1"}, status={"phase": "Succeeded"})
    keys = related_keys("csv", new, store, old)
    assert ("operatorgroup", "a", "og") not in keys
    assert ("csv", "a", "unrelated") not in keys
    assert {("csv", "a", "v2"), ("csv", "a", "v1"), ("namespace", "", "a")} <= set(keys)


def test_a_csv_spec_change_or_creation_wakes_its_operator_group() -> None:
    store = csv_store()
    new = obj("a", "v2", "2", spec={"replaces": "v1", "x": 1})
    assert ("operatorgroup", "a", "og") in related_keys("csv", new, store, None)
    old = obj("a", "v2", "1", spec={"replaces": "v1"})
    assert ("operatorgroup", "a", "og") in related_keys("csv", new, store, old)


def test_a_group_change_wakes_its_csvs_and_siblings_only_when_it_comes_or_goes() -> None:
    store = csv_store()
    store.upsert("operatorgroup", obj("a", "other"))
    old = obj("a", "og", "1", spec={}, status={})
    new = obj("a", "og", "2", spec={}, status={"namespaces": ["a"]})
    keys = related_keys("operatorgroup", new, store, old)
    assert ("operatorgroup", "a", "other") not in keys
    assert {("csv", "a", "v1"), ("csv", "a", "v2"), ("csv", "a", "unrelated")} <= set(keys)
    created = related_keys("operatorgroup", new, store, None)
    assert ("operatorgroup", "a", "other") in created
    deleted = related_keys("operatorgroup", new, store, new, deleted=True)
    assert ("operatorgroup", "a", "other") in deleted


def test_a_deployment_wakes_the_csv_its_labels_name() -> None:
    labels = {"olm.owner": "v2", "olm.owner.namespace": "a"}
    deployment = obj("a", "dep")
    deployment["metadata"]["labels"] = labels
    assert related_keys("deployment", deployment, Store()) == [("csv", "a", "v2")]
    assert related_keys("deployment", obj("a", "plain"), Store()) == []


def test_a_namespace_change_wakes_only_the_groups_whose_targets_it_can_change() -> None:
    store = Store()
    store.upsert("operatorgroup", obj("operators", "global-operators", spec={}))
    store.upsert("operatorgroup", obj("new", "own", spec={"targetNamespaces": ["new"]}))
    store.upsert("operatorgroup", obj("x", "names-it", spec={"targetNamespaces": ["x", "new"]}))
    store.upsert("operatorgroup", obj("y", "selects", spec={"selector": {"matchLabels": {}}}))
    store.upsert("operatorgroup", obj("z", "elsewhere", spec={"targetNamespaces": ["z"]}))
    keys = related_keys("namespace", obj("", "new"), store)
    assert sorted(keys) == [
        ("operatorgroup", "new", "own"),
        ("operatorgroup", "x", "names-it"),
        ("operatorgroup", "y", "selects"),
        ("scope-namespace", "", "new"),  # its labels and copies (olm.controllers.scope)
    ]


def test_a_csv_change_wakes_rival_replacers_of_the_same_csv() -> None:
    store = csv_store()
    store.upsert("csv", obj("a", "rival", spec={"replaces": "v1"}))
    new = obj("a", "v2", "2", spec={"replaces": "v1"}, status={"phase": "Succeeded"})
    keys = related_keys("csv", new, store, None, deleted=True)
    assert ("csv", "a", "rival") in keys
    assert keys.count(("csv", "a", "v2")) == 1
