"""The Operator vocabulary is OLM v0.38's: its component kinds in its order, what its caches
keep of each, the label prefix, and the fields of a component's condition."""

from __future__ import annotations

from olm.api import labels, scope
from olm.api.operator import (
    COMPONENT_KINDS,
    CONDITION_OPTIONAL_FIELDS,
    CONDITION_REQUIRED_FIELDS,
    CacheFilter,
    component,
)
from olm.controllers.operator import COMPONENT_OF_STORE, STORE_KIND
from olm.controllers.watch import WATCHED

# pkg/controller/operators/components.go componentLists(), in order; the typed lists first,
# then the metadata-only ones.
OLM_COMPONENT_LISTS = [
    ("apps/v1", "Deployment"),
    ("v1", "Service"),
    ("v1", "Namespace"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("operators.coreos.com/v1alpha1", "Subscription"),
    ("operators.coreos.com/v1alpha1", "InstallPlan"),
    ("operators.coreos.com/v1alpha1", "ClusterServiceVersion"),
    ("operators.coreos.com/v2", "OperatorCondition"),
    ("v1", "Secret"),
    ("v1", "ConfigMap"),
    ("v1", "ServiceAccount"),
    ("rbac.authorization.k8s.io/v1", "Role"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
]
# cmd/olm/manager.go: the cache ByObject label selectors.
OLM_MANAGED_ONLY = {
    "Deployment",
    "Service",
    "CustomResourceDefinition",
    "APIService",
    "ConfigMap",
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
}


def test_the_component_kinds_are_olms_in_its_order() -> None:
    assert [c.ref for c in COMPONENT_KINDS] == OLM_COMPONENT_LISTS


def test_the_caches_are_olms() -> None:
    assert {c.kind for c in COMPONENT_KINDS if c.cache is CacheFilter.MANAGED} == OLM_MANAGED_ONLY
    assert component("ClusterServiceVersion").cache is CacheFilter.NOT_COPIED
    rest = {"Namespace", "Subscription", "InstallPlan", "OperatorCondition", "Secret"}
    assert {c.kind for c in COMPONENT_KINDS if c.cache is CacheFilter.ALL} == rest


def test_metadata_only_kinds_are_the_partial_object_lists() -> None:
    assert [c.kind for c in COMPONENT_KINDS if c.metadata_only] == [
        kind for _, kind in OLM_COMPONENT_LISTS[9:]
    ]


def test_scope_is_right_for_every_kind() -> None:
    cluster = {"Namespace", "APIService", "CustomResourceDefinition", "ClusterRole"}
    cluster.add("ClusterRoleBinding")
    assert {c.kind for c in COMPONENT_KINDS if not c.namespaced} == cluster


def test_the_label_vocabulary() -> None:
    assert labels.COMPONENT_LABEL_PREFIX == "operators.coreos.com/"
    assert labels.COMPONENT_LABEL_VALUE == ""
    assert labels.COMPONENT_LABEL_NAME_LIMIT == 63
    assert labels.MANAGED_VALUE == "true"
    assert scope.COMPONENT_LABEL_PREFIX is labels.COMPONENT_LABEL_PREFIX  # one definition


def test_condition_fields_are_olms_condition_type() -> None:
    # operator-framework/api v1 operator_types.go Condition
    assert CONDITION_REQUIRED_FIELDS + CONDITION_OPTIONAL_FIELDS == (
        "type",
        "status",
        "reason",
        "message",
        "lastUpdateTime",
        "lastTransitionTime",
    )


def test_every_component_kind_is_watched_under_its_store_kind() -> None:
    watched = {w.kind: w for w in WATCHED}
    assert set(STORE_KIND) == {c.kind for c in COMPONENT_KINDS}
    for store_kind, kind in COMPONENT_OF_STORE.items():
        w = watched[store_kind]
        assert (w.group + "/" + w.version if w.group else w.version) == kind.api_version
        assert w.plural == kind.plural
    assert "operator" in watched and watched["operator"].plural == "operators"
