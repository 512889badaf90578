"""Validation of a CSV's webhook and APIService definitions (OLM v0 §2.2, Pending rows).

Invariant: returns the first problem as (reason, message) naming the field and the fix, or
None; where OLM has its own words for a problem (webhook rules), the message is OLM's and the
field and the fix are the `detail` an Event adds. Webhooks (olm.install.webhooks,
olm.install.conversion) and owned APIServices (olm.install.apiservices) are installed; an
owned APIService needs a group, a version and a deploymentName of the strategy.

Beyond OLM's own checks (repeated names, forbidden rules, conversion webhooks only for
AllNamespaces-only CSVs, on CRDs the CSV owns), olm-py refuses definitions the API server
would refuse later (no generateName, no sideEffects or admissionReviewVersions, no
conversionCRDs), where OLM would wait in Installing for webhooks that never come.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from olm.api.csv import CsvReason
from olm.api.views import CsvView

WEBHOOK_TYPES = ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook")
FORBIDDEN_GROUPS = ("*", "operators.coreos.com")
ADMISSION_CONFIGS = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations", "*")


class DefinitionProblem(NamedTuple):
    """Why the definitions are refused: the status `message`, and for the Event a `detail`
    where the message is OLM's own words (which tools and OLM's e2e suite match exactly)."""

    reason: CsvReason
    message: str
    detail: str = ""


# OLM's words for webhook rules it refuses (its install.ValidWebhookRules).
ALL_GROUPS_MESSAGE = "webhook rules cannot include all groups"
OLM_GROUP_MESSAGE = "webhook rules cannot include the OLM group"
ADMISSION_MESSAGE = (
    "webhook rules cannot include MutatingWebhookConfiguration or "
    "ValidatingWebhookConfiguration resources"
)


def _rule_problem(path: str, rule: dict[str, Any]) -> tuple[str, str] | None:
    """(OLM's message, the field and the fix) for a refused webhook rule, else None."""
    groups = rule.get("apiGroups") or []
    for group in groups:
        if group in FORBIDDEN_GROUPS:
            what = "all API groups" if group == "*" else "OLM resources"
            return (
                ALL_GROUPS_MESSAGE if group == "*" else OLM_GROUP_MESSAGE,
                f"{path}.apiGroups contains {group!r}: a webhook may not intercept {what}; "
                "list only the API groups the webhook needs",
            )
    if "admissionregistration.k8s.io" in groups:
        for resource in rule.get("resources") or []:
            if resource in ADMISSION_CONFIGS:
                return (
                    ADMISSION_MESSAGE,
                    f"{path}.resources contains {resource!r}: a webhook may not intercept "
                    "admission webhook configurations; remove it from the rule",
                )
    return None


def _only_all_namespaces(spec: dict[str, Any]) -> bool:
    """OLM's isSingletonOperator: AllNamespaces supported and no other mode."""
    for mode in spec.get("installModes") or []:
        if not isinstance(mode, dict):
            continue
        all_namespaces = mode.get("type") == "AllNamespaces"
        if all_namespaces != bool(mode.get("supported")):
            return False
    return True


def _webhook_problem(csv: dict[str, Any], path: str, webhook: dict[str, Any]) -> str | None:
    spec = csv.get("spec") or {}
    kind = webhook.get("type")
    if kind == "ConversionWebhook":
        crds = webhook.get("conversionCRDs") or []
        if not crds:
            return f"{path}.conversionCRDs is empty: a ConversionWebhook must name at least one CRD"
        if not _only_all_namespaces(spec):
            return (
                f"{path} is a ConversionWebhook, and CSVs with conversion webhooks must support "
                "only AllNamespaces: set spec.installModes to AllNamespaces alone"
            )
        owned = CsvView.of(csv).owned_crd_names
        for crd in crds:
            if crd not in owned:
                return (
                    f"{path}.conversionCRDs names CRD {crd}, which this CSV does not own: list it "
                    "in spec.customresourcedefinitions.owned or remove it"
                )
    else:
        if not webhook.get("sideEffects"):
            return f"{path}.sideEffects is missing: set None or NoneOnDryRun"
        if not webhook.get("admissionReviewVersions"):
            return f"{path}.admissionReviewVersions is missing: list the AdmissionReview versions the webhook accepts (v1)"
    return None


def definition_problem(
    csv: dict[str, Any], deployment_names: set[str]
) -> tuple[CsvReason, str] | DefinitionProblem | None:
    spec = csv.get("spec") or {}
    seen: set[str] = set()
    for index, webhook in enumerate(spec.get("webhookdefinitions") or []):
        path = f"spec.webhookdefinitions[{index}]"
        if not isinstance(webhook, dict):
            return (
                CsvReason.INVALID_WEBHOOK_DESCRIPTION,
                f"{path} must be an object, got {type(webhook).__name__}",
            )
        name = webhook.get("generateName", "")
        if not name or not isinstance(name, str):
            return (
                CsvReason.INVALID_WEBHOOK_DESCRIPTION,
                f"{path}.generateName is missing: every webhook needs a name (a domain such as vfoo.example.com)",
            )
        if name in seen:
            return (
                CsvReason.INVALID_WEBHOOK_DESCRIPTION,
                f"CSV contains repeated WebhookDescription name {name!r} ({path}.generateName): names must be unique",
            )
        seen.add(name)
        if webhook.get("type") not in WEBHOOK_TYPES:
            return (
                CsvReason.INVALID_WEBHOOK_DESCRIPTION,
                f"{path}.type {webhook.get('type')!r} is not one of {', '.join(WEBHOOK_TYPES)}",
            )
        if webhook.get("deploymentName") not in deployment_names:
            return (
                CsvReason.INVALID_WEBHOOK_DESCRIPTION,
                f"{path}.deploymentName {webhook.get('deploymentName')!r} names no deployment of spec.install: set it to the name of one of spec.install.spec.deployments",
            )
        for rule_index, rule in enumerate(webhook.get("rules") or []):
            refused = _rule_problem(f"{path}.rules[{rule_index}]", rule)
            if refused:
                return DefinitionProblem(CsvReason.INVALID_WEBHOOK_DESCRIPTION, *refused)
        problem = _webhook_problem(csv, path, webhook)
        if problem:
            return CsvReason.INVALID_WEBHOOK_DESCRIPTION, problem
    for index, service in enumerate((spec.get("apiservicedefinitions") or {}).get("owned") or []):
        path = f"spec.apiservicedefinitions.owned[{index}]"
        if not isinstance(service, dict):
            return (
                CsvReason.API_SERVICE_INSTALL_FAILED,
                f"{path} must be an object, got {type(service).__name__}",
            )
        if service.get("deploymentName") not in deployment_names:
            return (
                CsvReason.API_SERVICE_INSTALL_FAILED,
                f"{path}.deploymentName {service.get('deploymentName')!r} names no deployment of spec.install: set it to the name of one of spec.install.spec.deployments",
            )
        for key, example in (("group", "echo.example.com"), ("version", "v1alpha1")):
            if not service.get(key) or not isinstance(service.get(key), str):
                return (
                    CsvReason.API_SERVICE_INSTALL_FAILED,
                    f"{path}.{key} is missing: the APIService is named <version>.<group>; set it (e.g. {example})",
                )
        port = service.get("containerPort")
        if port is not None and (not isinstance(port, int) or not 0 < port < 65536):
            return (
                CsvReason.API_SERVICE_INSTALL_FAILED,
                f"{path}.containerPort {port!r} is not a port number: set 1-65535, or leave it out for 443",
            )
    return None
