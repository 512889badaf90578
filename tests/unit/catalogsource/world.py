"""The CatalogSource controller's test world: a source in namespace `NS`, a fake gateway and
store synced from it, a `Reader` standing in for the registry client, and its status."""

from __future__ import annotations

import copy
from typing import Any

from olm.catalog.model import Catalog, Package
from olm.catalogsource.decide import Fetched
from olm.controllers.catalogsource import CatalogCache, CatalogSourceController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.fake import FakeGateway

NS = "team"


API = "operators.coreos.com/v1alpha1"


class Reader:
    """Answers like a registry at an address would; counts the reads."""

    def __init__(self, answer: Fetched) -> None:
        self.answer = answer
        self.addresses: list[str] = []

    def __call__(self, address: str) -> Fetched:
        self.addresses.append(address)
        return self.answer


def catalog() -> Catalog:
    return Catalog(packages={"p": Package("p")})


def source(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": API,
        "kind": "CatalogSource",
        "metadata": {"name": "src", "namespace": NS},
        "spec": spec,
    }


def world(
    reader: Reader, *objects: dict[str, Any]
) -> tuple[FakeGateway, Store, WorkQueue, CatalogCache, CatalogSourceController]:
    fake = FakeGateway()
    for obj in objects:
        fake.put(obj)
    store, queue, cache = Store(), WorkQueue(), CatalogCache()
    sync(store, fake)
    return fake, store, queue, cache, CatalogSourceController(store, fake, queue, cache, reader)


def sync(store: Store, fake: FakeGateway) -> None:
    for (_, kind, _, _), obj in fake.objects.items():
        if kind == "CatalogSource":
            store.upsert("catalogsource", copy.deepcopy(obj))


def status(fake: FakeGateway) -> dict[str, Any]:
    found: dict[str, Any] = fake.get(API, "CatalogSource", NS, "src").get("status") or {}
    return found
