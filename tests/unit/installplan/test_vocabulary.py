"""The InstallPlan vocabulary is exactly OLM v0's (operator-framework/api
`v1alpha1/installplan_types.go`, as listed in olm-behaviour.md §1.3)."""

from __future__ import annotations

from olm.api.installplan import (
    DONE_STEP_STATUSES,
    TERMINAL_PHASES,
    Approval,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
    StepStatus,
)

OLM_PHASES = {"", "Planning", "RequiresApproval", "Installing", "Complete", "Failed"}
OLM_STEP_STATUSES = {
    "Unknown",
    "NotPresent",
    "Present",
    "Created",
    "NotCreated",
    "WaitingForApi",
    "UnsupportedResource",
}
OLM_CONDITION_TYPES = {"Resolved", "Installed"}
OLM_REASONS = {
    "PlanUnknown",
    "InstallCheckFailed",
    "DependenciesConflict",
    "InstallComponentFailed",
}


def test_phases_are_exactly_olms() -> None:
    assert {p.value for p in InstallPlanPhase} == OLM_PHASES


def test_step_statuses_are_exactly_olms() -> None:
    assert {s.value for s in StepStatus} == OLM_STEP_STATUSES


def test_condition_types_and_reasons_are_exactly_olms() -> None:
    assert {t.value for t in InstallPlanConditionType} == OLM_CONDITION_TYPES
    assert {r.value for r in InstallPlanReason} == OLM_REASONS


def test_approvals_terminal_phases_and_done_steps() -> None:
    assert {a.value for a in Approval} == {"Automatic", "Manual"}
    assert {InstallPlanPhase.COMPLETE, InstallPlanPhase.FAILED} == TERMINAL_PHASES
    assert {StepStatus.PRESENT, StepStatus.CREATED} == DONE_STEP_STATUSES
