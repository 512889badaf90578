"""Who may install what (issue 25, opt-in): tenant namespaces and the RBAC their plans may ask.

OLM v0 installs whatever RBAC a Subscription's bundle asks for: anyone who may create a
Subscription in a namespace can give an operator cluster-wide rights
(operator-lifecycle-manager#1824, #2881). With `olm run --admin-namespaces NS` (chart value
`adminNamespaces`) olm-py treats every other namespace as a tenant's, and refuses a tenant's
InstallPlan whose bundle asks for
- a cluster-scoped rule: a CSV's `spec.install.spec.clusterPermissions`, or a ClusterRole /
  ClusterRoleBinding the bundle ships;
- namespaced `permissions` that reach beyond the namespace, because its OperatorGroup targets
  all namespaces (`status.namespaces: [""]`, OLM then lifts them to ClusterRoles) or others;
- a wildcard verb or resource, or the verbs escalate, bind, impersonate (each lets the
  operator give itself, or act with, rights nobody reviewed).
The plan fails before its first write, naming every offending rule by its field, and the fix.

Scoped OperatorGroups (`spec.serviceAccountName`) follow OLM's attenuation: the ServiceAccount
may grant only what it holds. With the opt-in on, every right the plan needs is asked of the
API server (SubjectAccessReviews, done by the controller: `needed_rights`, answers in
`Snapshot.access`) before anything is written, and everything the account lacks is listed at
once; the plan stays Installing and retries, as OLM keeps a Forbidden non-terminal.

Invariants: pure (neither kopf nor kubernetes); off (no admin namespaces) it decides nothing;
admin namespaces are never refused by the tenant rules; rights are deduplicated and bounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from olm.api import body
from olm.installplan.attenuation import RETRYING_PREFIX
from olm.installplan.policy import CLUSTER_SCOPED_KINDS

ADMIN_NAMESPACES_FLAG = "--admin-namespaces"
ADMIN_NAMESPACES_CHART_VALUE = "adminNamespaces"
DANGEROUS_VERBS = ("escalate", "bind", "impersonate")
CLUSTER_KINDS = CLUSTER_SCOPED_KINDS
NAMESPACED_RBAC_KINDS = frozenset({"Role", "RoleBinding"})
# How many SubjectAccessReviews one plan's check may ask: beyond, the rest is left to the
# Forbidden answers of the writes themselves (a bundle cannot make olm-py flood the API server).
MAX_RIGHTS = 256
# A ServiceAccount that lacks rights: look again this soon (RBAC changes in the namespace wake
# the plan sooner: olm.controllers.scope).
RIGHTS_RETRY_SECONDS = 5.0
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
# What the plan's own writes need, by step kind (the ServiceAccount writes every step but CRDs).
_STEP_RESOURCES = {
    "ClusterServiceVersion": ("operators.coreos.com", "clusterserviceversions"),
    "Subscription": ("operators.coreos.com", "subscriptions"),
    "ServiceAccount": ("", "serviceaccounts"),
    "Service": ("", "services"),
    "ConfigMap": ("", "configmaps"),
    "Secret": ("", "secrets"),
    "Role": ("rbac.authorization.k8s.io", "roles"),
    "RoleBinding": ("rbac.authorization.k8s.io", "rolebindings"),
    "ClusterRole": ("rbac.authorization.k8s.io", "clusterroles"),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io", "clusterrolebindings"),
}


class Right(NamedTuple):
    """One SubjectAccessReview's resource attributes; namespace "" is the cluster scope."""

    verb: str
    group: str
    resource: str
    namespace: str = ""
    name: str = ""


def parse_namespaces(values: Iterable[str]) -> frozenset[str]:
    """`--admin-namespaces` values: repeated and/or comma-separated namespace names.

    Raises ValueError naming a value that is not a namespace name."""
    found: set[str] = set()
    for value in values:
        for name in (part.strip() for part in value.split(",")):
            if not name:
                continue
            if not _DNS_LABEL.match(name):
                raise ValueError(
                    f"{ADMIN_NAMESPACES_FLAG} {name!r}: not a namespace name (lower-case letters, "
                    "digits and '-', at most 63 characters), e.g. olm,platform"
                )
            found.add(name)
    return frozenset(found)


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def _install_spec(csv: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((csv.get("spec") or {}).get("install") or {}).get("spec") or {}


def _entries(csv: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    return [e for e in _install_spec(csv).get(field) or [] if isinstance(e, Mapping)]


def _rules(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in entry.get("rules") or [] if isinstance(r, Mapping)]


def _what(rule: Mapping[str, Any]) -> str:
    """`get,list on secrets`, `get on deployments.apps`, `get on non-resource URLs /metrics`."""
    verbs = ",".join(_strings(rule.get("verbs"))) or "(no verbs)"
    urls = _strings(rule.get("nonResourceURLs"))
    if urls and not rule.get("resources"):
        return f"{verbs} on non-resource URLs {','.join(urls)}"
    groups = _strings(rule.get("apiGroups")) or [""]
    resources = [f"{r}.{g}" if g else r for g in groups for r in _strings(rule.get("resources"))]
    names = _strings(rule.get("resourceNames"))
    return f"{verbs} on {','.join(resources) or '(no resources)'}" + (
        f" named {','.join(names)}" if names else ""
    )


def _dangers(rule: Mapping[str, Any]) -> list[str]:
    """Why a rule is refused wherever it is granted."""
    verbs, resources = _strings(rule.get("verbs")), _strings(rule.get("resources"))
    found = []
    if "*" in verbs:
        found.append("a wildcard verb (*)")
    if any("*" in r for r in resources):
        found.append("a wildcard resource (*)")
    found += [f"the verb {verb}" for verb in DANGEROUS_VERBS if verb in verbs]
    return found


def group_targets(groups: Sequence[Mapping[str, Any]]) -> tuple[str, list[str]]:
    """(the name of the OperatorGroup managing the namespace, its targets): `[""]` is all."""
    managing = [g for g in groups if (g.get("status") or {}).get("namespaces")]
    if len(managing) != 1:
        return "", []
    return body.name(managing[0]), _strings(managing[0]["status"]["namespaces"])


def _generated(manifests: Sequence[Mapping[str, Any]]) -> set[str]:
    """The rules of the CSVs' permissions, as json: Roles and ClusterRoles with exactly these
    rules are the ones generated from them (olm.installplan.steps), named by the CSV's field."""
    return {
        json.dumps(_rules(entry), sort_keys=True)
        for csv in manifests
        if csv.get("kind") == "ClusterServiceVersion"
        for field in ("permissions", "clusterPermissions")
        for entry in _entries(csv, field)
    }


def offending_rules(
    namespace: str, manifests: Sequence[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Every rule a tenant namespace's plan may not ask for, each as `where: what`."""
    found: list[str] = []
    group, targets = group_targets(groups)
    beyond = [t for t in targets if t != namespace]
    if "" in targets:
        reach = f"cluster-wide (OperatorGroup {group} targets all namespaces) "
    elif beyond:
        reach = f"in namespaces {','.join(beyond)} (OperatorGroup {group} targets them) "
    else:
        reach = ""

    def offend(where: str, rule: Mapping[str, Any], scope: str) -> None:
        reasons = ([f"{scope}{_what(rule)}"] if scope else []) + [
            f"{_what(rule)} with {danger}" for danger in _dangers(rule)
        ]
        found.extend(f"{where}: {reason}" for reason in reasons)

    generated = _generated(manifests)
    generated_cluster_roles: set[str] = set()
    for index, manifest in enumerate(manifests):
        kind = str(manifest.get("kind") or "")
        if kind == "ClusterServiceVersion":
            prefix = f"ClusterServiceVersion {body.name(manifest)} spec.install.spec."
            for field, scope in (("clusterPermissions", "cluster-wide "), ("permissions", reach)):
                for i, entry in enumerate(_entries(manifest, field)):
                    for j, rule in enumerate(_rules(entry)):
                        offend(f"{prefix}{field}[{i}].rules[{j}]", rule, scope)
        elif kind in ("ClusterRole", "Role"):
            if json.dumps(_rules(manifest), sort_keys=True) in generated:
                if kind == "ClusterRole":
                    generated_cluster_roles.add(body.name(manifest))
                continue  # named above by the CSV field it comes from
            for j, rule in enumerate(_rules(manifest)):
                where = f"{kind} {body.name(manifest)} (status.plan[{index}]) rules[{j}]"
                offend(where, rule, "cluster-wide " if kind == "ClusterRole" else "")
    for index, manifest in enumerate(manifests):
        if manifest.get("kind") == "ClusterRoleBinding":
            role = str((manifest.get("roleRef") or {}).get("name") or "")
            if role not in generated_cluster_roles:
                found.append(
                    f"ClusterRoleBinding {body.name(manifest)} (status.plan[{index}]): binds "
                    f"ClusterRole {role} cluster-wide"
                )
    return found


def tenant_refusal(
    namespace: str,
    manifests: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    admin_namespaces: frozenset[str],
) -> str | None:
    """Why a plan in `namespace` fails, or None: the opt-in is off, the namespace is an admin
    namespace, or its bundle asks for nothing a tenant may not give."""
    if not admin_namespaces or namespace in admin_namespaces:
        return None
    found = offending_rules(namespace, manifests, groups)
    if not found:
        return None
    return (
        f"namespace {namespace} is not an admin namespace ({ADMIN_NAMESPACES_FLAG} "
        f"{','.join(sorted(admin_namespaces))}), and this InstallPlan asks for rights only an "
        f"admin namespace may give an operator: {'; '.join(found)}. Nothing of this plan was "
        "applied. Install the operator from an admin namespace, or have the cluster admin add "
        f"{namespace} to olm run {ADMIN_NAMESPACES_FLAG} (chart value "
        f"{ADMIN_NAMESPACES_CHART_VALUE}); then delete this InstallPlan so that the "
        "Subscription makes a new one"
    )


def _rule_rights(rule: Mapping[str, Any], namespaces: Sequence[str]) -> list[Right]:
    # Non-resource URLs exist only at the cluster scope, and a SubjectAccessReview asks them
    # differently: they are left to the API server's escalation check on the write.
    names = _strings(rule.get("resourceNames")) or [""]
    return [
        Right(verb, group, resource, namespace, name)
        for verb in _strings(rule.get("verbs"))
        for group in _strings(rule.get("apiGroups")) or [""]
        for resource in _strings(rule.get("resources"))
        for namespace in namespaces
        for name in names
    ]


def needed_rights(
    namespace: str,
    manifests: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    done: Sequence[bool] = (),
) -> list[Right]:
    """What the ServiceAccount of a scoped group must hold, deduplicated, at most MAX_RIGHTS:
    `create` of every step not done yet (but CRDs, which olm-py writes itself), and every rule
    the CSVs grant, where they grant it (OLM's attenuation: it may grant only what it holds)."""
    _, targets = group_targets(groups)
    scopes = [""] if "" in targets else (targets or [namespace])
    rights: dict[Right, None] = {}
    for index, manifest in enumerate(manifests):
        kind = str(manifest.get("kind") or "")
        if kind in _STEP_RESOURCES and not (index < len(done) and done[index]):
            group, resource = _STEP_RESOURCES[kind]
            where = "" if kind in CLUSTER_KINDS else namespace
            rights[Right("create", group, resource, where)] = None
        if kind == "ClusterServiceVersion":
            for entry in _entries(manifest, "permissions"):
                for rule in _rules(entry):
                    rights.update(dict.fromkeys(_rule_rights(rule, scopes)))
            for entry in _entries(manifest, "clusterPermissions"):
                for rule in _rules(entry):
                    rights.update(dict.fromkeys(_rule_rights(rule, [""])))
    return list(rights)[:MAX_RIGHTS]


def lacking_message(lacking: Sequence[Right], ref: Mapping[str, Any], group_name: str = "") -> str:
    """What the scoped group's ServiceAccount lacks, all of it, and how to grant it."""
    sa, sa_ns = str(ref.get("name", "")), str(ref.get("namespace", ""))
    who = f"ServiceAccount {sa_ns}/{sa}" + (
        f" (spec.serviceAccountName of OperatorGroup {group_name})" if group_name else ""
    )
    # One line per (resource, name, scope): its verbs together, as a Role rule says them.
    verbs: dict[tuple[str, str, str, str], list[str]] = {}
    for right in lacking:
        key = (right.group, right.resource, right.name, right.namespace)
        verbs.setdefault(key, []).append(right.verb)
    described = "; ".join(
        f"{','.join(vs)} on {f'{resource}.{group}' if group else resource}"
        + (f" named {name}" if name else "")
        + (f" in namespace {namespace}" if namespace else " at the cluster scope")
        for (group, resource, name, namespace), vs in sorted(verbs.items())
    )
    return (
        f"{RETRYING_PREFIX}{who} lacks rights this InstallPlan needs, and may grant an operator "
        f"only rights it holds itself: {described}. Nothing of this plan was applied. Grant "
        "them (a Role and RoleBinding in the namespace; a ClusterRole and ClusterRoleBinding "
        f"for those at the cluster scope) to the ServiceAccount, e.g. kubectl create role "
        f"... && kubectl create rolebinding ... --serviceaccount={sa_ns}:{sa}. The InstallPlan "
        "retries by itself once they are granted"
    )


def tenancy_check(
    admin_namespaces: frozenset[str],
    plan: Mapping[str, Any],
    manifests: Sequence[Mapping[str, Any]],
    groups: Sequence[Mapping[str, Any]],
    access: Mapping[Right, bool] | None,
    ref: Mapping[str, Any] | None,
) -> tuple[bool, str] | None:
    """(True, why the plan fails) for a tenant's plan asking too much; (False, what the
    scoped group's ServiceAccount lacks) while it lacks rights (`access` holds the answers the
    controller got, None when it asked none); None to go on installing."""
    if not admin_namespaces:
        return None
    namespace = body.namespace(plan)
    refused = tenant_refusal(namespace, manifests, groups, admin_namespaces)
    if refused is not None:
        return True, refused
    lacking = [right for right, allowed in (access or {}).items() if not allowed]
    if lacking and ref:
        return False, lacking_message(lacking, ref, group_targets(groups)[0])
    return None
