"""The pod network's address plan, names and the pod runner's volumes (pure, table-driven)."""

from __future__ import annotations

import dataclasses
import ipaddress
import json
from pathlib import Path
from typing import Any

import pytest

from olm.devcluster.components import Layout, Plan, Ports
from olm.devcluster.network import POOL, SLOTS, ClusterNetwork, NetworkError, free_slots
from olm.devcluster.podprograms import program_for, resolve_env
from olm.devcluster.volumes import NotYetRunnable, materialize_volumes, mounts_for
from olm.samples.echo_webhook import REFUSE_ANNOTATION, discovery, review_response


@pytest.mark.parametrize(
    ("slot", "block", "services", "pods", "node", "gateway"),
    [
        (0, "10.192.0.0/16", "10.192.0.0/24", "10.192.128.0/17", "10.192.1.1", "10.192.1.254"),
        (7, "10.199.0.0/16", "10.199.0.0/24", "10.199.128.0/17", "10.199.1.1", "10.199.1.254"),
        (63, "10.255.0.0/16", "10.255.0.0/24", "10.255.128.0/17", "10.255.1.1", "10.255.1.254"),
    ],
)
def test_address_plan_of_a_block(
    slot: int, block: str, services: str, pods: str, node: str, gateway: str
) -> None:
    network = ClusterNetwork(slot)
    assert (str(network.block), network.service_cidr, network.pod_cidr) == (block, services, pods)
    assert (network.node_ip, network.gateway) == (node, gateway)
    # Everything the cluster uses is inside its block (one unreachable route covers it all),
    # and the pod range holds neither the Services, the nodes nor the gateway.
    inside = ipaddress.IPv4Network(block)
    pod_range = ipaddress.IPv4Network(pods)
    for address in (node, gateway):
        assert ipaddress.IPv4Address(address) in inside
        assert ipaddress.IPv4Address(address) not in pod_range
    assert ipaddress.IPv4Network(services).subnet_of(inside)
    assert pod_range.subnet_of(inside) and not pod_range.overlaps(ipaddress.IPv4Network(services))


def test_every_block_is_in_the_pool_and_distinct() -> None:
    blocks = [ClusterNetwork(slot).block for slot in range(SLOTS)]
    assert all(block.subnet_of(POOL) for block in blocks)
    assert len(set(blocks)) == SLOTS


@pytest.mark.parametrize(
    ("pod_ip", "names"),
    [
        ("10.199.128.1", ("olmpy07-1", "olmpy07p1")),
        ("10.199.255.254", ("olmpy07-32766", "olmpy07p32766")),
    ],
)
def test_pod_names_fit_interface_names(pod_ip: str, names: tuple[str, str]) -> None:
    network = ClusterNetwork(7)
    assert network.pod_names(pod_ip) == names
    assert all(len(name) <= 15 for name in names)
    assert all(network.owns_name(name) for name in names)


@pytest.mark.parametrize("name", ["olmpy070-1", "olmpy17-1", "eth0", "olmpy07", "olmpy07-x"])
def test_names_of_other_clusters_are_not_ours(name: str) -> None:
    assert not ClusterNetwork(7).owns_name(name)


@pytest.mark.parametrize("pod_ip", ["10.199.0.5", "10.199.128.0", "10.198.128.1", "127.0.0.1"])
def test_pod_ips_outside_the_pod_range_are_refused(pod_ip: str) -> None:
    with pytest.raises(NetworkError, match="outside this cluster's pod range"):
        ClusterNetwork(7).pod_names(pod_ip)


@pytest.mark.parametrize(
    ("routes", "addresses", "first", "excluded"),
    [
        ([{"dst": "default"}, {"dst": "192.0.2.0/24"}], [], 0, []),
        # A block taken by another cluster (its unreachable route) is skipped.
        ([{"type": "unreachable", "dst": "10.192.0.0/16"}], [], 1, [0]),
        # A real network of the machine is never shadowed, whatever its size.
        ([{"dst": "10.0.0.0/8"}], [], None, list(range(SLOTS))),
        ([{"dst": "10.193.4.0/24"}], [], 0, [1]),
        ([{"dst": "10.196.0.0/14"}], [], 0, [4, 5, 6, 7]),
        ([], ["10.194.7.7"], 0, [2]),
    ],
)
def test_free_slots_avoid_every_route_and_address(
    routes: list[dict[str, Any]], addresses: list[str], first: int | None, excluded: list[int]
) -> None:
    slots = free_slots(routes, addresses)
    assert (slots[0] if slots else None) == first
    assert not set(excluded) & set(slots)


def test_the_plan_uses_the_block_of_its_network() -> None:
    layout = Layout(Path("/state"), Path("/cache/bin"), Path("/cache/stages.yaml"))
    plan = Plan(layout, Ports(1, 2, 3, 4, 5))
    assert "--service-cluster-ip-range=10.0.0.0/24" in plan.argv("kube-apiserver")
    with_network = dataclasses.replace(plan, network=ClusterNetwork(3))
    assert "--service-cluster-ip-range=10.195.0.0/24" in with_network.argv("kube-apiserver")
    assert "--service-cluster-ip-range=10.195.0.0/24" in with_network.argv(
        "kube-controller-manager"
    )
    assert "--cidr=10.195.128.0/17" in with_network.argv("kwok")
    assert "--node-ip=10.195.1.1" in with_network.argv("kwok")
    assert "--enable-aggregator-routing=true" in with_network.argv("kube-apiserver")


POD: dict[str, Any] = {
    "metadata": {"namespace": "ns", "name": "p"},
    "spec": {
        "volumes": [
            {"name": "cert", "secret": {"secretName": "c"}},
            {"name": "conf", "configMap": {"name": "m", "items": [{"key": "a", "path": "x/a"}]}},
            {"name": "opt", "secret": {"secretName": "gone", "optional": True}},
            {"name": "scratch", "emptyDir": {}},
        ],
    },
    "status": {"podIP": "10.199.128.4"},
}
OBJECTS = {
    ("secret", "c"): {"tls.crt": b"CERT", "tls.key": b"KEY"},
    ("configMap", "m"): {"a": b"A", "b": b"B"},
}


def read(namespace: str, kind: str, name: str) -> dict[str, bytes] | None:
    assert namespace == "ns"
    return OBJECTS.get((kind, name))


def test_secret_and_config_map_volumes_are_written_as_private_files(tmp_path: Path) -> None:
    volumes = materialize_volumes(POD, tmp_path, read)
    assert set(volumes) == {"cert", "conf", "opt"}
    cert = volumes["cert"]
    assert cert == tmp_path / "volumes" / "cert"
    assert (cert / "tls.crt").read_bytes() == b"CERT"
    assert (cert / "tls.key").stat().st_mode & 0o777 == 0o600
    assert (volumes["conf"] / "x" / "a").read_bytes() == b"A"
    assert not (volumes["conf"] / "b").exists()  # `items` picks keys
    assert list(volumes["opt"].iterdir()) == []


def test_a_missing_secret_waits(tmp_path: Path) -> None:
    pod = {**POD, "spec": {"volumes": [{"name": "v", "secret": {"secretName": "nope"}}]}}
    with pytest.raises(NotYetRunnable, match="secret ns/nope of volume v"):
        materialize_volumes(pod, tmp_path, read)


@pytest.mark.parametrize(
    ("mounts", "expected"),
    [
        (
            [{"name": "cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"}],
            {"/tmp/k8s-webhook-server/serving-certs": "/s/volumes/cert"},
        ),
        (
            [{"name": "conf", "mountPath": "/etc/a", "subPath": "x/a"}],
            {"/etc/a": "/s/volumes/conf/x/a"},
        ),
        ([{"name": "scratch", "mountPath": "/tmp/x"}], {}),  # not materialized
        ([], {}),
    ],
)
def test_mounts_of_a_container(mounts: list[dict[str, str]], expected: dict[str, str]) -> None:
    volumes = {"cert": Path("/s/volumes/cert"), "conf": Path("/s/volumes/conf")}
    assert mounts_for({"volumeMounts": mounts}, volumes) == expected
    json.dumps(expected)  # what OLM_PY_MOUNTS carries


def test_the_pod_ip_from_the_downward_api() -> None:
    container = {"env": [{"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]}
    assert resolve_env(container, POD) == {"IP": "10.199.128.4"}


def test_the_echo_webhook_sample_is_a_program() -> None:
    command = program_for("olm-py.local/echo-webhook:v1")
    assert command is not None and command[1:3] == ["-m", "olm.samples.echo_webhook"]


@pytest.mark.parametrize(
    ("annotations", "allowed", "message"),
    [
        ({}, True, None),
        ({REFUSE_ANNOTATION: "too big"}, False, "echo-webhook ns/p refuses cm: too big"),
    ],
)
def test_the_echo_webhook_answers(
    annotations: dict[str, str], allowed: bool, message: str | None
) -> None:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "object": {"metadata": {"name": "cm", "annotations": annotations}},
        },
    }
    answer = review_response(review, "echo-webhook ns/p")
    assert answer["response"]["uid"] == "u1"
    assert answer["response"]["allowed"] is allowed
    assert answer["response"].get("status", {}).get("message") == message


@pytest.mark.parametrize(
    ("path", "group_version"),
    [
        ("/apis/echo.example.com/v1", "echo.example.com/v1"),
        ("/apis/echo.example.com/v1?timeout=32s", "echo.example.com/v1"),
        ("/apis/echo.example.com", None),
        ("/hello", None),
    ],
)
def test_the_echo_webhook_discovery(path: str, group_version: str | None) -> None:
    listing = discovery(path)
    assert (listing["groupVersion"] if listing else None) == group_version
