"""Where each kind lives in the API server's REST tree (apiVersion + kind -> URL path).

Invariant: one table for the real gateway and its in-memory fake; kinds the table does not
know are added by `register_resource` or, in the real gateway, learnt from discovery.
"""

from __future__ import annotations

from olm.api.kinds import KINDS

# (apiVersion, kind) -> (plural, namespaced) for every kind olm-py reads or writes.
RESOURCES: dict[tuple[str, str], tuple[str, bool]] = {
    ("apps/v1", "Deployment"): ("deployments", True),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
    ("v1", "Namespace"): ("namespaces", False),
    ("v1", "Event"): ("events", True),
    ("v1", "Pod"): ("pods", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("discovery.k8s.io/v1", "EndpointSlice"): ("endpointslices", True),
    ("rbac.authorization.k8s.io/v1", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("rolebindings", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("clusterrolebindings", False),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    **{
        (info.api_version, info.kind.value): (info.plural, info.namespaced)
        for info in KINDS.values()
    },
}


def register_resource(api_version: str, kind: str, plural: str, namespaced: bool) -> None:
    """Teach the gateway a kind it does not know (e.g. an operator's own CRD)."""
    RESOURCES[(api_version, kind)] = (plural, namespaced)


def api_prefix(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def path_for(api_version: str, kind: str, namespace: str | None, name: str | None = None) -> str:
    plural, namespaced = RESOURCES[(api_version, kind)]
    scope = f"/namespaces/{namespace}" if namespaced and namespace else ""
    return f"{api_prefix(api_version)}{scope}/{plural}" + (f"/{name}" if name else "")


def parse_list_path(path: str) -> tuple[str, str, str | None]:
    """(apiVersion, plural, namespace or None) of a list path such as
    /api/v1/namespaces/ns/pods or /apis/apps/v1/deployments."""
    parts = [p for p in path.split("?")[0].split("/") if p]
    if parts[:2] == ["api", "v1"]:
        api_version, rest = "v1", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        api_version, rest = f"{parts[1]}/{parts[2]}", parts[3:]
    else:
        raise ValueError(f"not a list path: {path}")
    if len(rest) == 1:
        return api_version, rest[0], None
    if len(rest) == 3 and rest[0] == "namespaces":
        return api_version, rest[2], rest[1]
    raise ValueError(f"not a list path: {path}")


def kind_for(api_version: str, plural: str) -> str | None:
    """The kind served at `plural` in `api_version`, if the table knows it."""
    for (version, kind), (name, _) in RESOURCES.items():
        if version == api_version and name == plural:
            return kind
    return None
