"""Validation of a CSV's webhook and APIService definitions (OLM v0 §2.2, Pending rows).

Invariant: returns the first problem as (reason, message) naming the field and the fix, or
None. olm-py cannot install webhooks or APIServices yet; a valid definition is reported as
unsupported by the phase machine, an invalid one gets OLM's reason first.
"""

from __future__ import annotations

from typing import Any

from olm.api.csv import CsvReason

WEBHOOK_TYPES = ("ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook")
FORBIDDEN_GROUPS = ("*", "operators.coreos.com")
ADMISSION_CONFIGS = ("mutatingwebhookconfigurations", "validatingwebhookconfigurations", "*")


def _rule_problem(path: str, rule: dict[str, Any]) -> str | None:
    groups = rule.get("apiGroups") or []
    for group in groups:
        if group in FORBIDDEN_GROUPS:
            return f"{path}.apiGroups contains {group!r}: a webhook may not intercept {'all API groups' if group == '*' else 'OLM resources'}"
    if "admissionregistration.k8s.io" in groups:
        for resource in rule.get("resources") or []:
            if resource in ADMISSION_CONFIGS:
                return f"{path}.resources contains {resource!r}: a webhook may not intercept admission webhook configurations"
    return None


def definition_problem(
    csv: dict[str, Any], deployment_names: set[str]
) -> tuple[CsvReason, str] | None:
    spec = csv.get("spec") or {}
    seen: set[str] = set()
    for index, webhook in enumerate(spec.get("webhookdefinitions") or []):
        path = f"spec.webhookdefinitions[{index}]"
        name = webhook.get("generateName", "")
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
                f"{path}.deploymentName {webhook.get('deploymentName')!r} names no deployment of spec.install",
            )
        for rule_index, rule in enumerate(webhook.get("rules") or []):
            problem = _rule_problem(f"{path}.rules[{rule_index}]", rule)
            if problem:
                return CsvReason.INVALID_WEBHOOK_DESCRIPTION, problem
    for index, service in enumerate((spec.get("apiservicedefinitions") or {}).get("owned") or []):
        path = f"spec.apiservicedefinitions.owned[{index}]"
        if service.get("deploymentName") not in deployment_names:
            return (
                CsvReason.API_SERVICE_INSTALL_FAILED,
                f"{path}.deploymentName {service.get('deploymentName')!r} names no deployment of spec.install",
            )
    return None
