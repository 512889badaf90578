"""The CSV requirement checks that fill `status.requirementStatus` (OLM v0 §2.3).

Order of entries: spec.version (only when it is not a version), minKubeVersion, CRDs (owned
and required, sorted by name), required APIServices, owned APIServices, nativeAPIs,
ServiceAccounts (sorted). Each entry says what is wrong in OLM's words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.csv import RequirementState, RuleState
from olm.api.views import CsvView, Strategy
from olm.catalog.semver import SemverError, parse_tolerant
from olm.csv.rbac import RbacSnapshot, granted_rules, rule_satisfied
from olm.install.apiservices import availability

API_REGISTRATION_GROUP = "apiregistration.k8s.io"


@dataclass(frozen=True)
class RequirementInputs:
    """What the cluster looks like, as far as requirements go."""

    crds: dict[str, dict[str, Any]]
    service_accounts: dict[str, dict[str, Any]]
    rbac: RbacSnapshot
    server_version: str
    served_kinds: frozenset[tuple[str, str, str]]
    # APIServices by name (version.group), for the ones a CSV requires.
    apiservices: dict[str, dict[str, Any]] = field(default_factory=dict)


def _version_tuple(text: str) -> tuple[int, int, int] | None:
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)", text.strip().split("-")[0].split("+")[0])
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def _entry(
    group: str,
    version: str,
    kind: str,
    name: str,
    status: RequirementState,
    message: str = "",
    **extra: Any,
) -> dict[str, Any]:
    entry = {"group": group, "version": version, "kind": kind, "name": name, "status": status.value}
    if message:
        entry["message"] = message
    entry.update(extra)
    return entry


def _version(csv: dict[str, Any]) -> list[dict[str, Any]]:
    """OLM v0 reads spec.version with blang/semver ParseTolerant and cannot even decode a CSV
    whose version does not parse (the CSV never gets a status); olm-py keeps it Pending and
    says why. A missing version is fine (OLM reads it as 0.0.0); a valid one adds no entry."""
    version = (csv.get("spec") or {}).get("version")
    if version is None:
        return []
    try:
        parse_tolerant(str(version))
        return []
    except SemverError:
        pass
    return [
        _entry(
            "operators.coreos.com",
            "v1alpha1",
            "ClusterServiceVersion",
            csv["metadata"]["name"],
            RequirementState.PRESENT_NOT_SATISFIED,
            f"CSV version parsing error: spec.version {version!r} is not a semantic version: "
            "set it to MAJOR.MINOR.PATCH, e.g. 1.0.0",
        )
    ]


def _min_kube(csv: dict[str, Any], server_version: str) -> list[dict[str, Any]]:
    wanted = (csv.get("spec") or {}).get("minKubeVersion")
    if not wanted:
        return []
    name = csv["metadata"]["name"]
    args = ("operators.coreos.com", "v1alpha1", "ClusterServiceVersion", name)
    need, have = _version_tuple(str(wanted)), _version_tuple(server_version)
    if need is None:
        return [
            _entry(
                *args,
                RequirementState.PRESENT_NOT_SATISFIED,
                f"CSV version parsing error: spec.minKubeVersion {wanted!r} is not X.Y.Z",
            )
        ]
    if have is None or need > have:
        return [
            _entry(
                *args,
                RequirementState.PRESENT_NOT_SATISFIED,
                f"CSV version requirement not met: minKubeVersion ({wanted}) > server version ({server_version})",
            )
        ]
    return [
        _entry(
            *args,
            RequirementState.PRESENT,
            f"CSV minKubeVersion ({wanted}) less than server version ({server_version})",
        )
    ]


def _crds(csv: dict[str, Any], crds: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    view = CsvView.of(csv)
    # An owned CRD is also required; its owned description wins when both list it.
    wanted = {c.name: c for c in (*view.required_crds, *view.owned_crds)}
    entries = []
    for name in sorted(wanted):
        args = ("apiextensions.k8s.io", "v1", "CustomResourceDefinition", name)
        crd = crds.get(name)
        if crd is None:
            entries.append(_entry(*args, RequirementState.NOT_PRESENT, "CRD is not present"))
            continue
        version = wanted[name].version
        served = {v.get("name") for v in crd.get("spec", {}).get("versions", []) if v.get("served")}
        if version and version not in served:
            entries.append(_entry(*args, RequirementState.NOT_PRESENT, "CRD version not served"))
            continue
        conditions = {
            c.get("type"): c.get("status")
            for c in (crd.get("status") or {}).get("conditions") or []
        }
        if conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True":
            entries.append(
                _entry(
                    *args,
                    RequirementState.PRESENT,
                    "CRD is present and Established condition is true",
                    uuid=crd["metadata"].get("uid", ""),
                )
            )
        else:
            entries.append(
                _entry(
                    *args,
                    RequirementState.PRESENT_NOT_AVAILABLE,
                    "CRD is present but the Established condition is False (not available)",
                )
            )
    return entries


def _apiservice_descriptions(csv: dict[str, Any], which: str) -> list[dict[str, Any]]:
    found = ((csv.get("spec") or {}).get("apiservicedefinitions") or {}).get(which) or []
    return [d for d in found if isinstance(d, dict)]


def _required_apiservices(csv: dict[str, Any], inputs: RequirementInputs) -> list[dict[str, Any]]:
    """OLM's check of `spec.apiservicedefinitions.required`: the kind is served, and its
    APIService exists and is Available (no message, as OLM writes none)."""
    entries = []
    for wanted in _apiservice_descriptions(csv, "required"):
        group, version = str(wanted.get("group", "")), str(wanted.get("version", ""))
        name = f"{version}.{group}"
        args = (API_REGISTRATION_GROUP, "v1", "APIService", name)
        service = inputs.apiservices.get(name)
        served = (group, version, str(wanted.get("kind", ""))) in inputs.served_kinds
        if served and service is not None and availability(service)[0]:
            uid = body.meta(service).get("uid", "")
            entries.append(_entry(*args, RequirementState.PRESENT, uuid=uid))
        else:
            entries.append(_entry(*args, RequirementState.NOT_PRESENT))
    return entries


def _owned_apiservices(csv: dict[str, Any], strategy: Strategy) -> list[dict[str, Any]]:
    """OLM's check of `spec.apiservicedefinitions.owned`: its Deployment is in the strategy."""
    deployments = {d.name for d in strategy.deployments}
    entries = []
    for owned in _apiservice_descriptions(csv, "owned"):
        name = f"{owned.get('version', '')}.{owned.get('group', '')}"
        found = owned.get("deploymentName") in deployments
        state = (
            RequirementState.DEPLOYMENT_FOUND if found else RequirementState.DEPLOYMENT_NOT_FOUND
        )
        entries.append(_entry(API_REGISTRATION_GROUP, "v1", "APIService", name, state))
    return entries


def _native_apis(
    csv: dict[str, Any], served: frozenset[tuple[str, str, str]]
) -> list[dict[str, Any]]:
    entries = []
    for api in (csv.get("spec") or {}).get("nativeAPIs") or []:
        group, version, kind = api.get("group", ""), api.get("version", ""), api.get("kind", "")
        name = f"{version}.{group}" if group else version
        found = (group, version, kind) in served
        state = RequirementState.PRESENT if found else RequirementState.NOT_PRESENT
        entries.append(
            _entry(
                group,
                version,
                kind,
                name,
                state,
                "Native API exists" if found else "Native API does not exist",
            )
        )
    return entries


# rbac/v1 PolicyRule's fields in Go's order; `verbs` is always written, the rest only when set.
POLICY_RULE_FIELDS = ("verbs", "apiGroups", "resources", "resourceNames", "nonResourceURLs")


def policy_rule_json(rule: Mapping[str, Any]) -> str:
    """A rule as OLM prints it (Go's json.Marshal of an rbac/v1 PolicyRule): fields in the
    struct's order, unknown fields dropped, no spaces, non-ASCII kept, and <, >, & escaped."""
    shaped: dict[str, Any] = {"verbs": rule.get("verbs")}
    shaped |= {key: rule[key] for key in POLICY_RULE_FIELDS[1:] if rule.get(key)}
    text = json.dumps(shaped, separators=(",", ":"), ensure_ascii=False)
    for char, escape in GO_JSON_ESCAPES:
        text = text.replace(char, escape)
    return text


GO_JSON_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


def _service_accounts(
    csv: dict[str, Any], strategy: Strategy, inputs: RequirementInputs
) -> list[dict[str, Any]]:
    namespace = csv["metadata"]["namespace"]
    entries = []
    for account in strategy.service_accounts:
        args = ("", "v1", "ServiceAccount", account)
        found = inputs.service_accounts.get(account)
        if found is None:
            entries.append(
                _entry(*args, RequirementState.NOT_PRESENT, "Service account does not exist")
            )
            continue
        dependents = []
        for permission in (p for p in strategy.permissions if p.service_account == account):
            granted = granted_rules(inputs.rbac, namespace, account, permission.cluster_scoped)
            scope = "cluster" if permission.cluster_scoped else "namespaced"
            for rule in permission.rules:
                held = rule_satisfied(rule, granted)
                dependents.append(
                    {
                        "group": "rbac.authorization.k8s.io",
                        "version": "v1",
                        "kind": "PolicyRule",
                        "status": (RuleState.SATISFIED if held else RuleState.NOT_SATISFIED).value,
                        "message": f"{scope} rule:{policy_rule_json(rule)}",
                    }
                )
        if any(d["status"] == RuleState.NOT_SATISFIED for d in dependents):
            entries.append(
                _entry(
                    *args,
                    RequirementState.PRESENT_NOT_SATISFIED,
                    "Policy rule not satisfied for service account",
                    dependents=dependents,
                )
            )
        else:
            entries.append(_entry(*args, RequirementState.PRESENT, "", dependents=dependents))
    return entries


def check_requirements(
    csv: dict[str, Any], strategy: Strategy, inputs: RequirementInputs
) -> tuple[bool, list[dict[str, Any]]]:
    """(all met, requirementStatus entries)."""
    entries = [
        *_version(csv),
        *_min_kube(csv, inputs.server_version),
        *_crds(csv, inputs.crds),
        *_required_apiservices(csv, inputs),
        *_owned_apiservices(csv, strategy),
        *_native_apis(csv, inputs.served_kinds),
        *_service_accounts(csv, strategy, inputs),
    ]
    met = all(
        e["status"] in (RequirementState.PRESENT, RequirementState.DEPLOYMENT_FOUND)
        for e in entries
    )
    return met, entries


def unmet_summary(entries: list[dict[str, Any]]) -> str:
    """Plain words for what is missing, e.g. 'CRD memcacheds.cache.example.com: CRD is not present'."""
    problems = [
        f"{e['kind']} {e['name']}: {e.get('message') or e['status']}"
        for e in entries
        if e["status"] not in (RequirementState.PRESENT, RequirementState.DEPLOYMENT_FOUND)
    ]
    return "; ".join(problems)
