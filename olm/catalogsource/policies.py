"""Registry NetworkPolicies: the two NetworkPolicies OLM v0.38's catalog operator keeps beside
every registry it runs for a CatalogSource, and whether one found in the cluster is as it
should be.

For a ConfigMap (or `internal`) catalog and an image catalog (`spec.image`, no address), OLM's
registry reconciler writes, in the catalog's namespace, owned by the CatalogSource (not as
controller) and labelled `olm.managed: "true"` and `olm.catalogSource: <name>`:
- `<name>-grpc-server`: the registry pod (selected by the labels OLM gives it) may be reached on
  TCP 50051; a ConfigMap catalog's pod may also reach the API server (TCP 6443);
- `<name>-unpack-bundles`: the bundle unpack pods (label `operatorframework.io/bundle-unpack-ref`
  present, `olm.managed` in ["true"]) may reach the API server (TCP 6443) and nothing else.
An address catalog (`spec.address`) gets none: OLM runs no registry for it.

Invariants:
- pure: the bodies and the comparisons depend on the CatalogSource alone;
- a policy is as it should be when its spec equals the wanted one (empty lists and absent
  fields alike) and it carries at least the wanted labels, as OLM compares them; otherwise
  it is deleted and created again (`policy_actions`), as OLM does, so hand edits are reverted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.catalogsource import CATALOG_SOURCE_LABEL, REGISTRY_PORT, SourceType
from olm.api.kinds import KINDS, Kind
from olm.api.labels import MANAGED_VALUE, Label
from olm.api.views import owner_reference

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
NETWORK_POLICY_API_VERSION = "networking.k8s.io/v1"
GRPC_SERVER_SUFFIX = "-grpc-server"
UNPACK_BUNDLES_SUFFIX = "-unpack-bundles"
# The API server port OLM lets registry and unpack pods reach.
API_SERVER_PORT = 6443
# The label OLM puts on a bundle unpack pod (the bundle's reference) and on a ConfigMap
# catalog's registry pod (the ConfigMap's resourceVersion it serves).
BUNDLE_UNPACK_REF_LABEL = "operatorframework.io/bundle-unpack-ref"
CONFIGMAP_RV_LABEL = "olm.configMapResourceVersion"


def has_registry(source: Mapping[str, Any]) -> bool:
    """Whether OLM runs a registry (pod, Service, policies) for this CatalogSource."""
    spec = source.get("spec") or {}
    kind = spec.get("sourceType")
    if kind in (SourceType.CONFIGMAP, SourceType.INTERNAL):
        return bool(spec.get("configMap"))
    return kind == SourceType.GRPC and bool(spec.get("image")) and not spec.get("address")


def _configmap_backed(source: Mapping[str, Any]) -> bool:
    return (source.get("spec") or {}).get("sourceType") in (
        SourceType.CONFIGMAP,
        SourceType.INTERNAL,
    )


def registry_pod_labels(source: Mapping[str, Any]) -> dict[str, str]:
    """The labels OLM gives a CatalogSource's registry pod (a ConfigMap catalog's also names the
    resourceVersion of the ConfigMap it serves)."""
    labels = {CATALOG_SOURCE_LABEL: body.name(source), Label.MANAGED.value: MANAGED_VALUE}
    if _configmap_backed(source):
        reference = (source.get("status") or {}).get("configMapReference") or {}
        labels[CONFIGMAP_RV_LABEL] = str(reference.get("resourceVersion") or "")
    return labels


def _port(port: int) -> dict[str, Any]:
    return {"protocol": "TCP", "port": port}


def _policy(source: Mapping[str, Any], suffix: str, spec: dict[str, Any]) -> dict[str, Any]:
    meta = body.meta(source)
    name = str(meta.get("name", ""))
    return {
        "apiVersion": NETWORK_POLICY_API_VERSION,
        "kind": "NetworkPolicy",
        "metadata": {
            "name": f"{name}{suffix}",
            "namespace": meta.get("namespace"),
            "labels": {Label.MANAGED.value: MANAGED_VALUE, CATALOG_SOURCE_LABEL: name},
            "ownerReferences": [owner_reference(source, kind=CATALOG_SOURCE)],
        },
        "spec": spec,
    }


def grpc_server_policy(source: Mapping[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "podSelector": {"matchLabels": registry_pod_labels(source)},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"ports": [_port(REGISTRY_PORT)]}],
    }
    if _configmap_backed(source):
        spec["egress"] = [{"ports": [_port(API_SERVER_PORT)]}]
    return _policy(source, GRPC_SERVER_SUFFIX, spec)


def unpack_bundles_policy(source: Mapping[str, Any]) -> dict[str, Any]:
    spec = {
        "podSelector": {
            "matchExpressions": [
                {"key": BUNDLE_UNPACK_REF_LABEL, "operator": "Exists"},
                {"key": Label.MANAGED.value, "operator": "In", "values": [MANAGED_VALUE]},
            ]
        },
        "policyTypes": ["Ingress", "Egress"],
        "egress": [{"ports": [_port(API_SERVER_PORT)]}],
    }
    return _policy(source, UNPACK_BUNDLES_SUFFIX, spec)


def wanted_policies(source: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The NetworkPolicies OLM keeps for this CatalogSource (none for an address catalog)."""
    if not has_registry(source):
        return []
    return [grpc_server_policy(source), unpack_bundles_policy(source)]


def _normal(value: Any) -> Any:
    """`value` with empty lists, empty maps and None dropped (the API server leaves out what is
    empty, a client may write it): what a semantic comparison of two specs compares."""
    if isinstance(value, Mapping):
        kept = {k: _normal(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v not in (None, [], {})}
    if isinstance(value, list):
        return [_normal(item) for item in value]
    return value


def policy_matches(wanted: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    """Whether `found` is as `wanted` says: the same spec, and at least the wanted labels."""
    if _normal(wanted.get("spec")) != _normal(found.get("spec")):
        return False
    labels = body.labels(found)
    return all(labels.get(k) == v for k, v in body.labels(wanted).items())


@dataclass(frozen=True)
class PolicyAction:
    """Write `policy`; `replace`: delete the one found first (it differs from it)."""

    policy: dict[str, Any]
    replace: bool = False


def policy_actions(
    source: Mapping[str, Any], found: Mapping[str, Mapping[str, Any]]
) -> list[PolicyAction]:
    """What to do so the CatalogSource's policies are as OLM keeps them; `found` holds the
    policies of its namespace by name (those that exist)."""
    actions = []
    for policy in wanted_policies(source):
        current = found.get(policy["metadata"]["name"])
        if current is None:
            actions.append(PolicyAction(policy))
        elif not policy_matches(policy, current):
            actions.append(PolicyAction(policy, replace=True))
    return actions
