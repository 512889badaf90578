"""ClusterServiceVersion phases, reasons and requirement statuses, as OLM v0 names them.

Closed sets: controllers never write a phase or reason that is not listed here.
"""

from __future__ import annotations

from enum import StrEnum


class CsvPhase(StrEnum):
    NONE = ""
    PENDING = "Pending"
    INSTALL_READY = "InstallReady"
    INSTALLING = "Installing"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    UNKNOWN = "Unknown"
    REPLACING = "Replacing"
    DELETING = "Deleting"


class CsvReason(StrEnum):
    REQUIREMENTS_UNKNOWN = "RequirementsUnknown"
    REQUIREMENTS_NOT_MET = "RequirementsNotMet"
    ALL_REQUIREMENTS_MET = "AllRequirementsMet"
    OWNER_CONFLICT = "OwnerConflict"
    INSTALL_COMPONENT_FAILED = "InstallComponentFailed"
    INSTALL_COMPONENT_FAILED_NO_RETRY = "InstallComponentFailedNoRetry"
    INVALID_INSTALL_STRATEGY = "InvalidInstallStrategy"
    INSTALL_WAITING = "InstallWaiting"
    INSTALL_SUCCEEDED = "InstallSucceeded"
    INSTALL_CHECK_FAILED = "InstallCheckFailed"
    COMPONENT_UNHEALTHY = "ComponentUnhealthy"
    BEING_REPLACED = "BeingReplaced"
    REPLACED = "Replaced"
    NEEDS_REINSTALL = "NeedsReinstall"
    NEEDS_CERT_ROTATION = "NeedsCertRotation"
    API_SERVICE_RESOURCE_ISSUE = "APIServiceResourceIssue"
    API_SERVICE_RESOURCES_NEED_REINSTALL = "APIServiceResourcesNeedReinstall"
    API_SERVICE_INSTALL_FAILED = "APIServiceInstallFailed"
    COPIED = "Copied"
    INVALID_INSTALL_MODES = "InvalidInstallModes"
    NO_TARGET_NAMESPACES = "NoTargetNamespaces"
    UNSUPPORTED_OPERATOR_GROUP = "UnsupportedOperatorGroup"
    NO_OPERATOR_GROUP = "NoOperatorGroup"
    TOO_MANY_OPERATOR_GROUPS = "TooManyOperatorGroups"
    INTER_OPERATOR_GROUP_OWNER_CONFLICT = "InterOperatorGroupOwnerConflict"
    CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS = (
        "CannotModifyStaticOperatorGroupProvidedAPIs"
    )
    DETECTED_CLUSTER_CHANGE = "DetectedClusterChange"
    INVALID_WEBHOOK_DESCRIPTION = "InvalidWebhookDescription"
    OPERATOR_CONDITION_NOT_UPGRADEABLE = "OperatorConditionNotUpgradeable"
    WAITING_ON_CLEANUP = "WaitingOnCleanup"


class RequirementState(StrEnum):
    PRESENT = "Present"
    NOT_PRESENT = "NotPresent"
    PRESENT_NOT_SATISFIED = "PresentNotSatisfied"
    PRESENT_NOT_AVAILABLE = "PresentNotAvailable"
    DEPLOYMENT_FOUND = "DeploymentFound"
    DEPLOYMENT_NOT_FOUND = "DeploymentNotFound"


class RuleState(StrEnum):
    SATISFIED = "Satisfied"
    NOT_SATISFIED = "NotSatisfied"


# Reasons after which a Failed CSV is re-checked from Pending once the group problem is gone.
GROUP_FAILURE_REASONS = frozenset(
    {
        CsvReason.NO_OPERATOR_GROUP,
        CsvReason.TOO_MANY_OPERATOR_GROUPS,
        CsvReason.UNSUPPORTED_OPERATOR_GROUP,
        CsvReason.NO_TARGET_NAMESPACES,
        CsvReason.INVALID_INSTALL_MODES,
    }
)

# OLM keeps the newest 20 entries of status.conditions.
CONDITION_HISTORY_LIMIT = 20
# Installing gives up after this long without becoming healthy (OLM: 5 minutes).
INSTALL_TIMEOUT_SECONDS = 300
