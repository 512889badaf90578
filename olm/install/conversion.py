"""CRD conversion through a CSV's ConversionWebhook definitions (OLM v0 install/webhook.go,
operators/olm/operator.go), rendered from plain data.

A ConversionWebhook definition points `spec.conversion` of each CRD in its `conversionCRDs`
at the Deployment's Service (olm.install.certresources), with that Deployment's CA. The
settings are written once the Deployment is ready (olm.install.render `pending_conversions`);
when the CSV is deleted without a replacement they go back to None, so CRs stay readable.

Invariants: pure; only CRDs whose conversion differs from the rendered one are patched;
problems are sentences naming the field and the fix.
"""

from __future__ import annotations

import base64
from typing import Any

from olm.install.certresources import container_port, definitions, service_name
from olm.install.certs import ServingMaterial
from olm.install.deployments import is_subset

CONVERSION = "ConversionWebhook"
CRD_API = "apiextensions.k8s.io/v1"


def is_conversion_patch(obj: dict[str, Any]) -> bool:
    """A body of `render_conversion`: only `spec.conversion` of a CRD, to be merge-patched (an
    apply of this part alone would release the rest of the CRD)."""
    return obj.get("kind") == "CustomResourceDefinition" and list(obj.get("spec") or {}) == [
        "conversion"
    ]


def render_conversion(
    csv: dict[str, Any], desc: dict[str, Any], crd_name: str, ca_pem: bytes
) -> dict[str, Any]:
    """The server-side-apply body that points `crd_name`'s conversion at the webhook."""
    return {
        "apiVersion": CRD_API,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {
            "conversion": {
                "strategy": "Webhook",
                "webhook": {
                    "clientConfig": {
                        "service": {
                            "namespace": csv["metadata"]["namespace"],
                            "name": service_name(desc.get("deploymentName", "")),
                            "path": desc.get("webhookPath") or "/",
                            "port": container_port(desc),
                        },
                        "caBundle": base64.b64encode(ca_pem).decode(),
                    },
                    "conversionReviewVersions": list(desc.get("admissionReviewVersions") or []),
                },
            }
        },
    }


def conversion_patches(
    csv: dict[str, Any],
    crds: dict[str, dict[str, Any]],
    materials: dict[str, ServingMaterial],
) -> list[dict[str, Any]]:
    """The CRD conversion settings still to write (none once every CRD points at the webhook)."""
    patches = []
    for desc in definitions(csv):
        if desc.get("type") != CONVERSION or desc.get("deploymentName") not in materials:
            continue
        for crd_name in desc.get("conversionCRDs") or []:
            body = render_conversion(csv, desc, crd_name, materials[desc["deploymentName"]].ca_pem)
            have = ((crds.get(crd_name) or {}).get("spec") or {}).get("conversion") or {}
            if not is_subset(body["spec"]["conversion"], have):
                patches.append(body)
    return patches


def conversion_problem(csv: dict[str, Any], crds: dict[str, dict[str, Any]]) -> str | None:
    """Why the conversion webhooks cannot be installed now (a missing CRD), or None."""
    for index, desc in enumerate(definitions(csv)):
        if desc.get("type") != CONVERSION:
            continue
        for crd_name in desc.get("conversionCRDs") or []:
            crd = crds.get(crd_name)
            if crd is None:
                return (
                    f"spec.webhookdefinitions[{index}].conversionCRDs names CRD {crd_name}, "
                    "which does not exist: create it (it comes with the bundle)"
                )
            if (crd.get("spec") or {}).get("preserveUnknownFields"):
                return (
                    f"CRD {crd_name} has spec.preserveUnknownFields: true, so the API server "
                    "cannot call a conversion webhook for it: set it to false"
                )
    return None


def conversion_cleanup(
    csv: dict[str, Any], crds: dict[str, dict[str, Any]]
) -> list[tuple[str, dict[str, Any]]]:
    """On deletion without a replacement (OLM): (CRD name, merge patch) setting conversion back
    to None, for every CRD that still points at this CSV's webhook Service."""
    namespace = csv["metadata"]["namespace"]
    patches = []
    for desc in definitions(csv):
        if desc.get("type") != CONVERSION:
            continue
        for crd_name in desc.get("conversionCRDs") or []:
            conversion = ((crds.get(crd_name) or {}).get("spec") or {}).get("conversion") or {}
            client = (conversion.get("webhook") or {}).get("clientConfig") or {}
            service = client.get("service") or {}
            if (
                conversion.get("strategy") == "Webhook"
                and service.get("namespace") == namespace
                and service.get("name") == service_name(desc.get("deploymentName", ""))
            ):
                patches.append(
                    (crd_name, {"spec": {"conversion": {"strategy": "None", "webhook": None}}})
                )
    return patches
