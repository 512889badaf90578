"""A catalog olm-py reads in-process answers where OLM's registry pod would: a cluster admin
applies a ConfigMap catalog, `kubectl get catsrc -o yaml` shows the `registryService` and the
READY `connectionState` OLM shows, the Service it names exists, and operator-registry's gRPC
API answers behind it. Deleting the CatalogSource takes the Service and the server away.

olm-py is the Service's endpoint through the local cluster's host bridge (docs/pod-network.md),
so these stories need the pod network.
"""

from __future__ import annotations

import json
from typing import Any

import grpc
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from olm.api.devbridge import HOST_BRIDGE_ANNOTATION, SERVICE_NAME_LABEL
from olm.registry.client import RegistryClient
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.paths import SHARED

SOURCE = "legacy.catalog"  # a dot, which a Service name cannot hold: OLM makes it a dash
SERVICE = "legacy-catalog"


def apply_configmap_catalog(plane: ControlPlane, namespace: str) -> None:
    configmap = yaml.safe_load(
        (SHARED / "fixtures" / "configmap-catalog" / "configmap.example.yaml").read_text()
    )
    configmap["metadata"] = {"name": "legacy-catalog", "namespace": namespace}
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": SOURCE, "namespace": namespace},
        "spec": {"sourceType": "internal", "configMap": "legacy-catalog"},
    }
    listing = {"apiVersion": "v1", "kind": "List", "items": [configmap, source]}
    plane.kubectl("create", "-f", "-", stdin=json.dumps(listing))


def synced(plane: ControlPlane, namespace: str) -> dict[str, Any] | None:
    """What OLM's e2e suite waits for (catalogSourceRegistryPodSynced): a registryService, and a
    READY connection state with a connect time."""
    status = plane.get_json("catsrc", SOURCE, "-n", namespace).get("status") or {}
    state = status.get("connectionState") or {}
    ready = state.get("lastObservedState") == "READY" and state.get("lastConnect")
    return status if status.get("registryService") and ready else None


def test_a_configmap_catalog_answers_behind_the_service_its_status_names(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, pod_network: None
) -> None:
    plane = control_plane
    apply_configmap_catalog(plane, namespace)
    status = wait_for(
        lambda: synced(plane, namespace),
        timeout=STEP_TIMEOUT,
        what="the CatalogSource's registryService and a READY connection",
    )
    service = status["registryService"]
    assert {k: v for k, v in service.items() if k != "createdAt"} == {
        "protocol": "grpc",
        "serviceName": SERVICE,
        "serviceNamespace": namespace,
        "port": "50051",
    }
    assert status["connectionState"]["address"] == f"{SERVICE}.{namespace}.svc:50051"
    assert status["configMapReference"]["name"] == "legacy-catalog"

    found = plane.get_json("service", SERVICE, "-n", namespace)
    assert found["metadata"]["labels"]["olm.catalogSource"] == SOURCE
    [owner] = found["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["name"]) == ("CatalogSource", SOURCE)
    assert [(p["name"], p["port"]) for p in found["spec"]["ports"]] == [("grpc", 50051)]
    # The host bridge gave the Service an endpoint the API server (and pods) reach.
    wait_for(
        lambda: plane.get_json(
            "endpointslices", "-n", namespace, "-l", f"{SERVICE_NAME_LABEL}={SERVICE}"
        )["items"],
        timeout=STEP_TIMEOUT,
        what="the registry Service's EndpointSlice",
    )
    # Behind it: operator-registry's gRPC API serving the ConfigMap's catalog, and health.
    host_port = json.loads(found["metadata"]["annotations"][HOST_BRIDGE_ANNOTATION])["50051"]
    address = f"127.0.0.1:{host_port}"
    client = RegistryClient(address, timeout=10)
    try:
        catalog = client.catalog()
    finally:
        client.close()
    assert "etcd" in catalog.packages
    with grpc.insecure_channel(address) as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="Registry"), timeout=10
        )
    assert answer.status == health_pb2.HealthCheckResponse.SERVING

    # Polled again later, nothing moves: the same service and createdAt.
    again = plane.get_json("catsrc", SOURCE, "-n", namespace)["status"]["registryService"]
    assert again == service

    plane.kubectl("delete", "catsrc", SOURCE, "-n", namespace)
    wait_for(
        lambda: (
            "NotFound"
            in plane.kubectl("get", "service", SERVICE, "-n", namespace, check=False).stderr
        ),
        timeout=STEP_TIMEOUT,
        what="the registry Service to go with its CatalogSource",
    )

    def refused() -> bool:
        try:
            with grpc.insecure_channel(address) as channel:
                grpc.channel_ready_future(channel).result(timeout=1)
            return False
        except grpc.FutureTimeoutError:
            return True

    wait_for(refused, timeout=STEP_TIMEOUT, what="the catalog's gRPC server to stop")
