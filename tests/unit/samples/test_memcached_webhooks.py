"""The sample memcached operator's webhook decisions (olm/samples/memcached/webhooks.py) and
where its server finds the certificate and which address it listens on, on plain data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from olm.samples.memcached.server import bind_address, cert_dir
from olm.samples.memcached.webhooks import (
    V1ALPHA1,
    V1BETA1,
    admission_denial,
    admission_response,
    conversion_response,
    convert,
    serves_webhooks,
)

LIMIT = 10


def memcached(size: Any, version: str = V1ALPHA1, **extra: Any) -> dict[str, Any]:
    field = "size" if version == V1ALPHA1 else "replicas"
    return {
        "apiVersion": version,
        "kind": "Memcached",
        "metadata": {"name": "cache", "namespace": "ns", "labels": {"a": "b"}},
        "spec": {field: size, **extra},
        "status": {"nodes": ["cache-1"], "reconciledBy": "0.0.3"},
    }


@pytest.mark.parametrize(
    ("operation", "obj", "old", "refused_with"),
    [
        ("CREATE", memcached(3), None, None),
        ("CREATE", memcached(10), None, None),  # the limit itself is allowed
        ("CREATE", memcached(11), None, "spec.size 11 is above this operator's limit of 10"),
        ("CREATE", memcached(12, V1BETA1), None, "spec.replicas 12 is above"),
        ("UPDATE", memcached(12), memcached(3), "spec.size 12 is above"),
        ("UPDATE", memcached(12), memcached(12), None),  # size unchanged: an older object
        ("UPDATE", memcached(4), memcached(12), None),  # going below the limit
        ("DELETE", None, memcached(50), None),
        ("CREATE", memcached("12"), None, None),  # mistyped: the schema refuses it
        ("CREATE", memcached(True), None, None),
        ("CREATE", {"apiVersion": V1ALPHA1, "kind": "Memcached"}, None, None),
        ("CREATE", {"apiVersion": V1ALPHA1, "spec": "nope"}, None, None),
        ("CREATE", {"apiVersion": "cache.example.com/v2", "spec": {"replicas": 99}}, None, "99"),
    ],
)
def test_admission(
    operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None, refused_with: str | None
) -> None:
    request = {"uid": "u-1", "operation": operation, "object": obj, "oldObject": old}
    denial = admission_denial(request, LIMIT)
    if refused_with is None:
        assert denial is None
    else:
        assert denial is not None and refused_with in denial
        assert "choose 10 or fewer" in denial


def test_admission_review_answers_with_the_request_uid_and_the_message() -> None:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "abc", "operation": "CREATE", "object": memcached(20)},
    }
    answer = admission_response(review, LIMIT)
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    response = answer["response"]
    assert response["uid"] == "abc" and response["allowed"] is False
    assert response["status"]["code"] == 403
    assert response["status"]["message"].startswith("spec.size 20 is above")
    review["request"]["object"] = memcached(2)
    assert admission_response(review, LIMIT)["response"] == {"uid": "abc", "allowed": True}
    assert admission_response({}, LIMIT)["response"] == {"uid": "", "allowed": True}


@pytest.mark.parametrize(
    ("source", "desired"),
    [(V1ALPHA1, V1BETA1), (V1BETA1, V1ALPHA1), (V1ALPHA1, V1ALPHA1), (V1BETA1, V1BETA1)],
)
def test_conversion_round_trips_losslessly(source: str, desired: str) -> None:
    original = memcached(5, source, unknownButKept="x")
    there = convert(original, desired)
    assert there["apiVersion"] == desired
    field = "size" if desired == V1ALPHA1 else "replicas"
    assert there["spec"] == {field: 5, "unknownButKept": "x"}
    assert {k: v for k, v in there.items() if k not in ("apiVersion", "spec")} == {
        k: v for k, v in original.items() if k not in ("apiVersion", "spec")
    }
    assert convert(there, source) == original
    assert original == memcached(5, source, unknownButKept="x"), "the input is not changed"


def test_conversion_without_a_spec_changes_only_the_version() -> None:
    obj = {"apiVersion": V1BETA1, "kind": "Memcached", "metadata": {"name": "m"}}
    assert convert(obj, V1ALPHA1) == {**obj, "apiVersion": V1ALPHA1}


def test_conversion_review() -> None:
    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c-1",
            "desiredAPIVersion": V1BETA1,
            "objects": [memcached(1), memcached(2, V1BETA1)],
        },
    }
    answer = conversion_response(review)
    assert answer["kind"] == "ConversionReview"
    response = answer["response"]
    assert response["uid"] == "c-1" and response["result"] == {"status": "Success"}
    assert [o["spec"] for o in response["convertedObjects"]] == [{"replicas": 1}, {"replicas": 2}]
    assert {o["apiVersion"] for o in response["convertedObjects"]} == {V1BETA1}


@pytest.mark.parametrize(
    ("desired", "objects", "message"),
    [
        ("cache.example.com/v2", [memcached(1)], "cannot convert to cache.example.com/v2"),
        (V1BETA1, [{"kind": "Memcached"}], "cannot convert from an unset apiVersion"),
        (V1BETA1, [{"apiVersion": "other/v1"}], "cannot convert from other/v1"),
    ],
)
def test_a_conversion_it_cannot_do_fails_with_a_reason(
    desired: str, objects: list[dict[str, Any]], message: str
) -> None:
    review = {"request": {"uid": "x", "desiredAPIVersion": desired, "objects": objects}}
    response = conversion_response(review)["response"]
    assert response["result"]["status"] == "Failure"
    assert message in response["result"]["message"]
    assert response["convertedObjects"] == []


@pytest.mark.parametrize(
    ("version", "serves"),
    [
        ("0.0.1", False),
        ("0.0.2", False),
        ("0.0.3", True),
        ("v0.0.3", True),
        ("0.1.0", True),
        ("1.0.0-rc.1", True),
        ("latest", True),
        ("nonsense", False),
    ],
)
def test_webhooks_are_served_from_0_0_3(version: str, serves: bool) -> None:
    assert serves_webhooks(version) is serves


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        (None, "/tmp/k8s-webhook-server/serving-certs"),
        ({}, "/tmp/k8s-webhook-server/serving-certs"),
        (
            {"/tmp/k8s-webhook-server/serving-certs": "/state/pods/ns_p/webhook-cert"},
            "/state/pods/ns_p/webhook-cert",
        ),
        (
            {"/tmp/k8s-webhook-server/serving-certs/": "/state/v"},  # trailing slash
            "/state/v",
        ),
        ({"/tmp": "/state/tmp"}, "/state/tmp/k8s-webhook-server/serving-certs"),
        (
            {"/tmp": "/state/tmp", "/tmp/k8s-webhook-server/serving-certs": "/state/certs"},
            "/state/certs",  # the most specific mount wins
        ),
        (
            {"/apiserver.local.config/certificates": "/state/a"},
            "/tmp/k8s-webhook-server/serving-certs",
        ),
        ({"/tmp/k8s": "/state/x"}, "/tmp/k8s-webhook-server/serving-certs"),  # not a parent
    ],
)
def test_the_certificate_is_found_through_the_pod_runners_mounts(
    mounts: dict[str, str] | None, expected: str
) -> None:
    environ = {} if mounts is None else {"OLM_PY_MOUNTS": json.dumps(mounts)}
    assert cert_dir(environ) == Path(expected)


def test_bad_mounts_fall_back_to_the_literal_path() -> None:
    for value in ("not json", "[1, 2]", ""):
        assert cert_dir({"OLM_PY_MOUNTS": value}) == Path("/tmp/k8s-webhook-server/serving-certs")


@pytest.mark.parametrize(
    ("environ", "address"),
    [
        ({}, "127.0.0.1"),  # not under the pod runner: loopback only
        ({"POD_IP": "10.0.0.5"}, "127.0.0.1"),
        ({"OLM_PY_MOUNTS": "{}"}, "127.0.0.1"),  # under a runner that gives no address
        ({"OLM_PY_MOUNTS": "{}", "POD_IP": "10.244.0.7"}, "10.244.0.7"),  # the pod's own
    ],
)
def test_the_listen_address(environ: dict[str, str], address: str) -> None:
    assert bind_address(environ) == address


@pytest.mark.parametrize(
    ("environ", "namespaces"),
    [
        ({"WATCH_NAMESPACE": "team-a", "POD_NAMESPACE": "team-a"}, ["team-a"]),
        ({"WATCH_NAMESPACE": "a,b", "POD_NAMESPACE": "ops"}, ["a", "b"]),
        ({"WATCH_NAMESPACE": "", "POD_NAMESPACE": "operators"}, []),  # all namespaces
        ({"POD_NAMESPACE": "ops"}, ["ops"]),  # no OLM annotation at all: its own namespace
        ({}, []),
    ],
)
def test_the_namespaces_the_operator_watches(
    environ: dict[str, str], namespaces: list[str]
) -> None:
    from olm.samples.memcached.operator import watched_namespaces

    assert watched_namespaces(environ) == namespaces
