"""Does a ServiceAccount hold a policy rule? A pure evaluation over Roles and bindings.

Invariant (as OLM v0): the account is evaluated as the user
`system:serviceaccount:<ns>:<name>` **with no groups**, so bindings to groups do not count; a
rule is held only if every verb x group x resource x resourceName (or every non-resource URL)
combination is allowed by some bound role.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RbacSnapshot:
    """The RBAC objects that matter: namespaced ones of one namespace, and cluster-wide ones."""

    roles: dict[str, dict[str, Any]]
    role_bindings: list[dict[str, Any]]
    cluster_roles: dict[str, dict[str, Any]]
    cluster_role_bindings: list[dict[str, Any]]


def _binds_account(binding: dict[str, Any], namespace: str, account: str) -> bool:
    user = f"system:serviceaccount:{namespace}:{account}"
    for subject in binding.get("subjects") or []:
        kind = subject.get("kind")
        if kind == "ServiceAccount" and subject.get("name") == account:
            subject_ns = subject.get("namespace") or binding["metadata"].get("namespace")
            if subject_ns == namespace:
                return True
        if kind == "User" and subject.get("name") == user:
            return True
    return False


def _rules_of(ref: dict[str, Any], snapshot: RbacSnapshot) -> list[dict[str, Any]]:
    source = snapshot.roles if ref.get("kind") == "Role" else snapshot.cluster_roles
    role = source.get(ref.get("name", ""))
    return list((role or {}).get("rules") or [])


def granted_rules(
    snapshot: RbacSnapshot, namespace: str, account: str, cluster_wide: bool
) -> list[dict[str, Any]]:
    """Rules the account holds: in `namespace`, or (cluster_wide) in every namespace."""
    rules: list[dict[str, Any]] = []
    for binding in snapshot.cluster_role_bindings:
        if _binds_account(binding, namespace, account):
            rules.extend(_rules_of(binding.get("roleRef") or {}, snapshot))
    if not cluster_wide:
        for binding in snapshot.role_bindings:
            if _binds_account(binding, namespace, account):
                rules.extend(_rules_of(binding.get("roleRef") or {}, snapshot))
    return rules


def _matches(allowed: Iterable[str], wanted: str) -> bool:
    allowed = list(allowed)
    return "*" in allowed or wanted in allowed


def _resource_matches(allowed: list[str], wanted: str) -> bool:
    if "*" in allowed or wanted in allowed:
        return True
    # "*/scale" allows the scale subresource of everything.
    if "/" in wanted:
        return "*/" + wanted.split("/", 1)[1] in allowed
    return False


def _url_matches(allowed: list[str], wanted: str) -> bool:
    return any(
        a == wanted or a == "*" or (a.endswith("*") and wanted.startswith(a[:-1])) for a in allowed
    )


def _allows(rule: dict[str, Any], verb: str, group: str, resource: str, name: str | None) -> bool:
    return (
        _matches(rule.get("verbs") or [], verb)
        and _matches(rule.get("apiGroups") or [], group)
        and _resource_matches(rule.get("resources") or [], resource)
        and (not rule.get("resourceNames") or (name is not None and name in rule["resourceNames"]))
    )


def rule_satisfied(wanted: Mapping[str, Any], granted: list[dict[str, Any]]) -> bool:
    verbs = wanted.get("verbs") or []
    urls = wanted.get("nonResourceURLs") or []
    if urls:
        return all(
            any(
                _matches(g.get("verbs") or [], verb)
                and _url_matches(g.get("nonResourceURLs") or [], url)
                for g in granted
            )
            for verb in verbs
            for url in urls
        )
    names: list[str | None] = list(wanted.get("resourceNames") or []) or [None]
    return all(
        any(_allows(g, verb, group, resource, name) for g in granted)
        for verb in verbs
        for group in wanted.get("apiGroups") or [""]
        for resource in wanted.get("resources") or []
        for name in names
    )
