"""The CatalogSource controller with `spec.image`: pull secrets read through the gateway,
the image reader's answer reaches cache and status, a deleted source is forgotten."""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from olm.catalog.model import Catalog, Package
from olm.catalogsource.decide import Fetched
from olm.catalogsource.failures import Failure, FailureKind
from olm.controllers.catalogimage import ImageCatalogs
from olm.controllers.catalogsource import CatalogCache, CatalogSourceController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.fake import FakeGateway
from tests.unit.catalogsource.world import API, NS, Reader, source, status, sync

IMAGE = "127.0.0.1:5000/olm/samples:v1"
PINNED = "127.0.0.1:5000/olm/samples@sha256:" + "a" * 64


class Images(ImageCatalogs):
    """Answers like the registry would; records what it was asked."""

    def __init__(self, answer: Fetched, account: tuple[str, str] | None = None) -> None:
        super().__init__(account=account)
        self.answer = answer
        self.asked: list[tuple[tuple[str, str], str, list[Mapping[str, Any]]]] = []
        self.forgotten: list[tuple[str, str]] = []

    def read(
        self, key: tuple[str, str], image: str, configs: Sequence[Mapping[str, Any]]
    ) -> Fetched:
        self.asked.append((key, image, list(configs)))
        return self.answer

    def forget(self, key: tuple[str, str]) -> None:
        self.forgotten.append(key)


def pull_secret(name: str, host: str) -> dict[str, Any]:
    config = {"auths": {host: {"auth": base64.b64encode(b"u:p").decode()}}}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NS},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }


def world(
    images: Images, *objects: dict[str, Any]
) -> tuple[FakeGateway, Store, CatalogCache, CatalogSourceController]:
    fake = FakeGateway()
    for obj in objects:
        fake.put(obj)
    store, cache = Store(), CatalogCache()
    sync(store, fake)
    controller = CatalogSourceController(store, fake, WorkQueue(), cache, Reader(Fetched()), images)
    return fake, store, cache, controller


def test_an_image_catalog_is_read_with_its_pull_secrets() -> None:
    images = Images(Fetched(catalog=Catalog(packages={"p": Package("p")}), resolved=PINNED))
    fake, _, cache, controller = world(
        images,
        source(sourceType="grpc", image=IMAGE, secrets=["pull", "missing"]),
        pull_secret("pull", "127.0.0.1:5000"),
    )
    assert controller.reconcile(NS, "src") == 30.0
    ((key, image, configs),) = images.asked
    assert key == (NS, "src") and image == IMAGE
    assert [list(c["auths"]) for c in configs] == [["127.0.0.1:5000"]], "missing secrets skipped"
    assert cache.get(NS, "src") is not None
    said = status(fake)
    assert said["resolvedImage"] == PINNED
    assert said["connectionState"]["address"] == IMAGE
    assert said["connectionState"]["lastObservedState"] == "READY"


def test_an_image_failure_reaches_status_and_is_retried_soon() -> None:
    failure = Failure(
        FailureKind.REGISTRY_UNREACHABLE, summary="cannot connect to registry 127.0.0.1:5000"
    )
    images = Images(Fetched(failure=failure, attempts=3))
    fake, _, cache, controller = world(images, source(sourceType="grpc", image=IMAGE))
    assert controller.reconcile(NS, "src") == 4.0
    assert "cannot connect to registry 127.0.0.1:5000" in status(fake)["message"]
    assert cache.get(NS, "src") is None


def test_a_deleted_image_catalog_is_forgotten() -> None:
    images = Images(Fetched())
    fake, store, _, controller = world(images, source(sourceType="grpc", image=IMAGE))
    fake.delete(API, "CatalogSource", NS, "src")
    store.delete("catalogsource", NS, "src")
    controller.reconcile(NS, "src")
    assert images.forgotten == [(NS, "src")] and images.asked == []


def service_account(namespace: str, name: str, *secrets: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": namespace},
        "imagePullSecrets": [{"name": secret} for secret in secrets],
    }


def test_olm_pys_service_account_pull_secrets_come_after_the_catalogs_own() -> None:
    images = Images(Fetched(catalog=Catalog(), resolved=PINNED), account=("olm", "olm-py"))
    own = pull_secret("own", "quay.io")
    own["metadata"]["namespace"] = "olm"
    _, _, _, controller = world(
        images,
        source(sourceType="grpc", image=IMAGE, secrets=["pull"]),
        pull_secret("pull", "127.0.0.1:5000"),
        service_account("olm", "olm-py", "own", "missing"),
        own,
    )
    controller.reconcile(NS, "src")
    ((_, _, configs),) = images.asked
    assert [list(c["auths"]) for c in configs] == [["127.0.0.1:5000"], ["quay.io"]]


@pytest.mark.parametrize("account", [None, ("olm", "not-there")])
def test_no_service_account_adds_no_pull_secrets(account: tuple[str, str] | None) -> None:
    images = Images(Fetched(catalog=Catalog(), resolved=PINNED))
    images.account = account
    _, _, _, controller = world(images, source(sourceType="grpc", image=IMAGE))
    controller.reconcile(NS, "src")
    ((_, _, configs),) = images.asked
    assert configs == []
