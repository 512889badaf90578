"""The scope vocabulary is exactly OLM v0's (operatorgroup.go, operator.go, operator-framework/api
v1/olmconfig_types.go and v1alpha1 clusterserviceversion.go)."""

from __future__ import annotations

from olm.api.scope import (
    COMPONENT_LABEL_PREFIX,
    COPIED_MESSAGE_TEMPLATE,
    DISABLED_COPIED_CSVS_EVENT_REASON,
    KUBE_AGGREGATE_TO_PREFIX,
    NAMESPACES_VIEW_RULE,
    OPGROUP_AGGREGATE_TO_PREFIX,
    VERBS_FOR_SUFFIX,
    ConflictMessage,
    CopyAnnotation,
    OlmConfigConditionType,
    OlmConfigMessage,
    OlmConfigReason,
    RoleSuffix,
)
from olm.scope.copies import UNCOPIABLE_REASONS


def test_role_levels_and_verbs_are_olms() -> None:
    assert {s.value for s in RoleSuffix} == {"admin", "edit", "view"}
    assert VERBS_FOR_SUFFIX == {
        RoleSuffix.ADMIN: ("*",),
        RoleSuffix.EDIT: ("create", "update", "patch", "delete"),
        RoleSuffix.VIEW: ("get", "list", "watch"),
    }
    assert NAMESPACES_VIEW_RULE == {
        "verbs": ["get", "list", "watch"],
        "apiGroups": [""],
        "resources": ["namespaces"],
    }


def test_label_and_annotation_keys_are_olms() -> None:
    assert KUBE_AGGREGATE_TO_PREFIX == "rbac.authorization.k8s.io/aggregate-to-"
    assert OPGROUP_AGGREGATE_TO_PREFIX == "olm.opgroup.permissions/aggregate-to-"
    assert COMPONENT_LABEL_PREFIX == "operators.coreos.com/"
    assert {a.value for a in CopyAnnotation} == {
        "olm.operatorframework.io/nonStatusCopyHash",
        "olm.operatorframework.io/statusCopyHash",
    }


def test_olm_config_vocabulary_is_olms() -> None:
    assert {t.value for t in OlmConfigConditionType} == {"DisabledCopiedCSVs"}
    assert {r.value for r in OlmConfigReason} == {"CopiedCSVsEnabled", "CopiedCSVsDisabled"}
    assert DISABLED_COPIED_CSVS_EVENT_REASON == "DisabledCopiedCSVs"
    assert len(set(OlmConfigMessage)) == 4


def test_messages_are_olms() -> None:
    assert COPIED_MESSAGE_TEMPLATE.format(namespace="operators") == (
        "The operator is running in operators but is managing this namespace"
    )
    assert (
        ConflictMessage.INTER_GROUP_CONFLICT == "intersecting operatorgroups provide the same apis"
    )
    assert ConflictMessage.TOO_MANY_OPERATOR_GROUPS == (
        "csv created in namespace with multiple operatorgroups, can't pick one automatically"
    )


def test_uncopiable_reasons_are_olms() -> None:
    assert {r.value for r in UNCOPIABLE_REASONS} == {
        "Copied",
        "InvalidInstallModes",
        "NoTargetNamespaces",
        "UnsupportedOperatorGroup",
        "NoOperatorGroup",
        "TooManyOperatorGroups",
        "InterOperatorGroupOwnerConflict",
        "CannotModifyStaticOperatorGroupProvidedAPIs",
    }
