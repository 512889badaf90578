"""The CatalogSource controller over the in-memory gateway and a stand-in registry reader:
catalogs reach the cache, failures reach status as sentences (raw text only in the debug log),
polling a steady catalog writes nothing."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from olm.catalogsource.decide import Fetched
from olm.catalogsource.failures import grpc_failure
from olm.controllers.catalogsource import CatalogCache, CatalogSourceController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.errors import Conflict
from olm.kube.fake import FakeGateway
from tests.unit.catalogsource.world import API, NS, Reader, catalog, source, status, sync, world

RAW = "<_MultiThreadedRendezvous of RPC that terminated with: status = StatusCode.UNAVAILABLE>"


def test_an_address_catalog_is_cached_and_polled_quietly() -> None:
    reader = Reader(Fetched(catalog=catalog()))
    fake, store, queue, cache, controller = world(
        reader, source(sourceType="grpc", address="127.0.0.1:1")
    )
    assert controller.reconcile(NS, "src") == 30.0
    assert reader.addresses == ["127.0.0.1:1"]
    assert cache.get(NS, "src") is not None
    assert status(fake)["connectionState"]["lastObservedState"] == "READY"
    assert queue.get(timeout=0) == ("namespace", "", NS), "resolution of the namespace is woken"
    sync(store, fake)
    fake.take_writes()
    controller.reconcile(NS, "src")
    assert fake.take_writes() == [], "a steady catalog writes nothing"


def test_a_connection_error_is_a_sentence_with_the_raw_text_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reader = Reader(Fetched(failure=grpc_failure("UNAVAILABLE", "", RAW + " Connection refused")))
    fake, _, _, cache, controller = world(reader, source(sourceType="grpc", address="h:1"))
    with caplog.at_level(logging.DEBUG, logger="olm.catalogsource"):
        controller.reconcile(NS, "src")
    said = status(fake)
    assert said["reason"] == "RegistryServerError"
    assert said["message"].startswith(
        f"CatalogSource {NS}/src cannot connect to the catalog at h:1: nothing is listening"
    )
    assert "Rendezvous" not in said["message"]
    assert any(
        "Rendezvous" in r.getMessage() and r.levelno == logging.DEBUG for r in caplog.records
    )
    assert [(reason, kind) for _, kind, reason, _ in fake.events()] == [
        ("RegistryServerError", "Warning")
    ]
    assert cache.get(NS, "src") is None


def test_a_configmap_catalog_is_read_through_the_gateway() -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": NS},
        "data": {
            "packages": "- packageName: p\n  channels: []\n",
            "clusterServiceVersions": "[]",
            "customResourceDefinitions": "[]",
        },
    }
    reader = Reader(Fetched())
    fake, _, _, cache, controller = world(
        reader, configmap, source(sourceType="configmap", configMap="cm")
    )
    controller.reconcile(NS, "src")
    assert reader.addresses == []
    cached = cache.get(NS, "src")
    assert cached is not None and set(cached.catalog.packages) == {"p"}
    reference = status(fake)["configMapReference"]
    assert reference["name"] == "cm" and reference["uid"] and reference["resourceVersion"]


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ({"packages": "- [unclosed"}, "does not hold a catalog olm-py can read"),
        ({"packages": "- just-a-string"}, "does not hold a catalog olm-py can read"),
    ],
)
def test_a_garbage_configmap_is_a_configmap_error(data: dict[str, str], fragment: str) -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": NS},
        "data": data,
    }
    fake, _, _, cache, controller = world(
        Reader(Fetched()), configmap, source(sourceType="configmap", configMap="cm")
    )
    controller.reconcile(NS, "src")
    assert status(fake)["reason"] == "ConfigMapError"
    assert fragment in status(fake)["message"]
    assert cache.get(NS, "src") is None


def test_a_missing_configmap_is_polled_for() -> None:
    fake, _, _, _, controller = world(
        Reader(Fetched()), source(sourceType="configmap", configMap="cm")
    )
    assert controller.reconcile(NS, "src") == 30.0
    assert status(fake)["reason"] == "ConfigMapError"


def test_an_invalid_spec_is_not_polled() -> None:
    reader = Reader(Fetched(catalog=catalog()))
    fake, _, _, _, controller = world(reader, source(sourceType="helm-repo"))
    assert controller.reconcile(NS, "src") is None
    assert reader.addresses == []
    assert status(fake)["reason"] == "SpecInvalidError"


def test_a_deleted_source_leaves_the_cache_and_wakes_resolution() -> None:
    reader = Reader(Fetched(catalog=catalog()))
    fake, store, queue, cache, controller = world(reader, source(sourceType="grpc", address="h:1"))
    controller.reconcile(NS, "src")
    queue.done(queue.get(timeout=0))
    store.delete("catalogsource", NS, "src")
    fake.remove(API, "CatalogSource", NS, "src")
    assert controller.reconcile(NS, "src") is None
    assert cache.get(NS, "src") is None
    assert queue.get(timeout=0) == ("namespace", "", NS)


def test_a_stale_snapshot_is_retried() -> None:
    reader = Reader(Fetched(catalog=catalog()))
    fake, _, _, _, controller = world(reader, source(sourceType="grpc", address="h:1"))
    fake.fail("patch_status", Conflict("stale"))
    assert controller.reconcile(NS, "src") == 1.0


class CountingGateway(FakeGateway):
    """Records every GET: an untrusted catalog's ConfigMap must not even be read."""

    def __init__(self) -> None:
        super().__init__()
        self.gets: list[tuple[str, str]] = []

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        self.gets.append((kind, name))
        return super().get(api_version, kind, namespace, name)


@pytest.mark.parametrize(
    "spec",
    [
        {"sourceType": "grpc", "address": "127.0.0.1:1"},
        {"sourceType": "configmap", "configMap": "cm"},
        {"sourceType": "grpc", "image": "registry.example.com/cat:v1"},
    ],
)
def test_an_untrusted_catalog_is_never_read_nor_cached(spec: dict[str, Any]) -> None:
    from olm.catalogsource.trust import parse

    reader = Reader(Fetched(catalog=catalog()))
    fake = CountingGateway()
    fake.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": NS}})
    fake.put(source(**spec))
    store, queue, cache = Store(), WorkQueue(), CatalogCache()
    sync(store, fake)
    controller = CatalogSourceController(
        store, fake, queue, cache, reader, trust=parse(["olm=image+address+configmap"])
    )
    fake.gets.clear()
    assert controller.reconcile(NS, "src") is None, "no polling: a spec change wakes it"
    assert reader.addresses == [] and fake.gets == [], "no connection, no pull, no GET"
    assert cache.get(NS, "src") is None
    said = status(fake)
    assert said["reason"] == "SpecInvalidError"
    assert said["message"].startswith(f"CatalogSource {NS}/src is not used: catalog kind ")
    assert f"add {NS}=" in said["message"]
    assert [(reason, kind) for _, kind, reason, _ in fake.events()] == [
        ("SpecInvalidError", "Warning")
    ]
    sync(store, fake)
    fake.take_writes()
    controller.reconcile(NS, "src")
    assert fake.take_writes() == [], "a steady refusal writes nothing"
