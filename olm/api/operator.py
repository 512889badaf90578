"""Vocabulary of OLM v0's `Operator` object (operators.coreos.com/v1, cluster-scoped): the kinds
that can be its components, what OLM's caches keep of each, and the shape of its status.

Sources (OLM v0.38.0): `pkg/controller/operators/components.go` (the component kinds, in this
order), `cmd/olm/manager.go` (the cache of each kind), `pkg/controller/operators/decorators/
operator.go` (the label selector and the conditions of a reference), operator-framework/api
`v1/operator_types.go` (`Condition`). docs/operators.md explains them; the completeness tests in
tests/unit/operator/test_vocabulary.py pin them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CacheFilter(StrEnum):
    """Which objects of a kind OLM's manager cache holds, so which the adoption and Operator
    controllers can see at all (`cmd/olm/manager.go`)."""

    ALL = "all"
    MANAGED = "managed"  # only objects labelled olm.managed=true
    NOT_COPIED = "not-copied"  # only objects without olm.copiedFrom (no copied CSVs)


@dataclass(frozen=True)
class ComponentKind:
    """One kind an Operator's components can be of."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    cache: CacheFilter
    # OLM lists these as metadata only, so their references never carry conditions.
    metadata_only: bool = False

    @property
    def ref(self) -> tuple[str, str]:
        return (self.api_version, self.kind)


RBAC = "rbac.authorization.k8s.io/v1"

# OLM's componentLists(), in its order.
COMPONENT_KINDS: tuple[ComponentKind, ...] = (
    ComponentKind("apps/v1", "Deployment", "deployments", True, CacheFilter.MANAGED),
    ComponentKind("v1", "Service", "services", True, CacheFilter.MANAGED),
    ComponentKind("v1", "Namespace", "namespaces", False, CacheFilter.ALL),
    ComponentKind(
        "apiregistration.k8s.io/v1", "APIService", "apiservices", False, CacheFilter.MANAGED
    ),
    ComponentKind(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        CacheFilter.MANAGED,
    ),
    ComponentKind(
        "operators.coreos.com/v1alpha1", "Subscription", "subscriptions", True, CacheFilter.ALL
    ),
    ComponentKind(
        "operators.coreos.com/v1alpha1", "InstallPlan", "installplans", True, CacheFilter.ALL
    ),
    ComponentKind(
        "operators.coreos.com/v1alpha1",
        "ClusterServiceVersion",
        "clusterserviceversions",
        True,
        CacheFilter.NOT_COPIED,
    ),
    ComponentKind(
        "operators.coreos.com/v2", "OperatorCondition", "operatorconditions", True, CacheFilter.ALL
    ),
    ComponentKind("v1", "Secret", "secrets", True, CacheFilter.ALL, metadata_only=True),
    ComponentKind("v1", "ConfigMap", "configmaps", True, CacheFilter.MANAGED, metadata_only=True),
    ComponentKind(
        "v1", "ServiceAccount", "serviceaccounts", True, CacheFilter.MANAGED, metadata_only=True
    ),
    ComponentKind(RBAC, "Role", "roles", True, CacheFilter.MANAGED, metadata_only=True),
    ComponentKind(
        RBAC, "RoleBinding", "rolebindings", True, CacheFilter.MANAGED, metadata_only=True
    ),
    ComponentKind(
        RBAC, "ClusterRole", "clusterroles", False, CacheFilter.MANAGED, metadata_only=True
    ),
    ComponentKind(
        RBAC,
        "ClusterRoleBinding",
        "clusterrolebindings",
        False,
        CacheFilter.MANAGED,
        metadata_only=True,
    ),
)
COMPONENTS_BY_KIND: dict[str, ComponentKind] = {c.kind: c for c in COMPONENT_KINDS}


def component(kind: str) -> ComponentKind:
    return COMPONENTS_BY_KIND[kind]


# status.components.labelSelector: one requirement, the component label key exists.
SELECTOR_EXISTS = "Exists"
# The fields OLM keeps of a component's condition (operators/v1 `Condition`); `type` and
# `status` are always written, the others only when not empty.
CONDITION_REQUIRED_FIELDS = ("type", "status")
CONDITION_OPTIONAL_FIELDS = ("reason", "message", "lastUpdateTime", "lastTransitionTime")
# A CSV's one synthetic condition: type = status.phase, status "True", and these of its status.
CSV_CONDITION_STATUS = "True"
