"""Every body the gateway sends carries any Unicode unchanged (issue 15), the field manager is
the one the gateway was built with, and API errors map to one hierarchy."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import yaml
from kubernetes import client

from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.gateway import Gateway
from olm.kube.wire import decode_body, encode_body

GRINNING = "\U0001f600"
TEXT = [
    GRINNING,
    f"{GRINNING} Tiny operator \U0001f680 日本語 é ✓",
    "\U0001f469\u200d\U0001f4bb family \U0001f468\u200d\U0001f469\u200d\U0001f467",
    "line\u2028separator and next\u0085line",  # YAML would fold these inside a quoted string
    "control \x7f \x9f bom \ufeff",  # YAML refuses these raw
    'quote " backslash \\ tab \t newline \n',
    "",
]


def deployment(text: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "op", "namespace": "ns", "annotations": {"description": text}},
        "spec": {"template": {"metadata": {"annotations": {f"x/{len(text)}": text}}}},
    }


@pytest.mark.parametrize("text", TEXT)
def test_encoded_bodies_read_back_the_same_as_json_and_as_yaml(text: str) -> None:
    body = deployment(text)
    encoded = encode_body(body)
    assert json.loads(encoded) == body
    assert yaml.safe_load(encoded.decode("utf-8")) == body
    assert decode_body(encoded) == body


@pytest.mark.parametrize("text", TEXT)
def test_no_surrogate_escapes_reach_the_wire(text: str) -> None:
    encoded = encode_body({"text": text})
    assert b"\\ud8" not in encoded.lower() and b"\\udc" not in encoded.lower()
    for char in text:
        if ord(char) > 0xFFFF:
            assert char.encode("utf-8") in encoded


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("\ud83d\ude00", GRINNING),  # a pair held as two code points is joined
        ("a\ud83db", "a\ufffdb"),  # a lone surrogate becomes U+FFFD, as Go decodes it
        ("\ude00", "\ufffd"),
    ],
)
def test_surrogates_python_can_hold_are_made_valid(given: str, expected: str) -> None:
    assert json.loads(encode_body({"t": given})) == {"t": expected}


# ----- the gateway over a recording connection pool ---------------------------------------------


@dataclass
class Sent:
    method: str
    path: str
    query: dict[str, list[str]]
    content_type: str
    body: bytes | None


@dataclass
class Reply:
    status: int = 200
    data: bytes = b"{}"
    reason: str = ""
    headers: dict[str, str] = field(default_factory=dict)


class RecordingPool:
    def __init__(self) -> None:
        self.sent: list[Sent] = []
        self.replies: list[Reply] = []

    def request(self, method: str, url: str, **kwargs: Any) -> Reply:
        parts = urlsplit(url)
        headers = kwargs.get("headers") or {}
        self.sent.append(
            Sent(
                method,
                parts.path,
                parse_qs(parts.query),
                headers.get("Content-Type", ""),
                kwargs.get("body"),
            )
        )
        return self.replies.pop(0) if self.replies else Reply()


def gateway(field_manager: str | None = None) -> tuple[Gateway, RecordingPool]:
    configuration = client.Configuration()
    configuration.host = "http://127.0.0.1:1"
    api = client.ApiClient(configuration)
    pool = RecordingPool()
    api.rest_client.pool_manager = pool
    built = Gateway(api) if field_manager is None else Gateway(api, field_manager=field_manager)
    return built, pool


CSV = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "op.v1", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
}
CSV_PATH = "/apis/operators.coreos.com/v1alpha1/namespaces/ns/clusterserviceversions/op.v1"

WRITES = {
    "apply": (
        lambda g, t: g.apply(deployment(t)),
        "PATCH",
        "/apis/apps/v1/namespaces/ns/deployments/op",
        "application/apply-patch+yaml",
    ),
    "create": (
        lambda g, t: g.create(
            {**deployment(t), "metadata": {"generateName": "op-", "namespace": "ns"}}
        ),
        "POST",
        "/apis/apps/v1/namespaces/ns/deployments",
        "application/json",
    ),
    "patch_status": (
        lambda g, t: g.patch_status(
            CSV["apiVersion"], CSV["kind"], "ns", "op.v1", {"message": t}, "7"
        ),
        "PATCH",
        CSV_PATH + "/status",
        "application/merge-patch+json",
    ),
    "merge patch": (
        lambda g, t: g.patch(
            CSV["apiVersion"], CSV["kind"], "ns", "op.v1", {"metadata": {"annotations": {"a": t}}}
        ),
        "PATCH",
        CSV_PATH,
        "application/merge-patch+json",
    ),
    "json patch": (
        lambda g, t: g.patch(
            CSV["apiVersion"],
            CSV["kind"],
            "ns",
            "op.v1",
            [{"op": "add", "path": "/metadata/annotations/a", "value": t}],
            content_type="application/json-patch+json",
        ),
        "PATCH",
        CSV_PATH,
        "application/json-patch+json",
    ),
    "event": (
        lambda g, t: g.event(CSV, "Warning", "Reason", f"message {t}"),
        "POST",
        "/api/v1/namespaces/ns/events",
        "application/json",
    ),
}


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("text", TEXT[:4])
def test_every_write_sends_the_text_unchanged(write: str, text: str) -> None:
    call, method, path, content_type = WRITES[write]
    built, pool = gateway()
    call(built, text)
    (sent,) = pool.sent
    assert (sent.method, sent.path, sent.content_type) == (method, path, content_type)
    assert isinstance(sent.body, bytes)
    assert any(text in s for s in strings(json.loads(sent.body)))
    assert yaml.safe_load(sent.body.decode("utf-8")) == json.loads(sent.body)
    for char in text:
        if ord(char) > 0xFFFF:
            assert char.encode("utf-8") in sent.body  # as itself, not as an escape


@pytest.mark.parametrize("write", list(WRITES))
@pytest.mark.parametrize("manager", [None, "memcached-operator"])
def test_every_write_names_the_field_manager(write: str, manager: str | None) -> None:
    call, *_ = WRITES[write]
    built, pool = gateway(manager)
    call(built, "x")
    assert pool.sent[0].query["fieldManager"] == [manager or "olm-py"]
    assert built.field_manager == (manager or "olm-py")


def test_apply_forces_conflicts() -> None:
    built, pool = gateway()
    built.apply(deployment("x"))
    assert pool.sent[0].query["force"] == ["true"]


def test_delete_sends_its_propagation_policy() -> None:
    built, pool = gateway()
    built.delete("apps/v1", "Deployment", "ns", "op", propagation="Foreground")
    assert json.loads(pool.sent[0].body or b"") == {"propagationPolicy": "Foreground"}


def test_reads_decode_unicode_replies() -> None:
    built, pool = gateway()
    pool.replies.append(Reply(data=json.dumps(deployment(TEXT[1])).encode()))
    assert built.get("apps/v1", "Deployment", "ns", "op") == deployment(TEXT[1])
    assert pool.sent[0].body is None


@pytest.mark.parametrize(
    ("status", "error", "also"),
    [
        (404, NotFound, GatewayError),
        (409, Conflict, GatewayError),
        (422, GatewayError, GatewayError),
        (500, GatewayError, GatewayError),
    ],
)
def test_api_errors_are_one_hierarchy(
    status: int, error: type[GatewayError], also: type[GatewayError]
) -> None:
    built, pool = gateway()
    pool.replies.append(Reply(status=status, data=b'{"message": "no"}'))
    with pytest.raises(error) as raised:
        built.apply(deployment("x"))
    assert isinstance(raised.value, also)
    assert raised.value.status == status


def test_deleting_what_is_gone_is_not_an_error() -> None:
    built, pool = gateway()
    pool.replies.append(Reply(status=404, data=b"{}"))
    built.delete("apps/v1", "Deployment", "ns", "op")
