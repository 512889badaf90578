"""A client for the operator-registry gRPC API (`opm serve`, olm-py's own server, any
registry), reading a whole catalog into the same model our parsers produce."""

from __future__ import annotations

import base64
import json
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from grpc_health.v1 import health_pb2, health_pb2_grpc

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package
from olm.registry import registry_pb2 as pb
from olm.registry import registry_pb2_grpc as rpc


class RegistryClient:
    def __init__(self, address: str, timeout: float = 30.0) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = rpc.RegistryStub(self.channel)  # type: ignore[no-untyped-call]
        self.timeout = timeout

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

    def list_packages(self) -> list[str]:
        return sorted(
            p.name for p in self.stub.ListPackages(pb.ListPackageRequest(), timeout=self.timeout)
        )

    def get_package(self, name: str) -> dict[str, Any]:
        return MessageToDict(
            self.stub.GetPackage(pb.GetPackageRequest(name=name), timeout=self.timeout)
        )

    def list_bundles(self) -> list[dict[str, Any]]:
        return [
            MessageToDict(b)
            for b in self.stub.ListBundles(pb.ListBundlesRequest(), timeout=self.timeout)
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
        bundles = self.list_bundles()
        for name in self.list_packages():
            data = self.get_package(name)
            package = Package(name, default_channel=data.get("defaultChannelName", ""))
            for channel in data.get("channels", []):
                package.channels[channel["name"]] = Channel(channel["name"], name)
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
                package.bundles[record["csvName"]] = Bundle(
                    record["csvName"],
                    package.name,
                    image=record.get("bundlePath", ""),
                    properties=properties,
                )
        return catalog
