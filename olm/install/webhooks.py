"""The webhook configurations OLM v0 creates for a CSV's `webhookdefinitions`
(install/webhook.go), rendered from plain data.

Per Validating or Mutating definition: a Validating/MutatingWebhookConfiguration
`<generateName>-xxxxx` with one webhook pointing at the Deployment's Service
(olm.install.certresources), `caBundle` = that Deployment's CA, labels olm.owner*,
olm.webhook-description-generate-name, olm.webhook-description-hash (OLM's DeepHashObject of
the definition, `go_description`) and olm.managed=true, and a namespaceSelector for the OperatorGroup's
targets. Configurations labelled as the CSV's whose definition is gone are stale (OLM
cleanUpRemovedWebhooks). ConversionWebhook definitions are olm.install.conversion's.

Invariants: pure; the name suffix is fixed per CSV and definition, so applying again is
idempotent; problems raise `WebhookProblem`, whose message names the field and the fix.
"""

from __future__ import annotations

import base64
import copy
import hashlib
from typing import Any

from olm.api.gohash import deep_hash_object, sorted_map
from olm.api.labels import MANAGED_VALUE, OPERATOR_GROUP_UID_LABEL_PREFIX, Label
from olm.install.certresources import (
    WebhookWorld,
    container_port,
    definitions,
    owned_by,
    owner_label_set,
    service_name,
)
from olm.install.certs import ServingMaterial
from olm.install.deployments import is_subset

VALIDATING = "ValidatingAdmissionWebhook"
MUTATING = "MutatingAdmissionWebhook"
ADMISSION_API = "admissionregistration.k8s.io/v1"
CONFIG_KINDS = {
    VALIDATING: "ValidatingWebhookConfiguration",
    MUTATING: "MutatingWebhookConfiguration",
}
# The API server's generateName alphabet; olm-py derives the 5-character suffix from a hash.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class WebhookProblem(ValueError):
    """The webhooks cannot be installed as declared; the message names the field and the fix."""


# OLM's CSV CRD defaults a webhook definition's containerPort (kubebuilder:default=443), so
# the stored definition OLM hashes carries it even when the bundle leaves it out.
DEFAULT_CONTAINER_PORT = 443


def description_hash(desc: dict[str, Any]) -> str:
    """OLM's `olm.webhook-description-hash`: DeepHashObject of the WebhookDescription struct."""
    return deep_hash_object(go_description(desc))


def go_description(desc: dict[str, Any]) -> dict[str, Any]:
    """A webhook definition laid out as Go's `v1alpha1.WebhookDescription` encodes: fields in
    declaration order, `omitempty` ones left out when empty, `sideEffects` and
    `admissionReviewVersions` always (null when absent)."""
    out: dict[str, Any] = {
        "generateName": desc.get("generateName") or "",
        "type": desc.get("type") or "",
    }
    _put(out, "deploymentName", desc.get("deploymentName"))
    _put(out, "containerPort", desc.get("containerPort", DEFAULT_CONTAINER_PORT))
    _put(out, "targetPort", desc.get("targetPort"), keep_zero=True)
    _put(out, "rules", [_go_rule(rule) for rule in desc.get("rules") or []])
    _put(out, "failurePolicy", desc.get("failurePolicy"), keep_zero=True)
    _put(out, "matchPolicy", desc.get("matchPolicy"), keep_zero=True)
    if desc.get("objectSelector") is not None:
        out["objectSelector"] = _go_selector(desc["objectSelector"])
    out["sideEffects"] = desc.get("sideEffects")
    _put(out, "timeoutSeconds", desc.get("timeoutSeconds"), keep_zero=True)
    out["admissionReviewVersions"] = desc.get("admissionReviewVersions")
    _put(out, "reinvocationPolicy", desc.get("reinvocationPolicy"), keep_zero=True)
    _put(out, "webhookPath", desc.get("webhookPath"), keep_zero=True)
    _put(out, "conversionCRDs", desc.get("conversionCRDs"))
    return out


def _put(out: dict[str, Any], key: str, value: Any, *, keep_zero: bool = False) -> None:
    """Set an `omitempty` field: a pointer (`keep_zero`) is left out only when nil, a value or
    slice also when it is its zero value."""
    if value is None or (not keep_zero and value in ("", 0, [], {})):
        return
    out[key] = value


def _go_rule(rule: dict[str, Any]) -> dict[str, Any]:
    """admissionregistration/v1 RuleWithOperations: operations, then the inlined Rule."""
    out: dict[str, Any] = {}
    for key in ("operations", "apiGroups", "apiVersions", "resources"):
        _put(out, key, rule.get(key))
    _put(out, "scope", rule.get("scope"), keep_zero=True)
    return out


def _go_selector(selector: dict[str, Any]) -> dict[str, Any]:
    """metav1.LabelSelector: matchLabels (a map: sorted keys), then matchExpressions."""
    out: dict[str, Any] = {}
    _put(out, "matchLabels", sorted_map(selector.get("matchLabels") or {}))
    expressions = []
    for item in selector.get("matchExpressions") or []:
        expression = {"key": item.get("key") or "", "operator": item.get("operator") or ""}
        _put(expression, "values", item.get("values"))
        expressions.append(expression)
    _put(out, "matchExpressions", expressions)
    return out


def namespace_selector(group: dict[str, Any]) -> dict[str, Any] | None:
    """OLM's OperatorGroup.NamespaceLabelSelector: the uid label for listed targets, the
    group's own selector, or None (every namespace)."""
    spec = group.get("spec") or {}
    if spec.get("targetNamespaces"):
        uid = group.get("metadata", {}).get("uid")
        if not uid:
            raise WebhookProblem(
                f"OperatorGroup {group['metadata']['name']} has no uid yet; try again"
            )
        return {"matchLabels": {OPERATOR_GROUP_UID_LABEL_PREFIX + uid: ""}}
    selector = spec.get("selector")
    return dict(selector) if isinstance(selector, dict) else None


def config_name(csv: dict[str, Any], desc: dict[str, Any]) -> str:
    """`<generateName>-xxxxx` as OLM's generateName gives, the suffix fixed per CSV and
    definition so that applying it again is idempotent."""
    meta = csv["metadata"]
    seed = f"{meta['namespace']}/{meta['name']}/{desc.get('generateName', '')}".encode()
    number = int.from_bytes(hashlib.sha256(seed).digest()[:8], "big")
    suffix = ""
    for _ in range(5):
        number, index = divmod(number, len(_SUFFIX_ALPHABET))
        suffix += _SUFFIX_ALPHABET[index]
    return f"{desc.get('generateName', '')}-{suffix}"


def existing_config(
    configs: list[dict[str, Any]], kind: str, generate_name: str
) -> dict[str, Any] | None:
    for config in configs:
        labels = config.get("metadata", {}).get("labels") or {}
        if (
            config.get("kind") == kind
            and labels.get(Label.WEBHOOK_DESCRIPTION_GENERATE_NAME) == generate_name
        ):
            return config
    return None


def render_config(
    csv: dict[str, Any],
    desc: dict[str, Any],
    selector: dict[str, Any] | None,
    ca_pem: bytes,
    name: str,
) -> dict[str, Any]:
    namespace = csv["metadata"]["namespace"]
    service: dict[str, Any] = {
        "name": service_name(desc.get("deploymentName", "")),
        "namespace": namespace,
        "port": container_port(desc),
    }
    if desc.get("webhookPath"):
        service["path"] = desc["webhookPath"]
    webhook: dict[str, Any] = {
        "name": desc.get("generateName", ""),
        "clientConfig": {"service": service, "caBundle": base64.b64encode(ca_pem).decode()},
    }
    for key in (
        "rules",
        "failurePolicy",
        "matchPolicy",
        "objectSelector",
        "sideEffects",
        "timeoutSeconds",
        "admissionReviewVersions",
    ):
        if desc.get(key) is not None:
            webhook[key] = copy.deepcopy(desc[key])
    if selector is not None:
        webhook["namespaceSelector"] = selector
    if desc.get("type") == MUTATING and desc.get("reinvocationPolicy") is not None:
        webhook["reinvocationPolicy"] = desc["reinvocationPolicy"]
    return {
        "apiVersion": ADMISSION_API,
        "kind": CONFIG_KINDS[desc["type"]],
        "metadata": {
            "name": name,
            "labels": {
                **owner_label_set(csv),
                Label.WEBHOOK_DESCRIPTION_GENERATE_NAME.value: desc.get("generateName", ""),
                Label.WEBHOOK_DESCRIPTION_HASH.value: description_hash(desc),
                Label.MANAGED.value: MANAGED_VALUE,
            },
        },
        "webhooks": [webhook],
    }


def stale_configs(csv: dict[str, Any], configs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Configurations labelled as this CSV's whose definition is gone (OLM cleanUpRemovedWebhooks)."""
    wanted = {
        (CONFIG_KINDS[d["type"]], d.get("generateName"))
        for d in definitions(csv)
        if d.get("type") in CONFIG_KINDS
    }
    stale = []
    for config in configs:
        if not owned_by(config, csv):
            continue
        labels = config["metadata"].get("labels") or {}
        key = (config.get("kind", ""), labels.get(Label.WEBHOOK_DESCRIPTION_GENERATE_NAME))
        if key not in wanted:
            stale.append((str(config.get("kind", "")), str(config["metadata"]["name"])))
    return sorted(stale)


def missing(
    csv: dict[str, Any],
    group: dict[str, Any],
    world: WebhookWorld,
    materials: dict[str, ServingMaterial],
) -> str | None:
    """What is not installed as declared (OLM areWebhooksAvailable), or None."""
    try:
        selector = namespace_selector(group)
    except WebhookProblem as exc:
        return str(exc)
    for desc in definitions(csv):
        kind = CONFIG_KINDS.get(desc.get("type", ""))
        if kind is None:
            continue
        generate_name = desc.get("generateName", "")
        existing = existing_config(world.configs, kind, generate_name)
        if existing is None:
            return f"{kind} for webhook {generate_name} not found"
        material = materials.get(desc.get("deploymentName", ""))
        if material is None:
            return f"no serving certificate for webhook {generate_name}"
        want = render_config(csv, desc, selector, material.ca_pem, existing["metadata"]["name"])
        if not is_subset(want["metadata"]["labels"], existing["metadata"].get("labels")) or not (
            is_subset(want["webhooks"], existing.get("webhooks"))
        ):
            return f"{kind} {existing['metadata']['name']} for webhook {generate_name} is not as declared"
    return None
