"""ClusterRoles that let namespace users use an operator's APIs (OLM v0 `operatorgroup.go`
ensureClusterRolesForCSV / ensureProvidedAPIClusterRole / ensureOpGroupClusterRoles /
getClusterRoleName / getClusterRoleAggregationRule, `operatorGroupDeleted`).

Per provided API, once the CSV is Succeeded:
- owned CRD `<plural>.<group>` at version v: ClusterRoles `<plural>.<group>-<v>-admin|edit|view`
  (verbs `*` | create,update,patch,delete | get,list,watch on `{apiGroups:[group],
  resources:[plural]}`) and `<plural>.<group>-<v>-crdview` (get on that one
  customresourcedefinition);
- owned APIService (group, version, kind, name=plural): `<name>-<v>-admin|edit|view` on
  `{apiGroups:[group], resources:[name]}`;
- labels `rbac.authorization.k8s.io/aggregate-to-<suffix>: "true"` (so Kubernetes' admin, edit
  and view roles include them), `olm.opgroup.permissions/aggregate-to-<fnv64a(Kind.version.group)
  >-<suffix>: "true"` (so the group's roles below include them) and `olm.managed: "true"`; the
  crdview role counts as `view`;
- one non-blocking, non-controller ownerReference to the CRD or APIService (not to the CSV), so
  the roles live as long as the API does.

Per OperatorGroup, three aggregation ClusterRoles `olm.og.<group>.<admin|edit|view>-<hash>`
(hash = base62 of sha224("<ns>/<group>/<suffix>"), the group name cut so the whole fits 253
characters), labelled with the group as owner (`olm.owner*`, kind OperatorGroup) and
`olm.managed`, no ownerReference, no rules of their own: an `aggregationRule` selecting, per API
the group provides (its CSVs' owned APIs plus its `olm.providedAPIs`), the per-API roles of that
level; no aggregationRule at all when it provides nothing. They are deleted with the group.

Invariants: pure; names, labels, rules and selector order are OLM's exactly (selectors sorted by
label key, so the object is byte-stable).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.gohash import base62
from olm.api.kinds import Kind
from olm.api.labels import Annotation, Label
from olm.api.scope import (
    CRD_VIEW_INFIX,
    KUBE_AGGREGATE_TO_PREFIX,
    KUBE_NAME_LIMIT,
    OPERATOR_GROUP_CLUSTER_ROLE_PREFIX,
    OPGROUP_AGGREGATE_TO_PREFIX,
    VERBS_FOR_SUFFIX,
    RoleSuffix,
)
from olm.api.views import CsvView, Gvk
from olm.scope.copies import is_copied

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
CRD_API_VERSION = "apiextensions.k8s.io/v1"
# OLM sets the CRD owner's kind by hand, in lower case (SetGroupVersionKind(...WithKind(
# "customresourcedefinition"))), and writes it into the ownerReference as is.
CRD_OWNER_KIND = "customresourcedefinition"
API_SERVICE_API_VERSION = "apiregistration.k8s.io/v1"
API_SERVICE_KIND = "APIService"
OPERATOR_GROUP_KIND = Kind.OPERATOR_GROUP.value

_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3


def fnv64a(text: str) -> str:
    """FNV-1a 64 of the UTF-8 bytes, as lower-case hex without padding (Go's `%x`)."""
    value = _FNV64_OFFSET
    for byte in text.encode():
        value = ((value ^ byte) * _FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
    return format(value, "x")


def gvk_hash(gvk: Gvk) -> str:
    """OLM's APIKeyToGVKHash: fnv64a of `Kind.version.group`."""
    return fnv64a(gvk.provided_api)


def aggregation_label(gvk: Gvk, suffix: RoleSuffix) -> str:
    return f"{OPGROUP_AGGREGATE_TO_PREFIX}{gvk_hash(gvk)}-{suffix.value}"


def parse_provided_apis(value: str | None) -> frozenset[Gvk]:
    """An `olm.providedAPIs` value as OLM reads it (GVKStringToProvidedAPISet): spaces dropped,
    split on ",", each entry `Kind.version.group` (entries with fewer than three parts are
    skipped)."""
    apis = set()
    for entry in (value or "").replace(" ", "").split(","):
        parts = entry.split(".", 2)
        if len(parts) == 3:
            apis.add(Gvk(parts[2], parts[1], parts[0]))
    return frozenset(apis)


def format_provided_apis(apis: Iterable[Gvk]) -> str:
    """An API set as the `olm.providedAPIs` value: sorted `Kind.version.group`, comma-joined."""
    return ",".join(sorted(api.provided_api for api in apis))


def provided_apis(csv: Mapping[str, Any]) -> frozenset[Gvk]:
    """The APIs a CSV provides: its owned CRDs and owned APIServices."""
    return CsvView.of(csv).owned_gvks


# --- per-API ClusterRoles ---------------------------------------------------------------------


def _owner(api_version: str, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = body.meta(obj)
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "controller": False,
        "blockOwnerDeletion": False,
    }


def _api_role(
    name: str,
    suffix: RoleSuffix,
    rule: dict[str, Any],
    gvk: Gvk,
    owner: dict[str, Any],
) -> dict[str, Any]:
    return {
        "apiVersion": RBAC_API_VERSION,
        "kind": "ClusterRole",
        "metadata": {
            "name": name,
            "labels": {
                f"{KUBE_AGGREGATE_TO_PREFIX}{suffix.value}": "true",
                aggregation_label(gvk, suffix): "true",
                Label.MANAGED.value: "true",
            },
            "ownerReferences": [owner],
        },
        "rules": [rule],
    }


def _rule(
    verbs: Iterable[str], group: str, resource: str, names: list[str] | None = None
) -> dict[str, Any]:
    rule: dict[str, Any] = {"verbs": list(verbs), "apiGroups": [group], "resources": [resource]}
    if names:
        rule["resourceNames"] = names
    return rule


@dataclass
class ApiRolesPlan:
    apply: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # messages: the CRD/APIService is not there


def provided_api_cluster_roles(
    csv: Mapping[str, Any],
    crds: Mapping[str, Mapping[str, Any]],
    api_services: Mapping[str, Mapping[str, Any]],
) -> ApiRolesPlan:
    """The per-API ClusterRoles for a Succeeded CSV. `crds` and `api_services` map object names
    to the objects (their metadata uid is what the roles are owned by)."""
    view = CsvView.of(csv)
    plan = ApiRolesPlan()
    for owned in view.owned_crds:
        crd = crds.get(owned.name)
        if "." not in owned.name:
            plan.missing.append(
                f"spec.customresourcedefinitions.owned name {owned.name!r} is not <plural>.<group>"
            )
            continue
        if crd is None:
            plan.missing.append(f"crd {owned.name!r} not found")
            continue
        owner = _owner(CRD_API_VERSION, CRD_OWNER_KIND, crd)
        prefix = f"{owned.name}-{owned.version}-"
        for suffix in RoleSuffix:
            plan.apply.append(
                _api_role(
                    prefix + suffix.value,
                    suffix,
                    _rule(VERBS_FOR_SUFFIX[suffix], owned.group, owned.plural),
                    owned.gvk,
                    owner,
                )
            )
        plan.apply.append(
            _api_role(
                prefix + CRD_VIEW_INFIX + RoleSuffix.VIEW.value,
                RoleSuffix.VIEW,
                _rule(["get"], "apiextensions.k8s.io", "customresourcedefinitions", [owned.name]),
                owned.gvk,
                owner,
            )
        )
    for service in view.owned_api_services:
        obj = api_services.get(service.api_service_name)
        if obj is None:
            plan.missing.append(f"apiservice {service.api_service_name!r} not found")
            continue
        owner = _owner(API_SERVICE_API_VERSION, API_SERVICE_KIND, obj)
        prefix = f"{service.name}-{service.version}-"
        for suffix in RoleSuffix:
            plan.apply.append(
                _api_role(
                    prefix + suffix.value,
                    suffix,
                    _rule(VERBS_FOR_SUFFIX[suffix], service.group, service.name),
                    service.gvk,
                    owner,
                )
            )
    return plan


# --- per-OperatorGroup aggregation ClusterRoles -----------------------------------------------


def operator_group_cluster_role_name(namespace: str, name: str, suffix: RoleSuffix) -> str:
    """`olm.og.<name>.<suffix>-<base62 sha224>`, the group name cut to fit 253 characters."""
    digest = hashlib.sha224(f"{namespace}/{name}/{suffix.value}".encode()).digest()
    tail = base62(int.from_bytes(digest, "big"))
    fixed = len(OPERATOR_GROUP_CLUSTER_ROLE_PREFIX) + len(".-")
    limit = KUBE_NAME_LIMIT - fixed - len(suffix.value) - len(tail)
    group_part = name if len(name) < limit else name[:limit]
    return f"{OPERATOR_GROUP_CLUSTER_ROLE_PREFIX}{group_part}.{suffix.value}-{tail}"


def operator_group_owner_labels(group: Mapping[str, Any]) -> dict[str, str]:
    meta = body.meta(group)
    return {
        Label.OWNER.value: str(meta.get("name") or ""),
        Label.OWNER_NAMESPACE.value: str(meta.get("namespace") or ""),
        Label.OWNER_KIND.value: OPERATOR_GROUP_KIND,
    }


def aggregation_rule(apis: Iterable[Gvk], suffix: RoleSuffix) -> dict[str, Any] | None:
    keys = sorted({aggregation_label(api, suffix) for api in apis})
    if not keys:
        return None
    return {"clusterRoleSelectors": [{"matchLabels": {key: "true"}} for key in keys]}


def group_apis(
    group: Mapping[str, Any], member_csvs: Iterable[Mapping[str, Any]]
) -> frozenset[Gvk]:
    """What the group's roles aggregate: the owned APIs of the CSVs in its namespace (copies are
    skipped) plus its `olm.providedAPIs` annotation."""
    annotations = body.annotations(group)
    apis = set(parse_provided_apis(annotations.get(Annotation.PROVIDED_APIS)))
    for csv in member_csvs:
        if not is_copied(csv):
            apis |= provided_apis(csv)
    return frozenset(apis)


def operator_group_cluster_roles(
    group: Mapping[str, Any], apis: Iterable[Gvk]
) -> list[dict[str, Any]]:
    """The group's admin, edit and view aggregation ClusterRoles. Apply them without `rules`:
    the aggregation controller owns that field."""
    meta = body.meta(group)
    namespace, name = str(meta.get("namespace") or ""), str(meta.get("name") or "")
    apis = list(apis)
    roles = []
    for suffix in RoleSuffix:
        role: dict[str, Any] = {
            "apiVersion": RBAC_API_VERSION,
            "kind": "ClusterRole",
            "metadata": {
                "name": operator_group_cluster_role_name(namespace, name, suffix),
                "labels": {**operator_group_owner_labels(group), Label.MANAGED.value: "true"},
            },
        }
        rule = aggregation_rule(apis, suffix)
        if rule is not None:
            role["aggregationRule"] = rule
        roles.append(role)
    return roles


def operator_group_cluster_roles_to_delete(
    namespace: str, name: str, cluster_roles: Iterable[Mapping[str, Any]]
) -> list[str]:
    """Names of the ClusterRoles a deleted group leaves behind (selected by owner labels)."""
    wanted = {
        Label.OWNER.value: name,
        Label.OWNER_NAMESPACE.value: namespace,
        Label.OWNER_KIND.value: OPERATOR_GROUP_KIND,
    }
    return sorted(
        str(body.meta(role).get("name"))
        for role in cluster_roles
        if all(body.labels(role).get(k) == v for k, v in wanted.items())
    )
