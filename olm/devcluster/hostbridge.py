"""Host bridges of the local cluster, the pure part: what a Service asks for, and the objects
that answer it (docs/pod-network.md, "Host bridges").

A Service with no selector and the annotation `olm-py.io/host-bridge` (olm/api/devbridge.py)
asks the pod runner for an address the kube-apiserver can reach, relaying each port's
targetPort to a host port on 127.0.0.1. Invariants:

- `decide` reads only the Service: no annotation (or a Service being deleted) -> None; a
  usable request -> a `Bridge`; anything else -> a `Refused` whose message names the field and
  the fix. A refused Service is never written to, and gets no bridge.
- The kube-apiserver (v1.34) finds a Service's endpoint for APIServices, webhooks and CRD
  conversion in its EndpointSlices (`k8s.io/apiserver/pkg/util/proxy.ResolveEndpoint`): a slice
  labelled `kubernetes.io/service-name`, with a port whose name equals the Service port's name
  ("" when unnamed) and whose number is the targetPort, and a ready endpoint. `endpoint_slice`
  writes exactly that, owned by the Service so it goes with it.
- Addresses come from the node /24 (`ClusterNetwork.bridge_address`), never from kwok's pod
  range; `choose_index` takes the lowest free one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.devbridge import (
    ADVERTISEMENT_KEY,
    ADVERTISEMENT_NAME,
    ADVERTISEMENT_NAMESPACE,
    BRIDGE_MANAGER,
    HOST_BRIDGE_ANNOTATION,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
)

EXAMPLE = '{"5443": 40123}'
SLICE_SUFFIX = "-host-bridge"
PORT_RANGE = range(1, 65536)


@dataclass(frozen=True)
class BridgePort:
    name: str  # the Service port's name ("" when unnamed)
    target_port: int  # where the bridge address listens
    host_port: int  # the host's 127.0.0.1 port it relays to


@dataclass(frozen=True)
class Bridge:
    namespace: str
    service: str
    uid: str
    ports: tuple[BridgePort, ...]

    @property
    def relays(self) -> dict[int, int]:
        """targetPort -> host port."""
        return {port.target_port: port.host_port for port in self.ports}


@dataclass(frozen=True)
class Refused:
    namespace: str
    service: str
    message: str


def _problem(service: dict[str, Any], value: str) -> str | None:
    """What is wrong with the Service's request, or None."""
    spec = service.get("spec") or {}
    if spec.get("selector"):
        return (
            "is on a Service with spec.selector: a host bridge is the endpoint of a Service "
            "without a selector; remove spec.selector, or the annotation"
        )
    if spec.get("type") == "ExternalName":
        return "is on an ExternalName Service; use a ClusterIP Service without a selector"
    try:
        mapping = json.loads(value)
    except ValueError as exc:
        return f"is not JSON ({exc}): {value!r}"
    if not isinstance(mapping, dict) or not mapping:
        return f"must be a non-empty JSON object, got {value!r}"
    for key, host_port in mapping.items():
        if not (re.fullmatch(r"[1-9][0-9]{0,4}", key) and int(key) in PORT_RANGE):
            return f"has key {key!r}, which is not a targetPort number (1-65535)"
        if isinstance(host_port, bool) or not isinstance(host_port, int):
            return f"maps targetPort {key} to {host_port!r}, which is not a port number"
        if host_port not in PORT_RANGE:
            return f"maps targetPort {key} to {host_port}, outside 1-65535"
    ports = spec.get("ports") or []
    if not ports:
        return "is on a Service with no spec.ports"
    targets = set()
    for index, port in enumerate(ports):
        label = f"spec.ports[{index}]" + (f" ({port['name']})" if port.get("name") else "")
        if (port.get("protocol") or "TCP") != "TCP":
            return f"cannot bridge {label}: protocol {port.get('protocol')} (only TCP)"
        target = port.get("targetPort", port.get("port"))
        if not isinstance(target, int):
            return (
                f"cannot bridge {label}: targetPort {target!r} is a name, and a Service "
                "without a selector has no pod to look it up in; use a number"
            )
        if str(target) not in mapping:
            return f"has no host port for targetPort {target} of {label}"
        targets.add(str(target))
    extra = sorted(set(mapping) - targets, key=int)
    if extra:
        return f"maps targetPort {extra[0]}, which no port of the Service has (spec.ports)"
    return None


def decide(service: dict[str, Any]) -> Bridge | Refused | None:
    """What the pod runner does for `service` (see the module docstring)."""
    meta = body.meta(service)
    value = body.annotations(service).get(HOST_BRIDGE_ANNOTATION)
    if value is None or meta.get("deletionTimestamp"):
        return None
    namespace, name = str(meta.get("namespace", "")), str(meta.get("name", ""))
    problem = _problem(service, str(value))
    if problem is not None:
        return Refused(
            namespace,
            name,
            f"Service {namespace}/{name}: annotation {HOST_BRIDGE_ANNOTATION} {problem}. "
            f"It maps each port's targetPort to a host port on 127.0.0.1, e.g. {EXAMPLE}; "
            "no bridge until it is fixed",
        )
    mapping = json.loads(str(value))
    ports = tuple(
        BridgePort(
            str(port.get("name") or ""),
            int(port.get("targetPort", port["port"])),
            int(mapping[str(port.get("targetPort", port["port"]))]),
        )
        for port in (service.get("spec") or {}).get("ports") or []
    )
    return Bridge(namespace, name, str(meta.get("uid", "")), ports)


def choose_index(used: set[int], indexes: range) -> int | None:
    """The lowest bridge index not in `used`; None when all are taken."""
    return next((index for index in indexes if index not in used), None)


def slice_name(service: str) -> str:
    """The bridge EndpointSlice's name (a Service name has at most 63 characters)."""
    return f"{service}{SLICE_SUFFIX}"


def endpoint_slice(bridge: Bridge, address: str) -> dict[str, Any]:
    """The EndpointSlice that makes `address` the Service's only endpoint."""
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": slice_name(bridge.service),
            "namespace": bridge.namespace,
            "labels": {SERVICE_NAME_LABEL: bridge.service, MANAGED_BY_LABEL: BRIDGE_MANAGER},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "name": bridge.service,
                    "uid": bridge.uid,
                    "controller": True,
                }
            ],
        },
        "addressType": "IPv4",
        "endpoints": [
            {
                "addresses": [address],
                "conditions": {"ready": True, "serving": True, "terminating": False},
            }
        ],
        "ports": [
            {"name": port.name, "port": port.target_port, "protocol": "TCP"}
            for port in bridge.ports
        ],
    }


def advertisement() -> dict[str, Any]:
    """The ConfigMap that says the pod runner offers host bridges."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": ADVERTISEMENT_NAME, "namespace": ADVERTISEMENT_NAMESPACE},
        "data": {ADVERTISEMENT_KEY: HOST_BRIDGE_ANNOTATION},
    }
