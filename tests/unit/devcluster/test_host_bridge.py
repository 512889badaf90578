"""Host bridges, the pure part: addresses, names, what a Service asks for, the objects written
(docs/pod-network.md, "Host bridges")."""

from __future__ import annotations

import ipaddress
import json
from typing import Any

import pytest

from olm.api.devbridge import (
    ADVERTISEMENT_KEY,
    ADVERTISEMENT_NAME,
    ADVERTISEMENT_NAMESPACE,
    BRIDGE_MANAGER,
    HOST_BRIDGE_ANNOTATION,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
)
from olm.devcluster.hostbridge import (
    Bridge,
    BridgePort,
    Refused,
    advertisement,
    choose_index,
    decide,
    endpoint_slice,
    slice_name,
)
from olm.devcluster.network import BRIDGE_INDEXES, ClusterNetwork, NetworkError


def service(
    annotation: Any = '{"5443": 40123}',
    ports: list[dict[str, Any]] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    annotations = {} if annotation is None else {HOST_BRIDGE_ANNOTATION: annotation}
    return {
        "metadata": {"name": "api", "namespace": "olm", "uid": "u-1", "annotations": annotations},
        "spec": {"ports": [{"port": 443, "targetPort": 5443}] if ports is None else ports, **spec},
    }


# ----- addresses and names -----------------------------------------------------------------


def test_bridge_addresses_are_in_the_node_range_and_never_pods_nodes_or_the_gateway() -> None:
    network = ClusterNetwork(7)
    addresses = [ipaddress.IPv4Address(network.bridge_address(i)) for i in BRIDGE_INDEXES]
    assert str(addresses[0]) == "10.199.1.2" and str(addresses[-1]) == "10.199.1.253"
    assert len(set(addresses)) == len(BRIDGE_INDEXES) == 252
    node_range = ipaddress.IPv4Network("10.199.1.0/24")
    for address in addresses:
        assert address in node_range and address in network.block
        assert address not in ipaddress.IPv4Network(network.pod_cidr)
        assert str(address) not in (network.node_ip, network.gateway)


@pytest.mark.parametrize("index", [0, 1, 254, 255])
def test_indexes_outside_the_bridge_range_are_refused(index: int) -> None:
    with pytest.raises(NetworkError, match="outside"):
        ClusterNetwork(7).bridge_address(index)


@pytest.mark.parametrize(
    ("index", "names"), [(2, ("olmpy07b2", "olmpy07q2")), (253, ("olmpy07b253", "olmpy07q253"))]
)
def test_bridge_names_fit_and_are_the_clusters_own(index: int, names: tuple[str, str]) -> None:
    network = ClusterNetwork(7)
    assert network.bridge_names(index) == names
    assert all(len(name) <= 15 for name in names)
    # `olm dev down`, a failed `up` and the orphan sweep remove every name owns_name accepts.
    assert all(network.owns_name(name) for name in names)
    assert not any(ClusterNetwork(8).owns_name(name) for name in names)
    # Never a pod's name: pods use `-` and `p`.
    assert set(names).isdisjoint(network.pod_names("10.199.128.2"))


@pytest.mark.parametrize(
    ("used", "expected"),
    [
        (set(), 2),
        ({2, 3}, 4),
        ({3}, 2),
        (set(BRIDGE_INDEXES) - {200}, 200),
        (set(BRIDGE_INDEXES), None),
    ],
)
def test_the_lowest_free_index_is_chosen(used: set[int], expected: int | None) -> None:
    assert choose_index(used, BRIDGE_INDEXES) == expected


# ----- what a Service asks for -------------------------------------------------------------


def test_a_selectorless_service_with_the_annotation_gets_a_bridge() -> None:
    ports = [
        {"name": "https", "port": 443, "targetPort": 5443},
        {"name": "metrics", "port": 8080, "protocol": "TCP"},  # targetPort defaults to port
    ]
    wanted = decide(service('{"5443": 40123, "8080": 40124}', ports))
    assert wanted == Bridge(
        "olm",
        "api",
        "u-1",
        (BridgePort("https", 5443, 40123), BridgePort("metrics", 8080, 40124)),
    )
    assert isinstance(wanted, Bridge) and wanted.relays == {5443: 40123, 8080: 40124}


@pytest.mark.parametrize(
    "svc",
    [
        service(annotation=None),
        {**service(), "metadata": {**service()["metadata"], "deletionTimestamp": "2026-01-01"}},
    ],
)
def test_no_annotation_or_a_service_going_away_asks_for_nothing(svc: dict[str, Any]) -> None:
    assert decide(svc) is None


@pytest.mark.parametrize(
    ("svc", "names"),
    [
        (service("not json"), "is not JSON"),
        (service("[5443]"), "must be a non-empty JSON object"),
        (service("{}"), "must be a non-empty JSON object"),
        (service('{"https": 40123}'), "key 'https', which is not a targetPort number"),
        (service('{"05443": 40123}'), "key '05443', which is not a targetPort number"),
        (service('{"70000": 40123}'), "key '70000', which is not a targetPort number"),
        (service('{"5443": "40123"}'), "maps targetPort 5443 to '40123', which is not a port"),
        (service('{"5443": true}'), "maps targetPort 5443 to True, which is not a port"),
        (service('{"5443": 0}'), "maps targetPort 5443 to 0, outside 1-65535"),
        (service('{"5444": 40123}'), "has no host port for targetPort 5443 of spec.ports[0]"),
        (
            service('{"5443": 40123, "9": 1}'),
            "maps targetPort 9, which no port of the Service has (spec.ports)",
        ),
        (service(selector={"app": "x"}), "spec.selector: a host bridge is the endpoint"),
        (service(type="ExternalName"), "is on an ExternalName Service"),
        (service(ports=[]), "no spec.ports"),
        (
            service(ports=[{"name": "dns", "port": 53, "protocol": "UDP"}]),
            "cannot bridge spec.ports[0] (dns): protocol UDP (only TCP)",
        ),
        (
            service(ports=[{"name": "https", "port": 443, "targetPort": "https"}]),
            "targetPort 'https' is a name",
        ),
    ],
)
def test_a_bad_request_is_refused_with_a_message_naming_the_field_and_the_fix(
    svc: dict[str, Any], names: str
) -> None:
    refused = decide(svc)
    assert isinstance(refused, Refused), refused
    assert (refused.namespace, refused.service) == ("olm", "api")
    assert refused.message.startswith(f"Service olm/api: annotation {HOST_BRIDGE_ANNOTATION} ")
    assert names in refused.message
    assert 'e.g. {"5443": 40123}' in refused.message  # the fix, by example


# ----- what is written ---------------------------------------------------------------------


def test_the_endpoint_slice_is_what_the_apiservers_resolver_reads() -> None:
    bridge = Bridge("olm", "api", "u-1", (BridgePort("", 5443, 40123),))
    body = endpoint_slice(bridge, "10.199.1.2")
    meta = body["metadata"]
    assert (body["apiVersion"], body["kind"]) == ("discovery.k8s.io/v1", "EndpointSlice")
    assert (
        (meta["namespace"], meta["name"])
        == ("olm", slice_name("api"))
        == ("olm", "api-host-bridge")
    )
    assert meta["labels"] == {SERVICE_NAME_LABEL: "api", MANAGED_BY_LABEL: BRIDGE_MANAGER}
    assert meta["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Service", "name": "api", "uid": "u-1", "controller": True}
    ]
    assert body["addressType"] == "IPv4"
    (endpoint,) = body["endpoints"]
    assert endpoint["addresses"] == ["10.199.1.2"] and endpoint["conditions"]["ready"] is True
    # The resolver matches the slice port by the Service port's name: "" when unnamed.
    assert body["ports"] == [{"name": "", "port": 5443, "protocol": "TCP"}]
    json.dumps(body)  # plain data


def test_the_advertisement_names_the_annotation() -> None:
    body = advertisement()
    assert body["metadata"] == {"name": ADVERTISEMENT_NAME, "namespace": ADVERTISEMENT_NAMESPACE}
    assert (ADVERTISEMENT_NAMESPACE, ADVERTISEMENT_NAME) == ("kube-system", "olm-py-host-bridge")
    assert (
        body["data"]
        == {ADVERTISEMENT_KEY: HOST_BRIDGE_ANNOTATION}
        == {"annotation": "olm-py.io/host-bridge"}
    )


def test_a_refused_service_is_logged_once_and_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    from olm.devcluster.bridges import HostBridges

    # Nothing to touch: any use of the kernel, the forwarder or the API would fail loudly (and
    # be logged as a failure to retry).
    untouchable: Any = object()
    bridges = HostBridges(ClusterNetwork(7), untouchable, untouchable, untouchable)
    bad = service("not json")
    with caplog.at_level("INFO", logger="pod-runner.bridges"):
        bridges.handle("ADDED", bad)
        bridges.handle("MODIFIED", bad)
        bridges.retry_failed()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 1 and "Service olm/api: annotation" in messages[0], messages
    assert bridges.active == {} and bridges.failed == {}
    # Another bad value is a new message; a fixed-then-removed annotation forgets it.
    with caplog.at_level("INFO", logger="pod-runner.bridges"):
        bridges.handle("MODIFIED", service("{}"))
        bridges.handle("MODIFIED", service(annotation=None))
        bridges.handle("MODIFIED", service("{}"))
    assert len(caplog.records) == 3
