"""Render the Deployments a CSV owns, and judge the ones that exist.

Invariants (OLM v0 §2.4): labels = the entry's `label` map + olm.managed + olm.owner* +
olm.deployment-spec-hash; exactly one non-controller, non-blocking ownerReference to the CSV;
every CSV annotation copied onto the pod template; OPERATOR_CONDITION_NAME in every container;
revisionHistoryLimit 1. The hash is ours (stable JSON digest), compared only by us.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.kinds import KINDS, Kind
from olm.api.labels import OPERATOR_CONDITION_ENV, Label
from olm.api.views import StrategyDeployment, owner_reference
from olm.install.overrides import canonical_resources


def spec_hash(spec: dict[str, Any]) -> str:
    digest = hashlib.sha256(
        json.dumps(spec, sort_keys=True, separators=(",", ":")).encode()
    ).digest()
    return int.from_bytes(digest[:8], "big").__format__("x")


def owner_labels(csv_name: str, namespace: str) -> dict[str, str]:
    return {
        Label.MANAGED: "true",
        Label.OWNER: csv_name,
        Label.OWNER_NAMESPACE: namespace,
        Label.OWNER_KIND: Kind.CLUSTER_SERVICE_VERSION.value,
    }


def _with_condition_env(containers: list[dict[str, Any]], csv_name: str) -> None:
    for container in containers:
        env = [e for e in container.get("env") or [] if e.get("name") != OPERATOR_CONDITION_ENV]
        env.append({"name": OPERATOR_CONDITION_ENV, "value": csv_name})
        container["env"] = env


def render_deployment(csv: dict[str, Any], entry: StrategyDeployment) -> dict[str, Any]:
    meta = csv["metadata"]
    spec = copy.deepcopy(dict(entry.spec))
    # parse_strategy checked the shapes read here; an explicit null reads as absent.
    template = spec["template"] = spec.get("template") or {}
    template_meta = template["metadata"] = dict(body.meta(template))
    # CSV annotations win over the template's own, as in OLM.
    template_meta["annotations"] = {
        **(template_meta.get("annotations") or {}),
        **(meta.get("annotations") or {}),
    }
    pod_spec = template["spec"] = template.get("spec") or {}
    _with_condition_env(pod_spec.get("containers") or [], meta["name"])
    _with_condition_env(pod_spec.get("initContainers") or [], meta["name"])
    spec["revisionHistoryLimit"] = 1
    labels = {**entry.labels, **owner_labels(meta["name"], meta["namespace"])}
    labels[Label.DEPLOYMENT_SPEC_HASH] = spec_hash(spec)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": entry.name,
            "namespace": meta["namespace"],
            "labels": labels,
            "ownerReferences": [owner_reference(csv, kind=KINDS[Kind.CLUSTER_SERVICE_VERSION])],
        },
        "spec": spec,
    }


# Server-side apply's words for a field the Deployment schema does not have, e.g.
# ".spec.volumeClaimTemplates: field not declared in schema".
UNDECLARED_FIELD = re.compile(r"(\.[^\s:,]+): field not declared in schema")


def refusal_message(index: int, deployment: dict[str, Any], error: str, status: int) -> str:
    """The CSV status message for an API server refusal of the index-th rendered Deployment.

    A 422 (Invalid) names the Deployment field the API server rejected; the message adds
    where that field comes from in the CSV, so the fix is clear. Other refusals keep the
    gateway's text.
    """
    name = deployment.get("metadata", {}).get("name", "")
    source = f"spec.install.spec.deployments[{index}]"
    undeclared = UNDECLARED_FIELD.findall(error)
    if undeclared:  # server-side apply of a field a Deployment does not have (a StatefulSet's)
        fields = ", ".join(f"{source}{path}" for path in dict.fromkeys(undeclared))
        return (
            f"install strategy failed: the API server refused Deployment {name} ({source}): "
            f"{fields} is not a field of a Deployment. Remove it from the "
            "ClusterServiceVersion, or move it where it belongs in the Deployment spec."
        )
    if status != 422:
        return f"install strategy failed: {error}"
    _, marker, detail = error.partition(f"({status}): ")
    return (
        f"install strategy failed: the API server refused Deployment {name} "
        f"({source}): {(detail if marker else error).rstrip('.')}. "
        f"Fix {source}.spec in the ClusterServiceVersion."
    )


def _empty(value: Any) -> bool:
    return value is None or (not isinstance(value, (int, float)) and not value) or value is False


def is_subset(wanted: Any, actual: Any) -> bool:
    """True when every field we set is present in `actual` with the same value.

    Fields the API server defaults (or other managers add) are ignored, so only real edits of
    what we own count as drift. What the API server changes on its way in is not drift either:
    an empty value it omits (`value: ""` of an env var, `{}`, `[]`) and a container resource
    quantity it canonicalizes and rounds up to milli-units (`cpu: 100n` is served as `1m`).
    """
    if actual is None and _empty(wanted):
        return True
    if isinstance(wanted, dict):
        if isinstance(wanted.get("resources"), dict):
            wanted = {**wanted, "resources": canonical_resources(wanted["resources"])}
        return isinstance(actual, dict) and all(
            is_subset(v, actual.get(k)) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(actual, list)
            and len(wanted) == len(actual)
            and all(is_subset(w, a) for w, a in zip(wanted, actual, strict=True))
        )
    return bool(wanted == actual)


@dataclass(frozen=True)
class Health:
    """What the health check found for the CSV's deployments."""

    healthy: bool
    missing: bool = False
    drifted: bool = False
    timed_out: bool = False
    message: str = ""


def rollout_status(name: str, deployment: Mapping[str, Any]) -> tuple[str, bool]:
    """Why a Deployment is not rolled out yet, in OLM's words (its status viewer, after
    kubectl's): ("", False) when it is; (reason, True) when its progress deadline passed."""
    status = deployment.get("status") or {}
    quoted = json.dumps(name)  # Go's %q
    generation = body.meta(deployment).get("generation") or 0
    if generation > (status.get("observedGeneration") or 0):
        return f"waiting for spec update of deployment {quoted} to be observed...", False
    conditions = {c.get("type"): c for c in status.get("conditions") or []}
    if (conditions.get("Progressing") or {}).get("reason") == "ProgressDeadlineExceeded":
        return f"deployment {quoted} exceeded its progress deadline", True
    outdated = (status.get("replicas") or 0) - (status.get("updatedReplicas") or 0)
    if outdated > 0:
        return (
            f"deployment {quoted} waiting for {outdated} outdated replica(s) to be terminated",
            False,
        )
    available = conditions.get("Available")
    if available is None or available.get("status") != "True":
        why = (available or {}).get("message") or 'missing condition "Available"'
        return f"deployment {quoted} not available: {why}", False
    return "", False


def check_health(desired: list[dict[str, Any]], existing: dict[str, dict[str, Any]]) -> Health:
    for want in desired:
        name = want["metadata"]["name"]
        have = existing.get(name)
        if have is None:
            return Health(False, missing=True, message=f"missing deployment with name={name}")
        want_hash = want["metadata"]["labels"][Label.DEPLOYMENT_SPEC_HASH]
        have_hash = (have["metadata"].get("labels") or {}).get(Label.DEPLOYMENT_SPEC_HASH)
        if have_hash != want_hash or not is_subset(want["spec"], have.get("spec")):
            return Health(
                False,
                drifted=True,
                message=f"deployment changed old hash={have_hash}, new hash={want_hash}",
            )
        if not is_subset(want["metadata"]["labels"], have["metadata"].get("labels")):
            return Health(False, drifted=True, message=f"deployment {name} labels changed")
    for want in desired:
        name = want["metadata"]["name"]
        reason, timed_out = rollout_status(name, existing[name])
        if timed_out:
            return Health(
                False,
                timed_out=True,
                message=f"deployment {name} not ready before timeout: {reason}",
            )
        if reason:
            return Health(False, message=f"waiting for deployment {name} to become ready: {reason}")
    return Health(True)
