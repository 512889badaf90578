"""olm-py image pods at their pod IPs: the kube-apiserver reaches a program of the olm-py image,
which runs on the host's network, at its pod IP (docs/pod-network.md).

A pod of the olm-py image (`olm run`, standing by without RBAC) behind a Service with a selector
answers /healthz at its pod IP, through the Service proxy.
"""

from __future__ import annotations

import http.client
import ipaddress

from olm.devcluster import network
from tests.conftest import STEP_TIMEOUT, ControlPlane, wait_for
from tests.integration.test_pod_network import apply, pod_network

__all__ = ["pod_network"]  # the fixture, shared with test_pod_network


def test_an_olm_py_image_pod_is_reachable_at_its_pod_ip(
    control_plane: ControlPlane, namespace: str, pod_network: network.ClusterNetwork
) -> None:
    labels = {"app": "olm-py-probe"}
    # `olm run` as a standby of a Lease it cannot read (the namespace's default account has no
    # RBAC): it never writes anything, and serves /healthz.
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "olm-py", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "olm",
                            "image": "localhost/olm-py:dev",
                            "command": ["olm"],
                            "args": [
                                "run",
                                "--leader-elect",
                                f"--leader-election-namespace={namespace}",
                                "--no-samples",
                                "--health-port=8081",
                            ],
                            "ports": [{"name": "health", "containerPort": 8081}],
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "olm-py", "namespace": namespace},
        "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "health"}]},
    }
    applied = apply(control_plane, deployment, service)
    assert applied.returncode == 0, applied.stderr
    path = f"/api/v1/namespaces/{namespace}/services/http:olm-py:80/proxy/healthz"

    def healthy() -> bool:
        return control_plane.kubectl("get", "--raw", path, check=False).returncode == 0

    wait_for(healthy, timeout=STEP_TIMEOUT, what="olm run's /healthz through the Service")
    (pod,) = control_plane.get_json("pods", "-n", namespace, "-l", "app=olm-py-probe")["items"]
    pod_ip = pod["status"]["podIP"]
    assert ipaddress.ip_address(pod_ip) in ipaddress.ip_network(pod_network.pod_cidr)
    # Straight at the pod IP too: the listener in the pod's namespace relays to the host port.
    connection = http.client.HTTPConnection(pod_ip, 8081, timeout=10)
    try:
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    netns, _ = pod_network.pod_names(pod_ip)
    control_plane.kubectl("delete", "deployment", "olm-py", "-n", namespace, "--wait=true")
    wait_for(
        lambda: f"netns {netns}" not in network.leftovers(pod_network),
        timeout=STEP_TIMEOUT,
        what=f"the pod's namespace {netns} to go with it",
    )
