"""InstallPlan phases, step statuses, condition types and reasons, as OLM v0 names them
(operator-framework/api `v1alpha1/installplan_types.go`; olm-behaviour.md §1.3, §5.4).

Closed sets: the InstallPlan controller never writes a phase, step status, condition type or
reason that is not listed here.
"""

from __future__ import annotations

from enum import StrEnum


class InstallPlanPhase(StrEnum):
    NONE = ""
    PLANNING = "Planning"  # defined by OLM, never set
    REQUIRES_APPROVAL = "RequiresApproval"
    INSTALLING = "Installing"
    COMPLETE = "Complete"
    FAILED = "Failed"


class StepStatus(StrEnum):
    UNKNOWN = "Unknown"
    NOT_PRESENT = "NotPresent"
    PRESENT = "Present"
    CREATED = "Created"
    NOT_CREATED = "NotCreated"
    WAITING_FOR_API = "WaitingForApi"
    UNSUPPORTED_RESOURCE = "UnsupportedResource"


class InstallPlanConditionType(StrEnum):
    RESOLVED = "Resolved"
    INSTALLED = "Installed"


class InstallPlanReason(StrEnum):
    PLAN_UNKNOWN = "PlanUnknown"
    INSTALL_CHECK_FAILED = "InstallCheckFailed"
    DEPENDENCIES_CONFLICT = "DependenciesConflict"
    INSTALL_COMPONENT_FAILED = "InstallComponentFailed"


class InstallPlanEventReason(StrEnum):
    """Reasons of Events OLM records on an InstallPlan beyond its condition reasons."""

    APPLIED_WITH_WARNINGS = "AppliedWithWarnings"  # a step met API server warnings


class Approval(StrEnum):
    AUTOMATIC = "Automatic"
    MANUAL = "Manual"


class ConditionStatus(StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


# A plan in one of these phases never runs again (OLM: Complete and Failed are terminal).
TERMINAL_PHASES = frozenset({InstallPlanPhase.COMPLETE, InstallPlanPhase.FAILED})
# A step in one of these statuses is done; OLM skips it on later passes.
DONE_STEP_STATUSES = frozenset({StepStatus.PRESENT, StepStatus.CREATED})
# A plan gives up waiting for its CRDs to be Established after this long (olm-py's deadline).
API_DEADLINE_SECONDS = 300
