"""The pod network: the kube-apiserver really calls a webhook served by a pod the pod runner
runs (docs/pod-network.md).

A Deployment of the echo-webhook sample serves HTTPS with the certificate of its Secret; a
ValidatingWebhookConfiguration points at its Service; `kubectl apply` of a matching object is
refused with the program's own message, and the Service proxy reaches the same process.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

from olm.devcluster import network
from olm.samples.echo_webhook import REFUSE_ANNOTATION
from tests.support.cluster import STEP_TIMEOUT, ControlPlane
from tests.support.pod_network import apply, serving_pair


@pytest.fixture
def echo_webhook(
    control_plane: ControlPlane, namespace: str, pod_network: network.ClusterNetwork
) -> Iterator[str]:
    """The echo-webhook sample running behind Service `echo` in `namespace`."""
    cert, key = serving_pair(f"echo.{namespace}.svc")
    labels = {"app": "echo"}
    applied = apply(
        control_plane,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": "echo-cert", "namespace": namespace},
            "data": {
                "tls.crt": base64.b64encode(cert).decode(),
                "tls.key": base64.b64encode(key).decode(),
            },
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "echo", "namespace": namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "echo",
                                "image": "olm-py.local/echo-webhook:v1",
                                "ports": [{"containerPort": 8443}],
                                "volumeMounts": [
                                    {
                                        "name": "cert",
                                        "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                        "readOnly": True,
                                    }
                                ],
                            }
                        ],
                        "volumes": [{"name": "cert", "secret": {"secretName": "echo-cert"}}],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "echo", "namespace": namespace},
            "spec": {"selector": labels, "ports": [{"port": 443, "targetPort": 8443}]},
        },
    )
    assert applied.returncode == 0, applied.stderr
    # The Service proxy reaches the process at its endpoint once it listens.
    path = f"/api/v1/namespaces/{namespace}/services/https:echo:443/proxy/hello"
    deadline = time.monotonic() + STEP_TIMEOUT  # a rollout: slow on a loaded machine
    answer = control_plane.kubectl("get", "--raw", path, check=False)
    while answer.returncode != 0 and time.monotonic() < deadline:
        time.sleep(0.5)
        answer = control_plane.kubectl("get", "--raw", path, check=False)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.startswith(f"echo-webhook {namespace}/echo-") and "/hello" in answer.stdout
    yield base64.b64encode(cert).decode()


def webhook_configuration(name: str, namespace: str, ca_bundle: str) -> dict[str, object]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": "echo.olm-py.test",
                "clientConfig": {
                    "service": {"name": "echo", "namespace": namespace, "port": 443},
                    "caBundle": ca_bundle,
                },
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": ["configmaps"],
                    }
                ],
                # Only this test's namespace: other tests never meet this webhook.
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
            }
        ],
    }


def config_map(namespace: str, name: str, refuse: str | None = None) -> dict[str, object]:
    annotations = {REFUSE_ANNOTATION: refuse} if refuse else {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations},
        "data": {"size": "3"},
    }


def test_the_apiserver_calls_a_webhook_served_by_a_pod(
    control_plane: ControlPlane, namespace: str, echo_webhook: str
) -> None:
    name = f"echo-{uuid.uuid4().hex[:8]}"
    applied = apply(control_plane, webhook_configuration(name, namespace, echo_webhook))
    assert applied.returncode == 0, applied.stderr
    try:
        # The kube-apiserver picks a new configuration up within a moment; until then an
        # object is admitted without the webhook, so it is removed and tried again.
        deadline = time.monotonic() + 30
        while True:
            refused = apply(control_plane, config_map(namespace, "big", refuse="size 3 is over 2"))
            if refused.returncode != 0 or time.monotonic() > deadline:
                break
            control_plane.kubectl("delete", "configmap", "big", "-n", namespace)
            time.sleep(0.5)
        assert refused.returncode != 0, "the webhook was never called"
        assert 'admission webhook "echo.olm-py.test" denied the request' in refused.stderr
        assert f"echo-webhook {namespace}/echo-" in refused.stderr
        assert "refuses big: size 3 is over 2" in refused.stderr
        accepted = apply(control_plane, config_map(namespace, "small"))
        assert accepted.returncode == 0, accepted.stderr
    finally:
        control_plane.kubectl("delete", "validatingwebhookconfiguration", name, check=False)


def test_a_pod_has_its_own_namespace_until_it_is_deleted(
    control_plane: ControlPlane,
    namespace: str,
    echo_webhook: str,
    pod_network: network.ClusterNetwork,
) -> None:
    (pod,) = control_plane.get_json("pods", "-n", namespace, "-l", "app=echo")["items"]
    pod_ip = pod["status"]["podIP"]
    assert ipaddress.ip_address(pod_ip) in ipaddress.ip_network(pod_network.pod_cidr)
    netns, _ = pod_network.pod_names(pod_ip)
    assert f"netns {netns}" in network.leftovers(pod_network)
    # The pod can reach the kube-apiserver at the kubeconfig's 127.0.0.1:<port>, and nothing
    # but the host end of its link: it has no default route.
    routes = subprocess.run(
        ["ip", "-n", netns, "-j", "route", "show"], capture_output=True, text=True, check=True
    )
    assert [r["dst"] for r in json.loads(routes.stdout)] == [pod_network.gateway]
    pod_kubeconfig = (
        control_plane.cluster.state_dir / "pods" / f"{namespace}_{pod['metadata']['name']}"
    ) / "kubeconfig"
    version = subprocess.run(
        [
            "ip",
            "netns",
            "exec",
            netns,
            str(control_plane.bin_dir / "kubectl"),
            "get",
            "--raw",
            "/version",
            f"--kubeconfig={pod_kubeconfig}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0, version.stderr
    assert json.loads(version.stdout)["major"] == "1"
    control_plane.kubectl("delete", "deployment", "echo", "-n", namespace, "--wait=true")
    deadline = time.monotonic() + STEP_TIMEOUT  # the pod's deletion, then the runner's cleanup
    while f"netns {netns}" in network.leftovers(pod_network) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [item for item in network.leftovers(pod_network) if netns in item or pod_ip in item]
    assert left == []


def test_an_api_service_is_served_by_a_pod(
    control_plane: ControlPlane, namespace: str, echo_webhook: str
) -> None:
    group = f"{namespace}.echo.olm-py.test"
    name = f"v1.{group}"
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "version": "v1",
            "service": {"name": "echo", "namespace": namespace, "port": 443},
            "caBundle": echo_webhook,
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
        },
    }
    applied = apply(control_plane, api_service)
    assert applied.returncode == 0, applied.stderr
    try:
        deadline = time.monotonic() + 60
        while True:
            conditions = {
                c["type"]: c
                for c in control_plane.get_json("apiservice", name)
                .get("status", {})
                .get("conditions", [])
            }
            available = conditions.get("Available", {})
            if available.get("status") == "True" or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert available.get("status") == "True", available
        answer = control_plane.kubectl("get", "--raw", f"/apis/{group}/v1")
        assert json.loads(answer.stdout)["groupVersion"] == f"{group}/v1"
    finally:
        control_plane.kubectl("delete", "apiservice", name, check=False)
