"""Hostile catalogs on 127.0.0.1 for the bad-input cases: each is something a CatalogSource's
`spec.address` could point at by mistake (or on purpose).

- garbage: a gRPC server that answers every call with bytes that are not protobuf;
- nonsense: speaks operator-registry's API, but its answers contradict each other (a bundle of a
  package it never listed, properties that are not JSON);
- slow: answers nothing for longer than olm-py waits;
- not-a-registry: a gRPC server with only the health service (no api.Registry);
- http: a plain HTTP/1 server;
- closed: a port nobody listens on.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2_grpc

from olm.registry import registry_pb2 as pb
from olm.registry import registry_pb2_grpc as rpc

GARBAGE = b"\xff\xff\xff\xff\x0f not protobuf at all \x00\x01"
SLOW_SECONDS = 60.0  # far beyond olm-py's wait for a catalog (10 s)


def _grpc_server(workers: int = 4) -> tuple[grpc.Server, str]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    port = server.add_insecure_port("127.0.0.1:0")
    return server, f"127.0.0.1:{port}"


class _Raw(grpc.GenericRpcHandler):
    """Every method, unary or streaming, answered by `answer` with raw bytes."""

    def __init__(self, answer: Callable[[Any], bytes]) -> None:
        self.answer = answer

    def service(self, handler_call_details: Any) -> grpc.RpcMethodHandler | None:
        method = str(handler_call_details.method)
        if method.rsplit("/", 1)[-1].startswith("List") or "Entries" in method:

            def stream(request: bytes, context: Any) -> Iterator[bytes]:
                yield self.answer(context)

            return grpc.unary_stream_rpc_method_handler(stream)

        def unary(request: bytes, context: Any) -> bytes:
            return self.answer(context)

        return grpc.unary_unary_rpc_method_handler(unary)


def _garbage(context: Any) -> bytes:
    return GARBAGE


def _slow(context: Any) -> bytes:
    deadline = time.monotonic() + SLOW_SECONDS
    while context.is_active() and time.monotonic() < deadline:
        time.sleep(0.1)
    return GARBAGE


class _Nonsense(rpc.RegistryServicer):
    """Well-formed messages that make no catalog: a listed package whose bundles name another
    package, with properties that are not JSON."""

    def ListPackages(self, request: Any, context: Any) -> Iterator[Any]:
        yield pb.PackageName(name="ghost")

    def GetPackage(self, request: Any, context: Any) -> Any:
        return pb.Package(
            name="ghost",
            channels=[pb.Channel(name="alpha", csvName="ghost.v1.0.0")],
            defaultChannelName="alpha",
        )

    def ListBundles(self, request: Any, context: Any) -> Iterator[Any]:
        yield pb.Bundle(
            csvName="ghost.v1.0.0",
            packageName="not-listed-anywhere",
            channelName="alpha",
            properties=[pb.Property(type="olm.package", value="{not json")],
        )


class _Http(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"<html>hello, I am a web page</html>")

    do_POST = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{sock.getsockname()[1]}"


@contextlib.contextmanager
def hostile_catalogs() -> Iterator[dict[str, str]]:
    """The addresses, by placeholder name (GARBAGE_ADDRESS, ...), while the servers run."""
    servers: list[grpc.Server] = []
    addresses: dict[str, str] = {}
    for name, handler in (("GARBAGE", _Raw(_garbage)), ("SLOW", _Raw(_slow))):
        server, address = _grpc_server(workers=16)
        server.add_generic_rpc_handlers((handler,))
        servers.append(server)
        addresses[f"{name}_ADDRESS"] = address
    server, address = _grpc_server()
    rpc.add_RegistryServicer_to_server(_Nonsense(), server)  # type: ignore[no-untyped-call]
    servers.append(server)
    addresses["NONSENSE_ADDRESS"] = address
    server, address = _grpc_server()
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    servers.append(server)
    addresses["NOT_A_REGISTRY_ADDRESS"] = address
    http = ThreadingHTTPServer(("127.0.0.1", 0), _Http)
    threading.Thread(target=http.serve_forever, daemon=True).start()
    addresses["HTTP_ADDRESS"] = f"127.0.0.1:{http.server_address[1]}"
    addresses["CLOSED_ADDRESS"] = _closed_port()
    for server in servers:
        server.start()
    try:
        yield addresses
    finally:
        http.shutdown()
        for server in servers:
            server.stop(grace=0)
