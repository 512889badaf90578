"""A big catalog's bundle listing may stream for longer than a registry takes to answer: the
read bounds the listing by LISTING_TIMEOUT_SECONDS and every other call by the short timeout,
asking for the package list first, so a server that answers nothing is still found out after
the short one (and the message names that bound). A gRPC server on 127.0.0.1, in process,
stands for the registry; nothing is timed by the test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from olm.catalogsource.failures import FailureKind
from olm.controllers.catalogsource import LISTING_TIMEOUT_SECONDS, read_registry
from olm.registry import registry_pb2 as pb
from olm.registry import registry_pb2_grpc as rpc

SLACK = 5.0


class Registry(rpc.RegistryServicer):
    """One package with one bundle; records the deadline each listing was given."""

    def __init__(self, *, answer_packages: bool = True) -> None:
        self.answer_packages = answer_packages
        self.remaining: dict[str, float] = {}
        self.stop = threading.Event()

    def ListPackages(self, request: Any, context: Any) -> Iterator[Any]:
        self.remaining["ListPackages"] = context.time_remaining()
        if not self.answer_packages:
            while context.is_active() and not self.stop.is_set():
                self.stop.wait(0.05)
            return
        yield pb.PackageName(name="p")

    def GetPackage(self, request: Any, context: Any) -> Any:
        return pb.Package(
            name="p", channels=[pb.Channel(name="a", csvName="p.v1")], defaultChannelName="a"
        )

    def ListBundles(self, request: Any, context: Any) -> Iterator[Any]:
        self.remaining["ListBundles"] = context.time_remaining()
        yield pb.Bundle(
            csvName="p.v1",
            packageName="p",
            channelName="a",
            properties=[
                pb.Property(type="olm.package", value='{"packageName":"p","version":"1.0.0"}')
            ],
        )


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[tuple[grpc.Server, Registry]] = []

    def start(registry: Registry) -> str:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        rpc.add_RegistryServicer_to_server(registry, server)  # type: ignore[no-untyped-call]
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append((server, registry))
        return f"127.0.0.1:{port}"

    yield start
    for server, registry in servers:
        registry.stop.set()
        server.stop(grace=None)


def test_the_listing_gets_the_long_bound_and_the_rest_the_short_one(serve: Any) -> None:
    registry = Registry()
    fetched = read_registry(serve(registry), timeout=10.0)
    assert fetched.catalog is not None and "p" in fetched.catalog.packages
    # gRPC rounds a deadline it carries up to the next second or so: compare with margins.
    assert registry.remaining["ListPackages"] < 10.0 + SLACK
    assert 10.0 + SLACK < registry.remaining["ListBundles"] < LISTING_TIMEOUT_SECONDS + SLACK


def test_a_server_that_answers_nothing_is_found_out_after_the_short_bound(serve: Any) -> None:
    fetched = read_registry(serve(Registry(answer_packages=False)), timeout=1.0)
    assert fetched.catalog is None and fetched.failure is not None
    assert fetched.failure.kind is FailureKind.TIMEOUT
    assert fetched.failure.timeout == 1.0
