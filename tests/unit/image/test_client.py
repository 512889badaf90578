"""The OCI registry client's HTTP behaviour (olm/image/client.py) against a fake registry on
127.0.0.1: plain HTTP for loopback, the Basic and Bearer challenge flows, tokens kept per scope,
redirects without the Authorization header to another host, retries with backoff on 429/5xx and
connection errors, none on 404, digests checked."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from olm.image import scheme
from olm.image.auth import Credentials, basic_header
from olm.image.cache import BlobCache
from olm.image.client import RegistryClient
from olm.image.errors import ImageError, ImageErrorKind

Answer = tuple[int, dict[str, str], bytes]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeRegistry:
    """Routes `METHOD path` (path with its query) to a function answering (status, headers,
    body); every request is recorded. Unrouted requests answer 404."""

    port: int = 0
    routes: dict[str, Callable[[Seen], Answer]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def route(self, key: str, *answers: Answer) -> None:
        """`key` answers `answers` in turn, the last one from then on."""
        queue = list(answers)

        def answer(_: Seen) -> Answer:
            return queue.pop(0) if len(queue) > 1 else queue[0]

        self.routes[key] = answer


def _handler(registry: FakeRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen = Seen(self.command, self.path, dict(self.headers), self.rfile.read(length))
            registry.seen.append(seen)
            route = registry.routes.get(f"{self.command} {self.path}")
            status, headers, body = route(seen) if route else (404, {}, b"")
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        do_GET = do_HEAD = do_POST = do_PUT = _any

        def log_message(self, *args: Any) -> None:
            pass  # the TLS probe's ClientHello is logged as a bad request otherwise

    return Handler


@pytest.fixture
def fake() -> Iterator[FakeRegistry]:
    registry = FakeRegistry()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(registry))
    registry.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield registry
    server.shutdown()
    server.server_close()
    scheme.forget(registry.address)  # what the client learnt of this port, for the next test


def _client(fake: FakeRegistry, **more: Any) -> tuple[RegistryClient, list[float]]:
    sleeps: list[float] = []
    client = RegistryClient(fake.address, timeout=5.0, sleep=sleeps.append, **more)
    return client, sleeps


MANIFEST = json.dumps({"schemaVersion": 2, "layers": []}).encode()
DIGEST = "sha256:" + hashlib.sha256(MANIFEST).hexdigest()
OCI = {"Content-Type": "application/vnd.oci.image.manifest.v1+json"}
CREDENTIALS = Credentials("alice", "secret")


def test_loopback_is_spoken_to_over_plain_http_and_a_manifest_comes_with_its_digest(
    fake: FakeRegistry,
) -> None:
    fake.route("GET /v2/ns/app/manifests/v1", (200, OCI, MANIFEST))
    client, _ = _client(fake)
    assert client.base == f"http://{fake.address}/v2/"
    assert client.manifest("ns/app", "v1") == (MANIFEST, OCI["Content-Type"], DIGEST)
    assert "Authorization" not in fake.seen[-1].headers  # anonymous first


def test_a_pinned_manifest_whose_content_does_not_match_is_corrupt(fake: FakeRegistry) -> None:
    wrong = "sha256:" + "0" * 64
    fake.route(f"GET /v2/ns/app/manifests/{wrong}", (200, OCI, MANIFEST))
    client, sleeps = _client(fake)
    with pytest.raises(ImageError) as raised:
        client.manifest("ns/app", wrong)
    assert raised.value.kind is ImageErrorKind.CORRUPT and sleeps == []


def test_bearer_challenge_gets_a_token_for_the_scope_and_keeps_it(fake: FakeRegistry) -> None:
    realm = f"http://{fake.address}/token"
    challenge = {"WWW-Authenticate": f'Bearer realm="{realm}",service="fake"'}

    def manifest(seen: Seen) -> Answer:
        if seen.headers.get("Authorization") == "Bearer t1":
            return 200, OCI, MANIFEST
        return 401, challenge, b""

    fake.routes["GET /v2/ns/app/manifests/v1"] = manifest
    fake.route(
        "GET /token?service=fake&scope=repository%3Ans%2Fapp%3Apull",
        (200, {}, json.dumps({"token": "t1"}).encode()),
    )
    client, _ = _client(fake, credentials=CREDENTIALS)
    client.manifest("ns/app", "v1")
    client.manifest("ns/app", "v1")
    token_calls = [s for s in fake.seen if s.path.startswith("/token")]
    assert len(token_calls) == 1
    assert token_calls[0].headers["Authorization"] == basic_header(CREDENTIALS)
    assert [s.headers.get("Authorization") for s in fake.seen if "manifests" in s.path] == [
        None,
        "Bearer t1",
        "Bearer t1",  # the token is kept for the scope: no second challenge
    ]


def test_a_refused_token_request_without_credentials_says_none_were_configured(
    fake: FakeRegistry,
) -> None:
    realm = f"http://{fake.address}/token"
    fake.route(
        "GET /v2/ns/app/manifests/v1",
        (401, {"WWW-Authenticate": f'Bearer realm="{realm}",service="fake"'}, b""),
    )
    fake.route("GET /token?service=fake&scope=repository%3Ans%2Fapp%3Apull", (401, {}, b""))
    client, sleeps = _client(fake)
    with pytest.raises(ImageError) as raised:
        client.manifest("ns/app", "v1")
    assert raised.value.kind is ImageErrorKind.UNAUTHORIZED
    assert "none were configured" in str(raised.value) and sleeps == []


def test_basic_challenge_is_answered_with_the_credentials(fake: FakeRegistry) -> None:
    def manifest(seen: Seen) -> Answer:
        if seen.headers.get("Authorization") == basic_header(CREDENTIALS):
            return 200, OCI, MANIFEST
        return 401, {"WWW-Authenticate": 'Basic realm="fake"'}, b""

    fake.routes["GET /v2/ns/app/manifests/v1"] = manifest
    client, _ = _client(fake, credentials=CREDENTIALS)
    assert client.manifest("ns/app", "v1")[2] == DIGEST
    anonymous, _ = _client(fake)
    with pytest.raises(ImageError) as raised:
        anonymous.manifest("ns/app", "v1")
    assert raised.value.kind is ImageErrorKind.UNAUTHORIZED


def test_429_and_5xx_are_retried_with_doubling_delays_then_reported(fake: FakeRegistry) -> None:
    fake.route("GET /v2/ns/app/manifests/v1", (429, {}, b""), (503, {}, b""), (200, OCI, MANIFEST))
    client, sleeps = _client(fake)
    assert client.manifest("ns/app", "v1")[2] == DIGEST
    assert sleeps == [0.5, 1.0]
    fake.route("GET /v2/ns/app/manifests/v2", (500, {}, b""))
    client, sleeps = _client(fake)
    with pytest.raises(ImageError) as raised:
        client.manifest("ns/app", "v2")
    assert raised.value.kind is ImageErrorKind.SERVER_ERROR
    assert sleeps == [0.5, 1.0, 2.0]  # DEFAULT_RETRIES = 3


def test_not_found_is_reported_at_once(fake: FakeRegistry) -> None:
    body = json.dumps({"errors": [{"code": "MANIFEST_UNKNOWN"}]}).encode()
    fake.route("GET /v2/ns/app/manifests/v9", (404, {}, body))
    client, sleeps = _client(fake)
    with pytest.raises(ImageError) as raised:
        client.manifest("ns/app", "v9")
    assert raised.value.kind is ImageErrorKind.NOT_FOUND and sleeps == []
    assert "ns/app:v9" in str(raised.value)


def test_nothing_listening_is_unreachable_after_the_retries() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sleeps: list[float] = []
    client = RegistryClient(f"127.0.0.1:{port}", timeout=2.0, sleep=sleeps.append)
    with pytest.raises(ImageError) as raised:
        client.manifest("ns/app", "v1")
    assert raised.value.kind is ImageErrorKind.UNREACHABLE
    assert "nothing is listening there" in str(raised.value)
    assert sleeps == [0.5, 1.0, 2.0]


def test_a_blob_redirected_to_another_host_goes_without_the_authorization_header(
    fake: FakeRegistry, tmp_path: Path
) -> None:
    blob = b"layer bytes"
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    fake.route(
        f"GET /v2/ns/app/blobs/{digest}",
        (307, {"Location": f"http://localhost:{fake.port}/cdn/{digest}"}, b""),
    )
    fake.route(f"GET /cdn/{digest}", (200, {}, blob))
    client, _ = _client(fake)
    client._tokens["repository:ns/app:pull"] = "Bearer t1"
    path = client.blob("ns/app", digest, BlobCache(tmp_path))
    assert path.read_bytes() == blob
    first, redirected = fake.seen[-2:]
    assert first.headers.get("Authorization") == "Bearer t1"
    assert redirected.path == f"/cdn/{digest}" and "Authorization" not in redirected.headers


def test_a_blob_whose_bytes_do_not_match_its_digest_is_not_cached(
    fake: FakeRegistry, tmp_path: Path
) -> None:
    digest = "sha256:" + hashlib.sha256(b"expected").hexdigest()
    fake.route(f"GET /v2/ns/app/blobs/{digest}", (200, {}, b"something else"))
    client, _ = _client(fake)
    cache = BlobCache(tmp_path)
    with pytest.raises(ImageError) as raised:
        client.blob("ns/app", digest, cache)
    assert raised.value.kind is ImageErrorKind.CORRUPT
    assert cache.get(digest) is None


def test_push_blob_starts_an_upload_and_puts_the_bytes_with_their_digest(
    fake: FakeRegistry,
) -> None:
    blob = b"config"
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    fake.route("POST /v2/ns/app/blobs/uploads/", (202, {"Location": "/v2/ns/app/blobs/up/1"}, b""))
    fake.route(f"PUT /v2/ns/app/blobs/up/1?digest={digest.replace(':', '%3A')}", (201, {}, b""))
    client, _ = _client(fake)
    client.push_blob("ns/app", digest, blob)
    head, post, put = fake.seen
    assert (head.method, post.method, put.method) == ("HEAD", "POST", "PUT")
    assert put.body == blob and put.headers["Content-Type"] == "application/octet-stream"
    fake.route(f"HEAD /v2/ns/app/blobs/{digest}", (200, {}, b""))
    client.push_blob("ns/app", digest, blob)  # already there: only the HEAD
    assert [s.method for s in fake.seen[3:]] == ["HEAD"]
