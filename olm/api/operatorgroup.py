"""OperatorGroup condition types, reasons and upgrade strategies, as OLM v0 names them.

Closed sets (operator-framework/api `v1/operatorgroup_types.go`, olm-behaviour.md §1.5). olm-py
adds a few condition types and reasons of its own, for bad input OLM leaves unexplained; they
are listed in `OLM_PY_CONDITION_TYPES` / `OLM_PY_REASONS` and in docs/differences.md.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ConditionStatus(StrEnum):
    """metav1.ConditionStatus."""

    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class OperatorGroupConditionType(StrEnum):
    # OLM's constant is spelled MutlipleOperatorGroupCondition; its value is this.
    MULTIPLE_OPERATOR_GROUP = "MultipleOperatorGroup"
    SERVICE_ACCOUNT = "OperatorGroupServiceAccount"
    # olm-py: spec.targetNamespaces names namespaces that do not exist (OLM says nothing).
    MISSING_TARGET_NAMESPACES = "MissingTargetNamespaces"
    # olm-py: spec.targetNamespaces holds "" (OLM only logs an error and stops syncing).
    INVALID_TARGET_NAMESPACES = "InvalidTargetNamespaces"


class OperatorGroupReason(StrEnum):
    MULTIPLE_OPERATOR_GROUPS_FOUND = "MultipleOperatorGroupsFound"
    SERVICE_ACCOUNT_NOT_FOUND = "ServiceAccountNotFound"
    TARGET_NAMESPACE_NOT_FOUND = "TargetNamespaceNotFound"
    EMPTY_TARGET_NAMESPACE = "EmptyTargetNamespace"


OLM_PY_CONDITION_TYPES = frozenset(
    {
        OperatorGroupConditionType.MISSING_TARGET_NAMESPACES,
        OperatorGroupConditionType.INVALID_TARGET_NAMESPACES,
    }
)
OLM_PY_REASONS = frozenset(
    {OperatorGroupReason.TARGET_NAMESPACE_NOT_FOUND, OperatorGroupReason.EMPTY_TARGET_NAMESPACE}
)

# OLM's message for MultipleOperatorGroup, kept as the start of ours.
MULTIPLE_OPERATOR_GROUPS_MESSAGE = "Multiple OperatorGroup found in the same namespace"


class UpgradeStrategy(StrEnum):
    """spec.upgradeStrategy: a string in OLM v0.38's API (an early API had `{name: ...}`)."""

    DEFAULT = "Default"
    UNSAFE_FAIL_FORWARD = "TechPreviewUnsafeFailForward"


def upgrade_strategy(group: dict[str, Any]) -> UpgradeStrategy:
    """The group's upgrade strategy; anything but TechPreviewUnsafeFailForward is Default, as
    in OLM. The object form `{name: ...}` (older olm-py CRDs, early OLM docs) is read too."""
    value = (group.get("spec") or {}).get("upgradeStrategy")
    if isinstance(value, dict):
        value = value.get("name")
    return (
        UpgradeStrategy.UNSAFE_FAIL_FORWARD
        if value == UpgradeStrategy.UNSAFE_FAIL_FORWARD
        else UpgradeStrategy.DEFAULT
    )
