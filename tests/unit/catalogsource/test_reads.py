"""Catalog reads do not hold `olm run`'s shared workers: a registry that never answers keeps a
thread of the controller's own small executor busy, while reconcile returns at once and asks
to be called again; the result is collected by a later reconcile. No wall-clock assertions:
the stand-in registry answers when the test says so."""

from __future__ import annotations

import threading
import time

from olm.catalogsource.decide import Fetched
from olm.controllers.catalogsource import CatalogCache, CatalogSourceController, Reads
from olm.controllers.store import Store
from olm.kube.fake import FakeGateway
from tests.unit.catalogsource.world import NS, Reader, catalog, source, status, sync, world


class Stuck(Reader):
    """A registry that answers only once `answer_now` is set."""

    def __init__(self, answer: Fetched) -> None:
        super().__init__(answer)
        self.go = threading.Event()

    def __call__(self, address: str) -> Fetched:
        self.addresses.append(address)
        self.go.wait(30)
        return self.answer


def controller(reader: Reader) -> tuple[CatalogSourceController, FakeGateway, Store, CatalogCache]:
    fake, store, _, cache, ctrl = world(reader, source(sourceType="grpc", address="127.0.0.1:1"))
    ctrl.reads = Reads(threads=2, wait=0.0, poll=1.0)
    return ctrl, fake, store, cache


def test_a_read_that_does_not_answer_frees_the_worker_and_is_collected_later() -> None:
    reader = Stuck(Fetched(catalog=catalog()))
    ctrl, fake, _, cache = controller(reader)
    assert ctrl.reconcile(NS, "src") == 1.0  # still reading: ask again in 1 s
    assert ctrl.reconcile(NS, "src") == 1.0
    assert status(fake) == {}, "nothing is written while the read runs"
    reader.go.set()
    # The executor's thread finishes; the next reconcile collects the catalog.
    for _ in range(1000):
        requeue = ctrl.reconcile(NS, "src")
        if requeue != 1.0:
            break
        time.sleep(0.01)  # the executor thread finishes the read
    assert requeue == 30.0
    assert reader.addresses == ["127.0.0.1:1"], "one read, not one per reconcile"
    assert cache.get(NS, "src") is not None
    assert status(fake)["connectionState"]["lastObservedState"] == "READY"


def test_a_spec_change_abandons_the_running_read() -> None:
    reader = Stuck(Fetched(catalog=catalog()))
    ctrl, fake, store, _ = controller(reader)
    assert ctrl.reconcile(NS, "src") == 1.0
    fake.put(source(sourceType="grpc", address="127.0.0.1:2"))
    sync(store, fake)
    assert ctrl.reconcile(NS, "src") == 1.0
    reader.go.set()
    for _ in range(1000):
        if ctrl.reconcile(NS, "src") != 1.0:
            break
        time.sleep(0.01)  # the executor thread finishes the read
    assert reader.addresses == ["127.0.0.1:1", "127.0.0.1:2"]
    assert status(fake)["connectionState"]["address"] == "127.0.0.1:2"


def test_a_read_that_answers_at_once_is_used_at_once() -> None:
    reader = Reader(Fetched(catalog=catalog()))
    _, _, _, cache, ctrl = world(reader, source(sourceType="grpc", address="127.0.0.1:1"))
    ctrl.reads = Reads(threads=1, wait=30.0)
    assert ctrl.reconcile(NS, "src") == 30.0
    assert cache.get(NS, "src") is not None


def test_at_most_the_given_number_of_reads_run_at_once() -> None:
    reads = Reads(threads=1, wait=0.0)
    first, second = Stuck(Fetched(catalog=catalog())), Stuck(Fetched(catalog=catalog()))
    assert reads.result(("a", "x"), "one", lambda: first("one")) is None
    assert reads.result(("b", "y"), "two", lambda: second("two")) is None
    for _ in range(20):
        time.sleep(0.01)  # give the second thread every chance to start reading
    assert first.addresses == ["one"] and second.addresses == [], "it waits for a slot"
    first.go.set()
    second.go.set()
    for _ in range(1000):
        if reads.result(("b", "y"), "two", lambda: second("two")) is not None:
            break
        time.sleep(0.01)
    assert second.addresses == ["two"]
