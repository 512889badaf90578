"""An operator that owns an APIService, installed by hand in an OwnNamespace group.

The admin applies the CSV (tests/e2e/data/echo-apiservice.v0.1.0.csv.yaml, served by the
echo-webhook sample that the pod runner really runs) and sees what OLM v0 creates: the
APIService `v1alpha1.echo.example.com` pointing at Service `echo-apiserver-service` with the
CA that signed the Deployment's serving certificate, Available; the CSV Succeeded; and the
aggregated API answering `kubectl get --raw /apis/echo.example.com/v1alpha1` through the
kube-apiserver. Deleting the CSV removes the APIService (cluster-scoped, owned by labels).

Needs the local pod network (docs/pod-network.md) so the kube-apiserver can reach the pod.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, wait_phase

CSV_FILE = Path(__file__).parent / "data" / "echo-apiservice.v0.1.0.csv.yaml"
CSV_NAME = "echo-apiservice.v0.1.0"
APISERVICE = "v1alpha1.echo.example.com"
SERVICE = "echo-apiserver-service"


# The kube-apiserver must reach the operator's pod (tests/conftest.py `pod_network`).
pytestmark = pytest.mark.usefixtures("pod_network")


def available(apiservice: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Available" and c.get("status") == "True"
        for c in (apiservice.get("status") or {}).get("conditions") or []
    )


def apiservice_exists(plane: ControlPlane) -> bool:
    return plane.kubectl("get", "apiservice", APISERVICE, check=False).returncode == 0


def test_an_owned_apiservice_is_available_answers_and_goes_with_the_csv(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    csv = yaml.safe_load(CSV_FILE.read_text())
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(csv))
    try:
        wait_phase(plane, namespace, CSV_NAME, "Succeeded/InstallSucceeded")

        apiservice = plane.get_json("apiservice", APISERVICE)
        assert available(apiservice)
        spec = apiservice["spec"]
        assert spec["service"] == {"namespace": namespace, "name": SERVICE, "port": 8443}
        assert (spec["group"], spec["version"]) == ("echo.example.com", "v1alpha1")
        assert (spec["groupPriorityMinimum"], spec["versionPriority"]) == (2000, 15)
        labels = apiservice["metadata"]["labels"]
        assert labels["olm.owner"] == CSV_NAME
        assert labels["olm.owner.namespace"] == namespace
        assert labels["olm.owner.kind"] == "ClusterServiceVersion"
        # The caBundle is the CA that signed the serving certificate in OLM's Secret.
        secret = plane.get_json("secret", f"{SERVICE}-cert", "-n", namespace)
        ca = x509.load_pem_x509_certificate(base64.b64decode(spec["caBundle"]))
        serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
        serving.verify_directly_issued_by(ca)
        service = plane.get_json("service", SERVICE, "-n", namespace)
        assert [(p["port"], p["targetPort"]) for p in service["spec"]["ports"]] == [(8443, 8443)]

        # OLM's per-API roles, so a namespace's admins, editors and viewers may use the API.
        roles = [f"echoes-v1alpha1-{suffix}" for suffix in ("admin", "edit", "view")]
        wait_for(
            lambda: all(
                plane.kubectl("get", "clusterrole", role, check=False).returncode == 0
                for role in roles
            ),
            timeout=60,
            what=f"ClusterRoles {roles}",
        )
        edit = plane.get_json("clusterrole", roles[1])
        assert edit["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
        assert edit["rules"][0]["apiGroups"] == ["echo.example.com"]
        assert edit["rules"][0]["resources"] == ["echoes"]

        # The kube-apiserver proxies the group-version to the operator's own process.
        answer = plane.kubectl("get", "--raw", "/apis/echo.example.com/v1alpha1")
        listing = json.loads(answer.stdout)
        assert listing["kind"] == "APIResourceList"
        assert listing["groupVersion"] == "echo.example.com/v1alpha1"
    finally:
        plane.kubectl("delete", "csv", CSV_NAME, "-n", namespace, "--wait=false", check=False)
    wait_for(
        lambda: not apiservice_exists(plane),
        timeout=STEP_TIMEOUT,
        what=f"APIService {APISERVICE} deleted",
    )
