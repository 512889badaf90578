"""`spec.image` catalogs: status as OLM shows it, the resolved digest, backoff on failures,
and a sentence per failure kind."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.catalog.model import Catalog, Package, Problem
from olm.catalogsource.decide import Fetched, SourceSnapshot, decide
from olm.catalogsource.failures import IMAGE_KINDS, Failure, FailureKind, failure_message

NOW = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)
STAMP = "2026-03-04T05:06:07Z"
EARLIER = "2026-01-01T00:00:00Z"
IMAGE = "127.0.0.1:5000/olm/samples:v1"
PINNED_A = "127.0.0.1:5000/olm/samples@sha256:" + "a" * 64
PINNED_B = "127.0.0.1:5000/olm/samples@sha256:" + "b" * 64
SPEC = {
    "sourceType": "grpc",
    "image": IMAGE,
    "updateStrategy": {"registryPoll": {"interval": "20s"}},
}


def source(status: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": "src", "namespace": "ns"}, "spec": {**SPEC, **spec}}
    if status is not None:
        obj["status"] = status
    return obj


def snapshot(obj: dict[str, Any]) -> SourceSnapshot:
    return SourceSnapshot("ns", "src", obj, NOW)


def catalog() -> Catalog:
    return Catalog(packages={"p": Package("p")})


READ_A = {
    "connectionState": {"address": IMAGE, "lastObservedState": "READY", "lastConnect": EARLIER},
    "resolvedImage": PINNED_A,
    "latestImageRegistryPoll": EARLIER,
}


def test_the_first_read_records_the_digest_and_the_poll() -> None:
    plan = decide(snapshot(source()), Fetched(catalog=catalog(), resolved=PINNED_A))
    assert plan.status == {
        "connectionState": {"address": IMAGE, "lastObservedState": "READY", "lastConnect": STAMP},
        "resolvedImage": PINNED_A,
        "latestImageRegistryPoll": STAMP,
    }
    assert plan.cache is not None and plan.requeue_after == 20.0


def test_a_steady_image_writes_nothing() -> None:
    plan = decide(snapshot(source(READ_A)), Fetched(catalog=catalog(), resolved=PINNED_A))
    assert plan.status is None and plan.event is None and plan.cache is not None


def test_a_new_digest_under_the_tag_moves_the_poll_time() -> None:
    plan = decide(snapshot(source(READ_A)), Fetched(catalog=catalog(), resolved=PINNED_B))
    assert plan.status == {"resolvedImage": PINNED_B, "latestImageRegistryPoll": STAMP}


def test_grpc_pod_config_is_accepted_and_changes_nothing() -> None:
    plan = decide(
        snapshot(
            source(READ_A, grpcPodConfig={"memoryTarget": "30Mi", "nodeSelector": {"a": "b"}})
        ),
        Fetched(catalog=catalog(), resolved=PINNED_A),
    )
    assert plan.status is None


@pytest.mark.parametrize(
    ("attempts", "requeue"), [(1, 1.0), (2, 2.0), (3, 4.0), (5, 16.0), (6, 20.0), (60, 20.0)]
)
def test_failures_back_off_up_to_the_poll_interval(attempts: int, requeue: float) -> None:
    failure = Failure(
        FailureKind.REGISTRY_UNREACHABLE, summary="cannot connect to registry 127.0.0.1:5000"
    )
    plan = decide(snapshot(source(READ_A)), Fetched(failure=failure, attempts=attempts))
    assert plan.requeue_after == requeue
    assert plan.drop


def test_a_failure_says_so_and_recovers() -> None:
    failure = Failure(
        FailureKind.IMAGE_NOT_FOUND, summary="registry 127.0.0.1:5000 has no olm/samples:v1"
    )
    plan = decide(snapshot(source(READ_A)), Fetched(failure=failure, attempts=1))
    assert plan.status is not None
    assert plan.status["reason"] == "RegistryServerError"
    assert plan.status["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    assert plan.status["resolvedImage"] is None
    assert plan.status["message"] == (
        f"CatalogSource ns/src cannot read the catalog image {IMAGE}: registry 127.0.0.1:5000 has "
        "no olm/samples:v1. Check spec.image: push the catalog image (olm catalog push, opm, "
        "podman) or fix its name or tag."
    )
    assert plan.event is not None and plan.event.reason == "RegistryServerError"
    failing = {**READ_A, **plan.status}
    failing = {k: v for k, v in failing.items() if v is not None}
    assert decide(snapshot(source(failing)), Fetched(failure=failure, attempts=2)).status is None
    back = decide(snapshot(source(failing)), Fetched(catalog=catalog(), resolved=PINNED_A))
    assert back.status is not None
    assert back.status["reason"] is None and back.status["message"] is None
    assert back.status["connectionState"]["lastObservedState"] == "READY"
    assert back.status["resolvedImage"] == PINNED_A


def test_an_invalid_reference_is_a_spec_error() -> None:
    failure = Failure(
        FailureKind.IMAGE_REFERENCE, summary="'Quay.io/X' is not a valid image reference"
    )
    plan = decide(snapshot(source(image="Quay.io/X")), Fetched(failure=failure, attempts=1))
    assert plan.status is not None and plan.status["reason"] == "SpecInvalidError"
    assert plan.status["message"].endswith("Fix spec.image.")


def test_an_image_with_an_invalid_catalog_says_so() -> None:
    broken = catalog()
    broken.problems = [Problem("r", "package p has no channels")]
    plan = decide(snapshot(source()), Fetched(catalog=broken, resolved=PINNED_A))
    assert plan.status is not None and plan.drop
    assert "package p has no channels" in plan.status["message"]
    assert "olm catalog validate" in plan.status["message"]


@pytest.mark.parametrize("kind", sorted(IMAGE_KINDS))
def test_every_image_failure_has_a_sentence_with_advice(kind: FailureKind) -> None:
    message = failure_message("ns", "src", IMAGE, Failure(kind, summary="what happened"))
    assert message.startswith(
        f"CatalogSource ns/src cannot read the catalog image {IMAGE}: what happened. "
    )
    assert len(message) > len(IMAGE) + 60


def test_an_address_wins_over_an_image_and_clears_the_resolved_digest() -> None:
    plan = decide(
        snapshot(source(READ_A, address="127.0.0.1:50051")),
        Fetched(catalog=catalog()),
    )
    assert plan.status is not None and plan.status["resolvedImage"] is None
    assert plan.status["connectionState"]["address"] == "127.0.0.1:50051"


def test_a_registry_outage_keeps_serving_the_catalog_read_last() -> None:
    down = Failure(
        FailureKind.REGISTRY_UNREACHABLE, summary="cannot connect to registry 127.0.0.1:5000"
    )
    fetched = Fetched(catalog=catalog(), failure=down, resolved=PINNED_A, attempts=2)
    plan = decide(snapshot(source(READ_A)), fetched)
    assert plan.cache is not None and not plan.drop
    assert plan.requeue_after == 2.0
    assert plan.status is not None
    assert plan.status["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    assert "resolvedImage" not in plan.status, "still the digest served"
    assert plan.status["message"].endswith(
        f"Until then olm-py serves the catalog it read last ({PINNED_A})."
    )
    merged = {k: v for k, v in {**READ_A, **plan.status}.items() if v is not None}
    assert decide(snapshot(source(merged)), fetched).status is None, "a steady outage is quiet"
    back = decide(snapshot(source(merged)), Fetched(catalog=catalog(), resolved=PINNED_A))
    assert back.status is not None and back.status["message"] is None
    assert "latestImageRegistryPoll" not in back.status, "the same digest: no new poll time"


def test_a_lasting_failure_does_not_keep_the_old_catalog() -> None:
    gone = Failure(
        FailureKind.IMAGE_NOT_FOUND, summary="registry 127.0.0.1:5000 has no olm/samples:v1"
    )
    plan = decide(snapshot(source(READ_A)), Fetched(catalog=catalog(), failure=gone, attempts=1))
    assert plan.drop and plan.cache is None
