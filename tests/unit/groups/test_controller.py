"""The OperatorGroup controller over the in-memory gateway: it writes what the decision says,
once; a second pass over the written state writes nothing; stale snapshots are retried."""

from __future__ import annotations

import copy
from typing import Any

from olm.controllers.operatorgroup import OperatorGroupController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.errors import Conflict, NotFound
from olm.kube.fake import FakeGateway

NS = "own"
CACHED = {
    "Namespace": "namespace",
    "OperatorGroup": "operatorgroup",
    "ClusterServiceVersion": "csv",
}
OG_API = "operators.coreos.com/v1"


def sync(store: Store, fake: FakeGateway) -> None:
    """What the watch would bring: every cached kind as the fake holds it now."""
    for (_, kind, _, _), obj in fake.objects.items():
        if kind in CACHED:
            store.upsert(CACHED[kind], copy.deepcopy(obj))


def group(name: str = "og", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": OG_API,
        "kind": "OperatorGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": spec,
    }


def csv(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "customresourcedefinitions": {
                "owned": [{"name": "things.x.io", "version": "v1", "kind": "Thing"}]
            }
        },
    }


def world(
    *objects: dict[str, Any],
) -> tuple[FakeGateway, Store, WorkQueue, OperatorGroupController]:
    fake = FakeGateway()
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for obj in objects:
        fake.put(obj)
    store, queue = Store(), WorkQueue()
    sync(store, fake)
    return fake, store, queue, OperatorGroupController(store, fake, queue)


def queued(queue: WorkQueue) -> list[Any]:
    keys = []
    while len(queue):
        key = queue.get(timeout=0)
        if key is None:
            break
        keys.append(key)
        queue.done(key)
    return keys


def test_a_new_group_is_written_once_then_left_alone() -> None:
    fake, store, queue, controller = world(group(targetNamespaces=[NS]), csv("op.v1"))
    assert controller.reconcile(NS, "og") is None
    assert [(w.verb, w.kind) for w in fake.take_writes()] == [
        ("patch_status", "OperatorGroup"),
    ]
    stored = fake.get(OG_API, "OperatorGroup", NS, "og")
    assert stored["status"]["namespaces"] == [NS] and stored["status"]["lastUpdated"]
    # olm.providedAPIs is added by the CSV's sync (OLM's AddAPIs); the group only prunes it.
    assert "olm.providedAPIs" not in (stored["metadata"].get("annotations") or {})
    assert queued(queue) == [], "CSVs wait for the group's status event"
    sync(store, fake)
    controller.reconcile(NS, "og")
    assert fake.take_writes() == [], "the second pass writes nothing"
    assert queued(queue) == [("csv", NS, "op.v1")], "the CSV has not seen the group yet"


def test_a_missing_namespace_gets_a_condition_and_one_event() -> None:
    fake, store, _, controller = world(group(targetNamespaces=[NS, "nowhere"]))
    controller.reconcile(NS, "og")
    status = fake.get(OG_API, "OperatorGroup", NS, "og")["status"]
    assert [c["type"] for c in status["conditions"]] == ["MissingTargetNamespaces"]
    events = fake.events()
    assert [(name, kind, reason) for name, kind, reason, _ in events] == [
        ("og", "Warning", "TargetNamespaceNotFound")
    ]
    assert '"nowhere"' in events[0][3]
    sync(store, fake)
    fake.take_writes()
    controller.reconcile(NS, "og")
    assert fake.take_writes() == [] and len(fake.events()) == 1
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "nowhere"}})
    sync(store, fake)
    controller.reconcile(NS, "og")
    assert "conditions" not in fake.get(OG_API, "OperatorGroup", NS, "og")["status"]


def test_two_groups_both_say_so() -> None:
    fake, store, _, controller = world(group("og"), group("og2"))
    controller.reconcile(NS, "og")
    controller.reconcile(NS, "og2")
    for name in ("og", "og2"):
        conditions = fake.get(OG_API, "OperatorGroup", NS, name)["status"]["conditions"]
        assert [c["reason"] for c in conditions] == ["MultipleOperatorGroupsFound"]
    fake.remove(OG_API, "OperatorGroup", NS, "og2")
    store.delete("operatorgroup", NS, "og2")
    sync(store, fake)
    controller.reconcile(NS, "og")
    assert "conditions" not in fake.get(OG_API, "OperatorGroup", NS, "og")["status"]


def test_a_stale_snapshot_is_retried_without_events() -> None:
    fake, _, _, controller = world(group(targetNamespaces=["nowhere"]))
    fake.fail("patch_status", Conflict("stale"))
    assert controller.reconcile(NS, "og") == 0.5
    assert fake.events() == []


def test_a_group_deleted_meanwhile_is_dropped() -> None:
    fake, _, _, controller = world(group(targetNamespaces=[NS]))
    fake.fail("patch_status", NotFound("gone"))
    assert controller.reconcile(NS, "og") is None


def test_a_deleted_group_wakes_its_csvs() -> None:
    fake, _, queue, controller = world(csv("op.v1"))
    assert controller.reconcile(NS, "og") is None
    assert fake.take_writes() == []
    assert queued(queue) == [("csv", NS, "op.v1")]
