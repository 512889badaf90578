"""With registry pods on (`olm run --registry-image`), a ConfigMap catalog is served as OLM
serves it: a cluster admin applies a ConfigMap catalog and finds OLM's registry pod (its
labels, its ServiceAccount), the registry Service selecting it, and operator-registry's gRPC API
answering at the pod's address from the pod's own program (`olm configmap-server`, which the
local pod runner runs from olm-py's image). Editing the ConfigMap rolls the pod; deleting the
pod brings a new one. The catalog's NetworkPolicies are there too, and come back when deleted.

The pod answers at its pod IP, so these stories need the pod network.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from olm.registry.client import RegistryClient
from tests.e2e.test_registry_services import SERVICE, SOURCE, apply_configmap_catalog, synced
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator

IMAGE = "localhost/olm-py:dev"  # the pod runner runs any olm-py image as this venv's `olm`


@pytest.fixture
def registry_pods(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, pod_network: None
) -> Iterator[None]:
    olm_operator.restart(f"--registry-image={IMAGE}")
    try:
        yield
    finally:
        control_plane.kubectl("delete", "catsrc", "--all", "-n", namespace, "--wait=true")
        olm_operator.restart()


def pods(plane: ControlPlane, namespace: str, selector: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = plane.get_json("pods", "-n", namespace, "-l", selector)["items"]
    return [p for p in found if not p["metadata"].get("deletionTimestamp")]


def one_serving_pod(plane: ControlPlane, namespace: str, selector: str) -> dict[str, Any] | None:
    """The one registry pod matching `selector`, once it has a pod IP that answers gRPC health."""
    found = pods(plane, namespace, selector)
    ip = (found[0].get("status") or {}).get("podIP") if len(found) == 1 else None
    if not ip:
        return None
    try:
        with grpc.insecure_channel(f"{ip}:50051") as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service="Registry"), timeout=2
            )
    except grpc.RpcError:
        return None
    return found[0] if answer.status == health_pb2.HealthCheckResponse.SERVING else None


def test_a_configmap_catalog_is_served_by_olms_registry_pod(
    control_plane: ControlPlane, namespace: str, registry_pods: None
) -> None:
    plane = control_plane
    apply_configmap_catalog(plane, namespace)
    status = wait_for(
        lambda: synced(plane, namespace), timeout=STEP_TIMEOUT, what="the catalog to be synced"
    )
    version = status["configMapReference"]["resourceVersion"]
    selector = f"olm.catalogSource={SOURCE}"
    pod = wait_for(
        lambda: one_serving_pod(
            plane, namespace, f"{selector},olm.configMapResourceVersion={version}"
        ),
        timeout=STEP_TIMEOUT,
        what="the registry pod to serve the ConfigMap",
    )
    assert pod["metadata"]["labels"]["olm.managed"] == "true"
    assert pod["spec"]["serviceAccountName"] == f"{SOURCE}-configmap-server"
    [owner] = pod["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CatalogSource", SOURCE, True)
    service = plane.get_json("service", SERVICE, "-n", namespace)
    assert service["spec"]["selector"] == {"olm.catalogSource": SOURCE}
    client = RegistryClient(f"{pod['status']['podIP']}:50051", timeout=10)
    try:
        assert "etcd" in client.catalog().packages
    finally:
        client.close()
    for policy in ("grpc-server", "unpack-bundles"):
        plane.get_json("networkpolicy", f"{SOURCE}-{policy}", "-n", namespace)

    # A new ConfigMap version rolls the pod.
    plane.kubectl(
        "label", "configmap", "legacy-catalog", "-n", namespace, "touched=yes", "--overwrite"
    )
    newer = wait_for(
        lambda: (
            one_serving_pod(plane, namespace, selector)
            if pods(plane, namespace, selector)
            and all(
                p["metadata"]["labels"]["olm.configMapResourceVersion"] != version
                for p in pods(plane, namespace, selector)
            )
            else None
        ),
        timeout=STEP_TIMEOUT,
        what="the registry pod to roll to the new ConfigMap version",
    )
    assert newer["metadata"]["name"] != pod["metadata"]["name"]

    # A deleted pod, or NetworkPolicy, is made again.
    plane.kubectl("delete", "pod", newer["metadata"]["name"], "-n", namespace, "--wait=false")
    plane.kubectl("delete", "networkpolicy", f"{SOURCE}-grpc-server", "-n", namespace)
    again = wait_for(
        lambda: (
            one_serving_pod(plane, namespace, selector)
            if all(
                p["metadata"]["name"] != newer["metadata"]["name"]
                for p in pods(plane, namespace, selector)
            )
            else None
        ),
        timeout=STEP_TIMEOUT,
        what="a new registry pod after the old one was deleted",
    )
    assert again["metadata"]["name"] != newer["metadata"]["name"]
    wait_for(
        lambda: (
            plane.kubectl(
                "get", "networkpolicy", f"{SOURCE}-grpc-server", "-n", namespace, check=False
            ).returncode
            == 0
        ),
        timeout=STEP_TIMEOUT,
        what="the grpc-server NetworkPolicy to be made again",
    )
