"""`olm catalog serve`: any catalog over operator-registry's gRPC API, plus gRPC health.

The catalog is read and indexed once at start (as `opm serve` does); answers come from the
pure `RegistryIndex`. Lookup failures are gRPC errors with opm's messages.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from olm.registry import registry_pb2 as pb
from olm.registry import registry_pb2_grpc as rpc
from olm.registry.index import LookupFailed, RegistryIndex


def to_bundle(record: dict[str, Any]) -> Any:
    fields = {
        k: v
        for k, v in record.items()
        if k not in ("providedApis", "requiredApis", "dependencies", "properties", "deprecation")
    }
    message = pb.Bundle(**fields)
    message.providedApis.extend(pb.GroupVersionKind(**a) for a in record["providedApis"])
    message.requiredApis.extend(pb.GroupVersionKind(**a) for a in record["requiredApis"])
    message.dependencies.extend(pb.Dependency(**d) for d in record["dependencies"])
    message.properties.extend(pb.Property(**p) for p in record["properties"])
    if record.get("deprecation"):
        message.deprecation.CopyFrom(pb.Deprecation(**record["deprecation"]))
    return message


def to_package(data: dict[str, Any]) -> Any:
    message = pb.Package(name=data["name"], defaultChannelName=data["defaultChannelName"])
    for channel in data["channels"]:
        item = pb.Channel(name=channel["name"], csvName=channel["csvName"])
        if channel.get("deprecation"):
            item.deprecation.CopyFrom(pb.Deprecation(**channel["deprecation"]))
        message.channels.append(item)
    if data.get("deprecation"):
        message.deprecation.CopyFrom(pb.Deprecation(**data["deprecation"]))
    return message


class RegistryServicer(rpc.RegistryServicer):
    def __init__(self, index: RegistryIndex) -> None:
        self.index = index

    def _answer(self, context: Any, call: Any) -> Any:
        try:
            return call()
        except LookupFailed as exc:
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))

    def ListPackages(self, request: Any, context: Any) -> Iterator[Any]:
        for name in self.index.list_packages():
            yield pb.PackageName(name=name)

    def GetPackage(self, request: Any, context: Any) -> Any:
        return self._answer(context, lambda: to_package(self.index.get_package(request.name)))

    def GetBundle(self, request: Any, context: Any) -> Any:
        return self._answer(
            context,
            lambda: to_bundle(
                self.index.get_bundle(request.pkgName, request.channelName, request.csvName)
            ),
        )

    def GetBundleForChannel(self, request: Any, context: Any) -> Any:
        return self._answer(
            context,
            lambda: to_bundle(
                self.index.get_bundle_for_channel(request.pkgName, request.channelName)
            ),
        )

    def GetChannelEntriesThatReplace(self, request: Any, context: Any) -> Iterator[Any]:
        entries = self._answer(context, lambda: self.index.entries_that_replace(request.csvName))
        yield from (pb.ChannelEntry(**e) for e in entries)

    def GetBundleThatReplaces(self, request: Any, context: Any) -> Any:
        return self._answer(
            context,
            lambda: to_bundle(
                self.index.bundle_that_replaces(
                    request.csvName, request.pkgName, request.channelName
                )
            ),
        )

    def GetChannelEntriesThatProvide(self, request: Any, context: Any) -> Iterator[Any]:
        entries = self._answer(
            context,
            lambda: self.index.entries_that_provide(request.group, request.version, request.kind),
        )
        yield from (pb.ChannelEntry(**e) for e in entries)

    def GetLatestChannelEntriesThatProvide(self, request: Any, context: Any) -> Iterator[Any]:
        entries = self._answer(
            context,
            lambda: self.index.entries_that_provide(
                request.group, request.version, request.kind, latest=True
            ),
        )
        yield from (pb.ChannelEntry(**e) for e in entries)

    def GetDefaultBundleThatProvides(self, request: Any, context: Any) -> Any:
        return self._answer(
            context,
            lambda: to_bundle(
                self.index.default_bundle_that_provides(
                    request.group, request.version, request.kind
                )
            ),
        )

    def ListBundles(self, request: Any, context: Any) -> Iterator[Any]:
        for record in self.index.list_bundles():
            yield to_bundle(record)


class _AlwaysServing(health.HealthServicer):  # type: ignore[misc]
    """opm answers SERVING for any service name (the registry client asks for "Registry")."""

    def Check(self, request: Any, context: Any) -> Any:
        return health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)


def serve(index: RegistryIndex, address: str, workers: int = 8) -> grpc.Server:
    """Start serving `index` on `address` (host:port); returns the running server."""
    server, _ = serve_on(RegistryServicer(index), address, workers)
    return server


def serve_on(servicer: RegistryServicer, address: str, workers: int = 8) -> tuple[grpc.Server, int]:
    """Start serving `servicer` (whose `index` may be swapped while it serves) on `address`
    (host:port; port 0 picks a free one); the running server and its port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers))
    rpc.add_RegistryServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    health_pb2_grpc.add_HealthServicer_to_server(_AlwaysServing(), server)
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"cannot listen on {address}: the port is taken or the address is invalid")
    server.start()
    return server, port
