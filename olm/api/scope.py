"""Vocabulary of OLM v0's global-operator machinery: copied CSVs, the RBAC OLM derives from an
OperatorGroup's scope, the per-API and per-group aggregation ClusterRoles, and OLMConfig's
copied-CSV toggle.

Sources (OLM v0 `pkg/controller/operators/olm/operatorgroup.go`, `operator.go`, `groups.go`;
operator-framework/api `v1/operatorgroup_types.go`, `v1/olmconfig_types.go`,
`v1alpha1/clusterserviceversion.go`; olm-behaviour.md §4.5-4.7). Values are OLM's, byte for byte;
the completeness tests in tests/unit/scope/test_vocabulary.py pin them.
"""

from __future__ import annotations

from enum import StrEnum

from olm.api import labels


class RoleSuffix(StrEnum):
    """The three access levels of the per-API and per-OperatorGroup ClusterRoles."""

    ADMIN = "admin"
    EDIT = "edit"
    VIEW = "view"


# The verbs each level grants on a provided API (OLM's AdminVerbs / EditVerbs / ViewVerbs).
VERBS_FOR_SUFFIX: dict[RoleSuffix, tuple[str, ...]] = {
    RoleSuffix.ADMIN: ("*",),
    RoleSuffix.EDIT: ("create", "update", "patch", "delete"),
    RoleSuffix.VIEW: ("get", "list", "watch"),
}

# Label prefixes that wire the aggregation (each followed by a suffix, or `<hash>-<suffix>`).
KUBE_AGGREGATE_TO_PREFIX = "rbac.authorization.k8s.io/aggregate-to-"
OPGROUP_AGGREGATE_TO_PREFIX = "olm.opgroup.permissions/aggregate-to-"
# `olm.og.<group>.<suffix>-<base62 sha224("<ns>/<group>/<suffix>")>`, at most 253 characters.
OPERATOR_GROUP_CLUSTER_ROLE_PREFIX = "olm.og."
KUBE_NAME_LIMIT = 253
# The extra rule a Role gets when OLM lifts it to a ClusterRole for an AllNamespaces group.
NAMESPACES_VIEW_RULE: dict[str, list[str]] = {
    "verbs": ["get", "list", "watch"],
    "apiGroups": [""],
    "resources": ["namespaces"],
}
# The per-CRD read role's name ends in `crd` + `view`: `<plural>.<group>-<version>-crdview`.
CRD_VIEW_INFIX = "crd"


class CopyAnnotation(StrEnum):
    """Annotations OLM (since #3597) keeps on a copied CSV so it can tell, from metadata alone,
    whether the copy is in step with its original."""

    NON_STATUS_HASH = "olm.operatorframework.io/nonStatusCopyHash"
    STATUS_HASH = "olm.operatorframework.io/statusCopyHash"


# Labels with this prefix (`operators.coreos.com/<package>.<namespace>`) are not copied.
COMPONENT_LABEL_PREFIX = labels.COMPONENT_LABEL_PREFIX
# The status message of every copy.
COPIED_MESSAGE_TEMPLATE = "The operator is running in {namespace} but is managing this namespace"


class OlmConfigConditionType(StrEnum):
    DISABLED_COPIED_CSVS = "DisabledCopiedCSVs"


class OlmConfigReason(StrEnum):
    COPIED_CSVS_ENABLED = "CopiedCSVsEnabled"
    COPIED_CSVS_DISABLED = "CopiedCSVsDisabled"


# The singleton OLMConfig's name; a missing one means copied CSVs are on.
OLM_CONFIG_NAME = "cluster"
# Warning Event reason on an AllNamespaces CSV while copies are disabled ("CSV copying disabled
# for <ns>/<name>"); it equals the condition type.
DISABLED_COPIED_CSVS_EVENT_REASON = OlmConfigConditionType.DISABLED_COPIED_CSVS.value


class OlmConfigMessage(StrEnum):
    """OLM's `getCopiedCSVsCondition` messages."""

    ENABLED_PRESENT = "Copied CSVs are enabled and present across the cluster"
    ENABLED_MISSING = "Copied CSVs are enabled and at least one copied CSVs is missing"
    DISABLED_UNEXPECTED = (
        "Copied CSVs are disabled and at least one unexpected copied CSV was found for an "
        "operator installed in AllNamespace mode"
    )
    DISABLED_CLEAN = (
        "Copied CSVs are disabled and no unexpected copied CSVs were found for operators "
        "installed in AllNamespace mode"
    )


class ConflictMessage(StrEnum):
    """Status messages of OLM's provided-API checks (`transitionCSVState`)."""

    INTER_GROUP_CONFLICT = "intersecting operatorgroups provide the same apis"
    STATIC_GROUP = "static provided api operatorgroup cannot be modified by these apis"
    CONFLICT_RESOLVED = "OperatorGroup no longer intersecting with conflicting owner"
    STATIC_RESOLVED = "static OperatorGroup and intersecting groups now support providedAPIs"
    NO_OPERATOR_GROUP = "csv in namespace with no operatorgroups"
    TOO_MANY_OPERATOR_GROUPS = (
        "csv created in namespace with multiple operatorgroups, can't pick one automatically"
    )
