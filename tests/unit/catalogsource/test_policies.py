"""The NetworkPolicies OLM keeps beside a catalog registry: their bodies, when one found is as
it should be, and what the controller does when one is missing or edited."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.catalogsource.decide import Fetched
from olm.catalogsource.policies import (
    PolicyAction,
    grpc_server_policy,
    policy_actions,
    policy_matches,
    unpack_bundles_policy,
    wanted_policies,
)
from tests.unit.catalogsource.world import NS, Reader, catalog, source, world

GRPC = {"sourceType": "grpc", "image": "example.com/catalog:1"}
CONFIGMAP = {"sourceType": "configmap", "configMap": "cm"}


def test_an_image_catalog_gets_a_grpc_server_and_an_unpack_bundles_policy() -> None:
    src = source(**GRPC)
    src["metadata"]["uid"] = "u1"
    server, unpack = wanted_policies(src)
    assert server["metadata"]["name"] == "src-grpc-server"
    assert server["metadata"]["labels"] == {"olm.managed": "true", "olm.catalogSource": "src"}
    assert server["metadata"]["ownerReferences"][0]["uid"] == "u1"
    assert server["spec"] == {
        "podSelector": {"matchLabels": {"olm.catalogSource": "src", "olm.managed": "true"}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"ports": [{"protocol": "TCP", "port": 50051}]}],
    }
    assert unpack["metadata"]["name"] == "src-unpack-bundles"
    assert unpack["spec"]["egress"] == [{"ports": [{"protocol": "TCP", "port": 6443}]}]
    selector = unpack["spec"]["podSelector"]["matchExpressions"]
    assert {"key": "operatorframework.io/bundle-unpack-ref", "operator": "Exists"} in selector


def test_a_configmap_catalogs_registry_may_reach_the_api_server_and_names_the_configmap_version() -> (
    None
):
    src = source(**CONFIGMAP)
    src["status"] = {"configMapReference": {"resourceVersion": "42"}}
    spec = grpc_server_policy(src)["spec"]
    assert spec["podSelector"]["matchLabels"]["olm.configMapResourceVersion"] == "42"
    assert spec["egress"] == [{"ports": [{"protocol": "TCP", "port": 6443}]}]


@pytest.mark.parametrize(
    "spec",
    [
        {"sourceType": "grpc", "address": "a:1"},
        {"sourceType": "grpc", "address": "a:1", "image": "x"},
        {"sourceType": "configmap"},
    ],
)
def test_no_registry_no_policies(spec: dict[str, Any]) -> None:
    assert wanted_policies(source(**spec)) == []


def test_a_policy_as_the_api_server_returns_it_matches() -> None:
    wanted = unpack_bundles_policy(source(**GRPC))
    found = copy.deepcopy(wanted)
    found["metadata"]["labels"]["extra"] = "kept"
    found["spec"]["ingress"] = []  # written empty by a client, left out by another
    assert policy_matches(wanted, found)


def test_an_edited_or_relabelled_policy_does_not_match() -> None:
    wanted = unpack_bundles_policy(source(**GRPC))
    edited = copy.deepcopy(wanted)
    edited["spec"]["egress"] = [{"ports": [{"protocol": "TCP", "port": "foobar"}]}]
    assert not policy_matches(wanted, edited)
    relabelled = copy.deepcopy(wanted)
    del relabelled["metadata"]["labels"]["olm.catalogSource"]
    assert not policy_matches(wanted, relabelled)


def test_actions_create_the_missing_and_replace_the_edited() -> None:
    src = source(**GRPC)
    server, unpack = wanted_policies(src)
    edited = copy.deepcopy(unpack)
    edited["spec"]["egress"] = []
    assert policy_actions(src, {"src-unpack-bundles": edited}) == [
        PolicyAction(server),
        PolicyAction(unpack, replace=True),
    ]
    assert policy_actions(src, {"src-grpc-server": server, "src-unpack-bundles": unpack}) == []


def test_the_controller_writes_them_and_puts_an_edited_one_back() -> None:
    src = source(**GRPC)
    src["metadata"]["uid"] = "u1"
    fake, store, _, _, controller = world(Reader(Fetched(catalog=catalog())), src)
    controller.images.read = lambda key, image, configs: Fetched(catalog=catalog())  # type: ignore[method-assign]
    controller.reconcile(NS, "src")
    found = fake.get("networking.k8s.io/v1", "NetworkPolicy", NS, "src-unpack-bundles")
    assert found["metadata"]["labels"]["olm.catalogSource"] == "src"
    edited = copy.deepcopy(found)
    edited["spec"]["egress"] = [{"ports": [{"protocol": "TCP", "port": "foobar"}]}]
    fake.put(edited)
    for policy in ("src-grpc-server", "src-unpack-bundles"):
        store.upsert(
            "networkpolicy",
            copy.deepcopy(fake.get("networking.k8s.io/v1", "NetworkPolicy", NS, policy)),
        )
    controller.reconcile(NS, "src")
    again = fake.get("networking.k8s.io/v1", "NetworkPolicy", NS, "src-unpack-bundles")
    assert again["spec"]["egress"] == [{"ports": [{"protocol": "TCP", "port": 6443}]}]
