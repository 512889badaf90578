"""A client for the operator-registry gRPC API (`opm serve`, olm-py's own server, any
registry), reading a whole catalog into the same model our parsers produce."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError, Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from olm.catalog.documents import BUNDLE_SCHEMA, CHANNEL_SCHEMA, PACKAGE_SCHEMA
from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package
from olm.registry import registry_pb2 as pb
from olm.registry import registry_pb2_grpc as rpc

SERVICE = "/api.Registry/"


def _deprecated(schema: str, name: str, served: Any) -> dict[str, Any]:
    """An `olm.deprecations` entry for what a registry served as deprecated."""
    message = served.get("message", "") if isinstance(served, dict) else ""
    reference = {"schema": schema, **({"name": name} if name else {})}
    return {"reference": reference, "message": str(message)}


class UnreadableAnswer(ValueError):
    """The server answered a call with bytes that are not the message the API defines."""


def _decode(message_type: type[Message], raw: bytes, method: str) -> Any:
    """The answer decoded here rather than by gRPC, whose decoder logs a traceback of its own
    for every answer that is not protobuf (a hostile or mistaken server)."""
    try:
        return message_type.FromString(raw)
    except (DecodeError, TypeError) as exc:
        raise UnreadableAnswer(
            f"the answer to {method} is not a valid {message_type.DESCRIPTOR.full_name}: {exc}"
        ) from exc


class RegistryClient:
    """`timeout` bounds every call but the bundle listing, which `listing_timeout` bounds
    (default: the same): a big catalog streams for longer than a server takes to answer, and
    `catalog` asks for the package list first, so a server that does not answer at all is
    still found out after `timeout`. `last_timeout` is the bound of the last call started (for
    saying which one ran out)."""

    def __init__(
        self, address: str, timeout: float = 30.0, listing_timeout: float | None = None
    ) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = rpc.RegistryStub(self.channel)  # type: ignore[no-untyped-call]
        self.timeout = timeout
        self.listing_timeout = listing_timeout if listing_timeout is not None else timeout
        self.last_timeout = timeout

    def close(self) -> None:
        self.channel.close()

    def healthy(self) -> bool:
        try:
            answer = health_pb2_grpc.HealthStub(self.channel).Check(
                health_pb2.HealthCheckRequest(service="Registry"), timeout=self.timeout
            )
        except grpc.RpcError:
            return False
        return bool(answer.status == health_pb2.HealthCheckResponse.SERVING)

    def _unary(self, method: str, request: Message, answer: type[Message]) -> Any:
        call = self.channel.unary_unary(
            SERVICE + method, request_serializer=type(request).SerializeToString
        )
        self.last_timeout = self.timeout
        return _decode(answer, call(request, timeout=self.timeout), method)

    def _stream(
        self, method: str, request: Message, answer: type[Message], timeout: float | None = None
    ) -> Iterator[Any]:
        call = self.channel.unary_stream(
            SERVICE + method, request_serializer=type(request).SerializeToString
        )
        self.last_timeout = timeout if timeout is not None else self.timeout
        for raw in call(request, timeout=self.last_timeout):
            yield _decode(answer, raw, method)

    def list_packages(self) -> list[str]:
        return sorted(
            p.name for p in self._stream("ListPackages", pb.ListPackageRequest(), pb.PackageName)
        )

    def get_package(self, name: str) -> dict[str, Any]:
        return MessageToDict(self._unary("GetPackage", pb.GetPackageRequest(name=name), pb.Package))

    def list_bundles(self) -> list[dict[str, Any]]:
        return [
            MessageToDict(b)
            for b in self._stream(
                "ListBundles", pb.ListBundlesRequest(), pb.Bundle, self.listing_timeout
            )
        ]

    def call(self, method: str, request: Any) -> Any:
        """Any RPC by name; streams come back as lists of dicts."""
        answer = getattr(self.stub, method)(request, timeout=self.timeout)
        if hasattr(answer, "DESCRIPTOR"):
            return MessageToDict(answer)
        return [MessageToDict(item) for item in answer]

    def catalog(self) -> Catalog:
        """The whole catalog, as ListBundles + GetPackage show it (what OLM's resolver reads)."""
        catalog = Catalog()
        names = self.list_packages()  # first: a short call that proves the server answers
        bundles = self.list_bundles()
        heads: list[tuple[str, str, str]] = []  # (package, channel, head CSV) from GetPackage
        for name in names:
            data = self.get_package(name)
            heads += [(name, c["name"], c.get("csvName", "")) for c in data.get("channels", [])]
            package = Package(name, default_channel=data.get("defaultChannelName", ""))
            deprecations = []
            if data.get("deprecation"):
                deprecations.append(_deprecated(PACKAGE_SCHEMA, "", data["deprecation"]))
            for channel in data.get("channels", []):
                package.channels[channel["name"]] = Channel(channel["name"], name)
                if channel.get("deprecation"):
                    deprecations.append(
                        _deprecated(CHANNEL_SCHEMA, channel["name"], channel["deprecation"])
                    )
            package.deprecations = {"entries": deprecations} if deprecations else None
            catalog.packages[name] = package
        for record in bundles:
            package = catalog.packages[record["packageName"]]
            channel = package.channels.setdefault(
                record["channelName"], Channel(record["channelName"], package.name)
            )
            channel.entries.append(
                Entry(
                    record["csvName"],
                    record.get("replaces", ""),
                    list(record.get("skips", [])),
                    record.get("skipRange", ""),
                )
            )
            if record["csvName"] not in package.bundles:
                properties = [
                    {"type": p["type"], "value": json.loads(p["value"])}
                    for p in record.get("properties", [])
                ]
                properties += [
                    {
                        "type": "olm.bundle.object",
                        "value": {
                            "data": base64.b64encode(
                                json.dumps(json.loads(o), sort_keys=True).encode()
                            ).decode()
                        },
                    }
                    for o in record.get("object", [])
                ]
                bundle = Bundle(
                    record["csvName"],
                    package.name,
                    image=record.get("bundlePath", ""),
                    properties=properties,
                )
                if bundle.csv is None:
                    bundle.csv_json = record.get("csvJson", "")
                package.bundles[record["csvName"]] = bundle
                if record.get("deprecation"):
                    entries = (package.deprecations or {}).setdefault("entries", [])
                    entries.append(_deprecated(BUNDLE_SCHEMA, bundle.name, record["deprecation"]))
                    package.deprecations = {"entries": entries}
        self._head_csvs(catalog, heads)
        return catalog

    def _head_csvs(self, catalog: Catalog, heads: list[tuple[str, str, str]]) -> None:
        """The CSV of each channel head that ListBundles left out (a registry omits `csvJson`
        and `object` there for bundles that have an image), asked for one by one with
        GetBundle, as OLM's packageserver asks for every head: the PackageManifest API shows
        the heads' CSVs. A head the registry cannot answer for stays without one (its
        channel is then left out of the package's manifest, as packageserver leaves it)."""
        for package_name, channel, csv_name in heads:
            bundle = catalog.packages[package_name].bundles.get(csv_name)
            if bundle is None or bundle.csv is not None or bundle.csv_json:
                continue
            request = pb.GetBundleRequest(
                pkgName=package_name, channelName=channel, csvName=csv_name
            )
            try:
                served = self._unary("GetBundle", request, pb.Bundle)
            except (grpc.RpcError, UnreadableAnswer):
                continue
            bundle.csv_json = served.csvJson
