"""The OperatorCondition of a CSV, and the Role and RoleBinding that let the operator's
ServiceAccounts read and update it (OLM v0.38 operatorconditiongenerator_controller.go and
operatorcondition_controller.go).

Invariants (as OLM):
- The OperatorCondition is named after the CSV, in its namespace, with no labels, owned
  (controller, not blocking deletion) by the CSV. `spec.deployments` lists the strategy's
  deployment names; `spec.serviceAccounts` lists the `serviceAccountName` of every
  `clusterPermissions` entry, then of every `permissions` entry (so an account with both is
  listed twice), or `["default"]` when there is none.
- The Role and the RoleBinding are named after the OperatorCondition, labelled
  `olm.managed=true` and owned (controller, not blocking deletion) by the OperatorCondition.
  The Role grants get/update/patch on that one OperatorCondition; the RoleBinding binds it to
  each entry of `spec.serviceAccounts`, in order.
- Read tolerantly: a malformed strategy still yields a condition (the phase machine reports
  the strategy's faults).

Pure: plain dicts in, plain dicts out.
"""

from __future__ import annotations

from typing import Any

from olm.api.body import meta as body_meta
from olm.api.conditions import find_condition
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label

CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
OPERATOR_CONDITION = KINDS[Kind.OPERATOR_CONDITION]
RBAC_API = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"
DEFAULT_SERVICE_ACCOUNT = "default"


def _strategy_spec(csv: dict[str, Any]) -> dict[str, Any]:
    install = (csv.get("spec") or {}).get("install")
    body = install.get("spec") if isinstance(install, dict) else None
    return body if isinstance(body, dict) else {}


def _named(entries: Any, key: str) -> list[str]:
    if not isinstance(entries, list):
        return []
    return [
        e[key] for e in entries if isinstance(e, dict) and isinstance(e.get(key), str) and e[key]
    ]


def service_accounts(csv: dict[str, Any]) -> list[str]:
    body = _strategy_spec(csv)
    names = _named(body.get("clusterPermissions"), "serviceAccountName") + _named(
        body.get("permissions"), "serviceAccountName"
    )
    return names or [DEFAULT_SERVICE_ACCOUNT]


def deployments(csv: dict[str, Any]) -> list[str]:
    return _named(_strategy_spec(csv).get("deployments"), "name")


def _controller_ref(api_version: str, kind: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": False,
    }


def operator_condition(csv: dict[str, Any]) -> dict[str, Any]:
    meta = csv["metadata"]
    return {
        "apiVersion": OPERATOR_CONDITION.api_version,
        "kind": OPERATOR_CONDITION.kind.value,
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "ownerReferences": [_controller_ref(CSV.api_version, CSV.kind.value, meta)],
        },
        "spec": {"deployments": deployments(csv), "serviceAccounts": service_accounts(csv)},
    }


def _owned_meta(condition: dict[str, Any]) -> dict[str, Any]:
    meta = condition["metadata"]
    return {
        "name": meta["name"],
        "namespace": meta["namespace"],
        "labels": {Label.MANAGED.value: "true"},
        "ownerReferences": [
            _controller_ref(OPERATOR_CONDITION.api_version, OPERATOR_CONDITION.kind.value, meta)
        ],
    }


def condition_role(condition: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API,
        "kind": "Role",
        "metadata": _owned_meta(condition),
        "rules": [
            {
                "verbs": ["get", "update", "patch"],
                "apiGroups": [OPERATOR_CONDITION.api_version.split("/")[0]],
                "resources": [OPERATOR_CONDITION.plural],
                "resourceNames": [condition["metadata"]["name"]],
            }
        ],
    }


def condition_role_binding(condition: dict[str, Any]) -> dict[str, Any]:
    accounts = (condition.get("spec") or {}).get("serviceAccounts") or []
    return {
        "apiVersion": RBAC_API,
        "kind": "RoleBinding",
        "metadata": _owned_meta(condition),
        "subjects": [
            {"kind": "ServiceAccount", "name": name} for name in accounts if isinstance(name, str)
        ],
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": condition["metadata"]["name"]},
    }


def _subset(want: Any, have: Any) -> bool:
    """Every field of `want` is in `have` with the same value (lists compared whole)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(_subset(v, have.get(k)) for k, v in want.items())
    return bool(want == have)


def needs_apply(desired: dict[str, Any], existing: dict[str, Any] | None) -> bool:
    """Whether `existing` lacks part of `desired`, or carries a label olm-py no longer sets
    (the `olm.managed` label of OperatorConditions written by earlier olm-py versions)."""
    if existing is None:
        return True
    want = {k: v for k, v in desired.items() if k != "metadata"}
    if not _subset(want, existing):
        return True
    meta, have = desired["metadata"], body_meta(existing)
    if any(ref not in (have.get("ownerReferences") or []) for ref in meta["ownerReferences"]):
        return True
    labels = have.get("labels") or {}
    wanted = meta.get("labels") or {}
    if not _subset(wanted, labels):
        return True
    return Label.MANAGED.value in labels and Label.MANAGED.value not in wanted


def synced_conditions(condition: dict[str, Any]) -> list[dict[str, Any]] | None:
    """`status.conditions` once `spec.conditions` (what the operator reports) are copied in,
    each with `observedGeneration` set to the object's generation, as OLM's OperatorCondition
    controller keeps them; None when that changes nothing. A condition's
    `lastTransitionTime` moves only when its status does."""
    generation = body_meta(condition).get("generation")
    spec = condition.get("spec") or {}
    current = [dict(c) for c in (condition.get("status") or {}).get("conditions") or []]
    changed = False
    for reported in spec.get("conditions") or []:
        if not isinstance(reported, dict) or not reported.get("type"):
            continue
        found = find_condition(current, reported["type"])
        if (
            found is not None
            and found.get("status") == reported.get("status")
            and found.get("observedGeneration") == generation
        ):
            continue
        new = {**reported, "observedGeneration": generation}
        if found is None:
            current.append(new)
        else:
            if found.get("status") == reported.get("status"):
                new["lastTransitionTime"] = found.get("lastTransitionTime")
            current[current.index(found)] = new
        changed = True
    return current if changed else None


def not_upgradeable(condition: dict[str, Any] | None) -> str | None:
    """Why the OperatorCondition of a replaced CSV blocks its upgrade, or None (OLM): an
    Upgradeable override decides; otherwise the Upgradeable status condition (spec.conditions
    synced in, `synced_conditions`) must be of the current generation and not False."""
    if condition is None:
        return None

    def find(items: list[dict[str, Any]]) -> dict[str, Any] | None:
        return find_condition(items, "Upgradeable")

    override = find((condition.get("spec") or {}).get("overrides") or [])
    if override is not None:
        return (
            override.get("message") or "Upgradeable override is False"
            if override.get("status") == "False"
            else None
        )
    conditions = synced_conditions(condition)
    if conditions is None:
        conditions = (condition.get("status") or {}).get("conditions") or []
    reported = find(conditions)
    if reported is None:
        return None
    generation = body_meta(condition).get("generation")
    if generation is not None and reported.get("observedGeneration") != generation:
        return "the Upgradeable condition is stale (observedGeneration differs from generation)"
    if reported.get("status") == "False":
        return (
            reported.get("message")
            or reported.get("reason")
            or "the operator reported Upgradeable=False"
        )
    return None
