"""The CatalogSource decision, branch by branch, on plain dicts."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package, Problem
from olm.catalogsource.decide import (
    Fetched,
    SourcePlan,
    SourceSnapshot,
    decide,
    fingerprint,
    priority_of,
    timestamp,
)
from olm.catalogsource.failures import Failure, FailureKind, grpc_failure

NOW = datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)
STAMP = "2026-03-04T05:06:07Z"
EARLIER = "2026-01-01T00:00:00Z"
ADDRESS = "127.0.0.1:50051"
REFUSED = grpc_failure("UNAVAILABLE", "", "Connection refused")


def catalog(*packages: str) -> Catalog:
    found = Catalog()
    for name in packages:
        package = Package(name, default_channel="alpha")
        package.channels["alpha"] = Channel("alpha", name, entries=[Entry(f"{name}.v1")])
        found.packages[name] = package
    return found


def source(
    spec: dict[str, Any], status: dict[str, Any] | None = None, deleting: bool = False
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "src", "namespace": "ns", "resourceVersion": "3"}
    if deleting:
        meta["deletionTimestamp"] = EARLIER
    obj: dict[str, Any] = {"metadata": meta, "spec": spec}
    if status is not None:
        obj["status"] = status
    return obj


def snapshot(obj: dict[str, Any] | None) -> SourceSnapshot:
    return SourceSnapshot("ns", "src", obj, NOW)


GRPC = {"sourceType": "grpc", "address": ADDRESS}
CONFIGMAP = {"sourceType": "configmap", "configMap": "cm"}
READY_STATUS = {
    "connectionState": {"address": ADDRESS, "lastObservedState": "READY", "lastConnect": EARLIER},
    "registryService": {"protocol": "grpc", "createdAt": EARLIER},
}
CM = {"metadata": {"name": "cm", "namespace": "ns", "uid": "u1", "resourceVersion": "10"}}
CM_REFERENCE = {
    "name": "cm",
    "namespace": "ns",
    "uid": "u1",
    "resourceVersion": "10",
    "lastUpdateTime": EARLIER,
}


def test_a_new_address_catalog_becomes_ready() -> None:
    plan = decide(snapshot(source(GRPC)), Fetched(catalog=catalog("a")))
    # OLM records a registry service of protocol grpc (and no Service) for an address catalog.
    assert plan.status == {
        "connectionState": {"address": ADDRESS, "lastObservedState": "READY", "lastConnect": STAMP},
        "registryService": {"protocol": "grpc", "createdAt": STAMP},
    }
    assert plan.cache is not None and plan.cache.priority == 0
    assert plan.cache.fingerprint == fingerprint(catalog("a"))
    assert (plan.drop, plan.event, plan.requeue_after) == (False, None, 30.0)


def test_polling_a_steady_catalog_writes_nothing() -> None:
    plan = decide(snapshot(source(GRPC, READY_STATUS)), Fetched(catalog=catalog("a")))
    assert plan.status is None and plan.event is None and plan.cache is not None


def test_a_refused_connection_is_a_sentence_and_an_event() -> None:
    plan = decide(snapshot(source(GRPC, READY_STATUS)), Fetched(failure=REFUSED))
    assert plan.status is not None
    assert plan.status["connectionState"] == {
        "address": ADDRESS,
        "lastObservedState": "TRANSIENT_FAILURE",
        "lastConnect": EARLIER,
    }
    assert plan.status["reason"] == "RegistryServerError"
    assert plan.status["message"].startswith(
        f"CatalogSource ns/src cannot connect to the catalog at {ADDRESS}: nothing is listening"
    )
    assert plan.event is not None and plan.event.reason == "RegistryServerError"
    assert plan.event.message == plan.status["message"]
    # What was read before stays in use while the address does not answer (OLM keeps
    # resolving from a source that was healthy once; found by the corpus parity run under load)
    assert not plan.drop and plan.cache is None and plan.requeue_after == 30.0
    failing = source(GRPC, {**READY_STATUS, **plan.status})
    again = decide(snapshot(failing), Fetched(failure=REFUSED))
    assert again.status is None and again.event is None, "a steady failure does not churn"
    back = decide(snapshot(failing), Fetched(catalog=catalog("a")))
    assert back.status == {
        "connectionState": {"address": ADDRESS, "lastObservedState": "READY", "lastConnect": STAMP},
        "reason": None,
        "message": None,
    }
    assert back.event is None


def test_a_new_address_resets_last_connect() -> None:
    moved = source({**GRPC, "address": "127.0.0.1:6000"}, READY_STATUS)
    plan = decide(snapshot(moved), Fetched(failure=REFUSED))
    assert plan.status is not None
    assert plan.status["connectionState"]["lastConnect"] == STAMP
    assert "127.0.0.1:6000" in plan.status["message"]


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"sourceType": "helm-repo"}, "spec.sourceType 'helm-repo'"),
        ({"sourceType": "grpc", "image": {"ref": "quay.io/x:1"}}, "is not a string"),
        ({"sourceType": "configmap"}, "configmap name unset"),
    ],
)
def test_invalid_specs_say_so_and_wait_for_a_spec_change(
    spec: dict[str, Any], fragment: str
) -> None:
    plan = decide(snapshot(source(spec)), Fetched())
    assert plan.status is not None and plan.status["reason"] == "SpecInvalidError"
    assert fragment in plan.status["message"]
    assert plan.drop and plan.requeue_after is None
    assert plan.event is not None and plan.event.reason == "SpecInvalidError"


def test_a_spec_fixed_to_grpc_drops_the_old_reference_and_reason() -> None:
    before = {"reason": "SpecInvalidError", "message": "x", "configMapReference": CM_REFERENCE}
    plan = decide(snapshot(source(GRPC, before)), Fetched(catalog=catalog("a")))
    assert plan.status is not None
    assert plan.status["reason"] is None and plan.status["message"] is None
    assert plan.status["configMapReference"] is None


def test_configmap_catalog_records_its_reference() -> None:
    plan = decide(snapshot(source(CONFIGMAP)), Fetched(catalog=catalog("a"), configmap=CM))
    assert plan.status is not None
    assert plan.status["configMapReference"] == {**CM_REFERENCE, "lastUpdateTime": STAMP}
    assert "connectionState" not in plan.status
    steady = source(CONFIGMAP, {"configMapReference": CM_REFERENCE})
    assert decide(snapshot(steady), Fetched(catalog=catalog("a"), configmap=CM)).status is None
    changed = {"metadata": {**CM["metadata"], "resourceVersion": "11"}}
    plan = decide(snapshot(steady), Fetched(catalog=catalog("a"), configmap=changed))
    assert plan.status == {
        "configMapReference": {**CM_REFERENCE, "resourceVersion": "11", "lastUpdateTime": STAMP}
    }


def test_a_missing_configmap_is_a_configmap_error() -> None:
    plan = decide(
        snapshot(source(CONFIGMAP)), Fetched(failure=Failure(FailureKind.CONFIGMAP_MISSING))
    )
    assert plan.status is not None
    assert plan.status["reason"] == "ConfigMapError"
    assert (
        'ConfigMap "cm" named by spec.configMap does not exist in namespace ns'
        in plan.status["message"]
    )
    assert plan.drop and plan.requeue_after == 30.0, "polled: ConfigMaps are not watched"


def test_catalog_errors_are_not_served() -> None:
    broken = catalog("a")
    broken.problems.append(Problem("configmap-parse", "cannot parse ConfigMap data: bad", "fix"))
    broken.problems.append(Problem("style", "just a warning", level="warning"))
    plan = decide(snapshot(source(CONFIGMAP)), Fetched(catalog=broken, configmap=CM))
    assert plan.status is not None and plan.status["reason"] == "ConfigMapError"
    assert "(cannot parse ConfigMap data: bad)" in plan.status["message"]
    assert plan.cache is None and plan.drop
    warned = catalog("a")
    warned.problems.append(Problem("style", "just a warning", level="warning"))
    assert decide(snapshot(source(CONFIGMAP)), Fetched(catalog=warned, configmap=CM)).cache
    on_grpc = decide(snapshot(source(GRPC)), Fetched(catalog=broken))
    assert on_grpc.status is not None and on_grpc.status["reason"] == "RegistryServerError"
    assert "cannot read as a catalog" in on_grpc.status["message"]


@pytest.mark.parametrize(
    ("interval", "status", "expected_reason"),
    [
        ("fast", {}, "InvalidIntervalError"),
        ("2s", {"reason": "InvalidIntervalError", "message": "x"}, None),
    ],
)
def test_interval_problems(
    interval: str, status: dict[str, Any], expected_reason: str | None
) -> None:
    spec = {**GRPC, "updateStrategy": {"registryPoll": {"interval": interval}}}
    plan = decide(snapshot(source(spec, {**READY_STATUS, **status})), Fetched(catalog=catalog("a")))
    assert plan.status is not None and plan.status["reason"] == expected_reason
    if expected_reason:
        assert plan.requeue_after == 30.0 and "'fast'" in plan.status["message"]
    else:
        assert plan.requeue_after == 2.0 and plan.status["message"] is None


def test_a_failure_outranks_an_interval_problem() -> None:
    spec = {**GRPC, "updateStrategy": {"registryPoll": {"interval": "fast"}}}
    plan = decide(snapshot(source(spec)), Fetched(failure=REFUSED))
    assert plan.status is not None and plan.status["reason"] == "RegistryServerError"


@pytest.mark.parametrize(
    "obj",
    [None, source(GRPC, deleting=True)],
    ids=["deleted", "deleting"],
)
def test_gone_sources_leave_the_cache(obj: dict[str, Any] | None) -> None:
    assert decide(snapshot(obj), Fetched()) == SourcePlan(drop=True)


def test_nothing_fetched_and_no_failure_is_still_explained() -> None:
    plan = decide(snapshot(source(GRPC)), Fetched())
    assert plan.status is not None and plan.status["reason"] == "RegistryServerError"


@pytest.mark.parametrize(
    ("value", "expected"), [(None, 0), (5, 5), ("7", 7), ("high", 0), (-2, -2)]
)
def test_priority(value: object, expected: int) -> None:
    assert priority_of({"priority": value}) == expected


def test_fingerprint_follows_content() -> None:
    assert fingerprint(catalog("a", "b")) == fingerprint(catalog("b", "a"))
    assert fingerprint(catalog("a")) != fingerprint(catalog("a", "b"))


def _with_bundle(required: str = ">=1.0.0", description: str = "") -> Catalog:
    found = catalog("a")
    found.packages["a"].description = description
    found.packages["a"].bundles["a.v1"] = Bundle(
        "a.v1",
        "a",
        properties=[
            {"type": "olm.package", "value": {"packageName": "a", "version": "1.0.0"}},
            {
                "type": "olm.package.required",
                "value": {"packageName": "b", "versionRange": required},
            },
        ],
    )
    return found


def test_fingerprint_sees_what_resolution_and_package_manifests_read() -> None:
    """Changes that keep the graph and the number of properties still count: a dependency's
    range (a new resolution) and a package's description alone (new PackageManifests)."""
    base = fingerprint(_with_bundle())
    assert fingerprint(_with_bundle()) == base
    assert fingerprint(_with_bundle(required=">=2.0.0")) != base
    assert fingerprint(_with_bundle(description="new words")) != base


def test_a_configmap_catalog_served_behind_a_service_says_so_as_olm_does() -> None:
    fetched = Fetched(catalog=catalog("a"), configmap=CM, service="src")
    plan = decide(snapshot(source(CONFIGMAP)), fetched)
    assert plan.status is not None
    assert plan.status["registryService"] == {
        "protocol": "grpc",
        "serviceName": "src",
        "serviceNamespace": "ns",
        "port": "50051",
        "createdAt": STAMP,
    }
    assert plan.status["connectionState"] == {
        "address": "src.ns.svc:50051",
        "lastObservedState": "READY",
        "lastConnect": STAMP,
    }
    # The ConfigMap was read in that same second: a second later the catalog has connected
    # again after it, as OLM's new registry pod has (clients compare the two strictly).
    assert plan.requeue_after is not None and plan.requeue_after <= 1.01
    read = source(CONFIGMAP, {**plan.status, "configMapReference": CM_REFERENCE})
    read["status"]["configMapReference"]["lastUpdateTime"] = STAMP
    later = NOW + datetime.timedelta(seconds=1)
    reconnected = decide(SourceSnapshot("ns", "src", read, later), fetched)
    assert reconnected.status is not None
    assert reconnected.status["connectionState"]["lastConnect"] == timestamp(later)
    # Polled again: nothing moves, createdAt included.
    steady = source(CONFIGMAP, {**read["status"], **reconnected.status})
    again = decide(
        SourceSnapshot("ns", "src", steady, NOW + datetime.timedelta(minutes=5)), fetched
    )
    assert again.status is None


def test_a_configmap_catalog_not_served_has_no_registry_service() -> None:
    served = {
        "registryService": {"protocol": "grpc", "serviceName": "src", "createdAt": EARLIER},
        "connectionState": {"address": "src.ns.svc:50051", "lastObservedState": "READY"},
    }
    plan = decide(snapshot(source(CONFIGMAP, served)), Fetched(catalog=catalog("a"), configmap=CM))
    assert plan.status is not None
    assert plan.status["registryService"] is None and plan.status["connectionState"] is None


def test_an_untrusted_catalog_is_not_used_and_says_why_once() -> None:
    """--trusted-catalogs rules it out (olm.catalogsource.trust): SpecInvalidError with the
    sentence, everything a read would have written cleared, the cache entry dropped, one
    Warning; deciding again over the written status writes nothing."""
    why = "catalog kind address (spec.address) is not trusted in namespace ns: ..."
    was_ready = source(GRPC, READY_STATUS)
    plan = decide(SourceSnapshot("ns", "src", was_ready, NOW, untrusted=why), Fetched())
    message = f"CatalogSource ns/src is not used: {why}."
    assert plan.drop and plan.cache is None and plan.requeue_after is None
    assert plan.status == {
        "connectionState": None,
        "registryService": None,
        "reason": "SpecInvalidError",
        "message": message,
    }
    assert plan.event is not None
    assert (plan.event.type, plan.event.reason, plan.event.message) == (
        "Warning",
        "SpecInvalidError",
        message,
    )
    written = source(GRPC, {"reason": "SpecInvalidError", "message": message})
    again = decide(SourceSnapshot("ns", "src", written, NOW, untrusted=why), Fetched())
    assert again.status is None and again.event is None and again.drop
