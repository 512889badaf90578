"""Operators with webhooks, installed as an admin would by hand: the bundle's CRD, the
operator's ServiceAccounts and their RBAC, an all-namespaces OperatorGroup, then the CSV.

The admin sees what OLM v0 creates: the CSV Succeeded; a Service `<deployment>-service` on the
webhook's port; a Secret `<service>-cert` with the serving pair and the CA; the Deployment
mounting it where OLM mounts it, with the CA hash on its pod template; a webhook configuration
`<generateName>-xxxxx` whose caBundle is the CA that signed the Secret's certificate. Deleting
the CSV removes the webhook configuration and the cluster-wide binding OLM owns by label.

The operators' pods are simulated, so the webhooks are never called here: no CR that a
webhook matches is created (with failurePolicy Fail the API server would refuse it).
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.paths import SHARED
from tests.support.stories import minimal_csv, operator_group, wait_phase

CORPUS = SHARED / "corpus" / "community-operators" / "operators"
OPERATORS: dict[str, dict[str, Any]] = {
    "imagepuller": {
        "bundle": CORPUS / "kubernetes-imagepuller-operator" / "1.1.2" / "manifests",
        "csv": "kubernetes-imagepuller-operator.v1.1.2",
        "kind": "ValidatingWebhookConfiguration",
        "deployment": "kubernetes-image-puller-operator-manager",
        "generate_name": "vkubernetesimagepuller.kb.io",
        "target_port": 9443,
    },
    "gitops-primer": {
        "bundle": CORPUS / "gitops-primer" / "0.0.11" / "manifests",
        "csv": "gitops-primer.v0.0.11",
        "kind": "MutatingWebhookConfiguration",
        "deployment": "gitops-primer-mutating-webhook-deployment",
        "generate_name": "mexport.kb.io",
        "target_port": 8000,
    },
}
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus")


def bundle_documents(bundle: Path) -> list[dict[str, Any]]:
    return [yaml.safe_load(path.read_text()) for path in sorted(bundle.glob("*.yaml"))]


def install_by_hand(plane: ControlPlane, namespace: str, bundle: Path) -> dict[str, Any]:
    """CRDs, ServiceAccounts bound to cluster-admin, a global group, then the CSV."""
    documents = bundle_documents(bundle)
    [csv] = [d for d in documents if d.get("kind") == "ClusterServiceVersion"]
    for crd in (d for d in documents if d.get("kind") == "CustomResourceDefinition"):
        plane.kubectl("apply", "--server-side", "-f", "-", stdin=json.dumps(crd))
    install = csv["spec"]["install"]["spec"]
    accounts = {
        p["serviceAccountName"]
        for key in ("permissions", "clusterPermissions")
        for p in install.get(key) or []
    }
    for account in sorted(accounts):
        plane.kubectl("create", "serviceaccount", account, "-n", namespace)
        plane.kubectl(
            "create",
            "clusterrolebinding",
            f"{namespace}-{account}",
            "--clusterrole=cluster-admin",
            f"--serviceaccount={namespace}:{account}",
        )
    operator_group(plane, namespace, targets=[])
    csv["metadata"].pop("namespace", None)  # some bundles name the namespace they were made in
    plane.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(csv))
    return csv


def webhook_configurations(plane: ControlPlane, kind: str, csv: str, namespace: str) -> list[Any]:
    selector = f"olm.owner={csv},olm.owner.namespace={namespace}"
    return list(plane.get_json(kind.lower(), "-l", selector)["items"])


@pytest.mark.parametrize("operator", sorted(OPERATORS))
def test_a_webhook_operator_installs_with_olms_objects_and_uninstalls_cleanly(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, operator: str
) -> None:
    facts = OPERATORS[operator]
    plane = control_plane
    install_by_hand(plane, namespace, facts["bundle"])
    wait_phase(plane, namespace, facts["csv"], "Succeeded/InstallSucceeded")

    service_name = f"{facts['deployment']}-service"
    service = plane.get_json("service", service_name, "-n", namespace)
    assert service["spec"]["ports"] == [
        {"name": "443", "port": 443, "protocol": "TCP", "targetPort": facts["target_port"]}
    ]
    deployment = plane.get_json("deployment", facts["deployment"], "-n", namespace)
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]

    secret = plane.get_json("secret", f"{service_name}-cert", "-n", namespace)
    assert secret["type"] == "kubernetes.io/tls"
    assert sorted(secret["data"]) == ["olmCAKey", "tls.crt", "tls.key"]
    ca_pem = base64.b64decode(secret["data"]["olmCAKey"])
    ca_hash = hashlib.sha256(ca_pem).hexdigest()
    assert secret["metadata"]["annotations"]["olmcahash"] == ca_hash

    [config] = webhook_configurations(plane, facts["kind"], facts["csv"], namespace)
    assert config["metadata"]["name"].startswith(facts["generate_name"] + "-")
    labels = config["metadata"]["labels"]
    assert labels["olm.owner.kind"] == "ClusterServiceVersion"
    assert labels["olm.webhook-description-generate-name"] == facts["generate_name"]
    [hook] = config["webhooks"]
    assert hook["clientConfig"]["service"]["name"] == service_name
    assert hook["clientConfig"]["service"]["namespace"] == namespace
    assert hook["namespaceSelector"] == {}  # an all-namespaces group: every namespace
    bundle_ca = base64.b64decode(hook["clientConfig"]["caBundle"])
    ca = x509.load_pem_x509_certificate(bundle_ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    serving = x509.load_pem_x509_certificate(base64.b64decode(secret["data"]["tls.crt"]))
    serving.verify_directly_issued_by(ca)  # the caBundle is the CA that signed the Secret
    names = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert f"{service_name}.{namespace}.svc" in names.get_values_for_type(x509.DNSName)

    pod = deployment["spec"]["template"]
    assert pod["metadata"]["annotations"]["olmcahash"] == ca_hash
    volumes = {
        v["name"]: v["secret"]["secretName"] for v in pod["spec"]["volumes"] if "secret" in v
    }
    assert volumes["webhook-cert"] == volumes["apiservice-cert"] == f"{service_name}-cert"
    mounts = {m["mountPath"] for c in pod["spec"]["containers"] for m in c["volumeMounts"]}
    assert {
        "/tmp/k8s-webhook-server/serving-certs",
        "/apiserver.local.config/certificates",
    } <= mounts

    plane.kubectl("delete", "csv", facts["csv"], "-n", namespace, "--wait=false")
    wait_for(
        lambda: not webhook_configurations(plane, facts["kind"], facts["csv"], namespace),
        timeout=STEP_TIMEOUT,
        what=f"{facts['kind']} of {facts['csv']} deleted",
    )
    wait_for(
        lambda: (
            plane.kubectl(
                "get", "clusterrolebinding", f"{service_name}-system:auth-delegator", check=False
            ).returncode
            != 0
        ),
        timeout=STEP_TIMEOUT,
        what="the auth-delegator ClusterRoleBinding deleted",
    )


def test_an_own_namespace_webhook_is_scoped_to_the_groups_namespaces(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    csv = minimal_csv("scoped.v1")
    csv["spec"]["webhookdefinitions"] = [
        {
            "generateName": "vscoped.example.com",
            "type": "ValidatingAdmissionWebhook",
            "deploymentName": "scoped.v1-controller",
            "containerPort": 443,
            "targetPort": 9443,
            "rules": [
                {
                    "apiGroups": ["scoped.example.com"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["widgets"],
                }
            ],
            "failurePolicy": "Ignore",
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            "webhookPath": "/validate",
        }
    ]
    plane.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(csv))
    wait_phase(plane, namespace, "scoped.v1", "Succeeded/InstallSucceeded")

    group = plane.get_json("operatorgroup", "og", "-n", namespace)
    label = f"olm.operatorgroup.uid/{group['metadata']['uid']}"
    [config] = webhook_configurations(
        plane, "ValidatingWebhookConfiguration", "scoped.v1", namespace
    )
    [hook] = config["webhooks"]
    assert hook["namespaceSelector"] == {"matchLabels": {label: ""}}
    # The group's only target carries the label (written by another controller than the CSV's).
    wait_for(
        lambda: (
            (plane.get_json("namespace", namespace)["metadata"].get("labels") or {}).get(label)
            == ""
        ),
        what=f"namespace {namespace} labelled {label}",
    )

    plane.kubectl("delete", "csv", "scoped.v1", "-n", namespace, "--wait=false")
    wait_for(
        lambda: (
            not webhook_configurations(
                plane, "ValidatingWebhookConfiguration", "scoped.v1", namespace
            )
        ),
        timeout=STEP_TIMEOUT,
        what="the ValidatingWebhookConfiguration of scoped.v1 deleted",
    )
