"""The InstallPlan phase machine (OLM v0 §5.4): a snapshot in, the writes and the status out.

Phases: a plan with no phase belongs to its Subscription (which writes the first status); a
plan nobody made that way (no Subscription owns it) fails with an explanation. RequiresApproval
waits for `spec.approved`; Installing runs the steps (`olm.installplan.installing`: CRDs, then
CSVs, then everything else, each stage on a fresh snapshot); Complete and Failed are terminal.
A plan that reached Complete or Failed, or that this process already finished
(`Snapshot.finished`), runs nothing at all.

Scoped installs (OLM's attenuated ServiceAccount): before a plan runs, the namespace's
OperatorGroups are asked which ServiceAccount it acts as (`olm.groups.serviceaccount`). The
answer goes to `status.attenuatedServiceAccountRef`, and the controller writes every step but
CRDs as that ServiceAccount. While the group is not usable (several groups, its ServiceAccount
not found) the plan keeps its phase with `Installed=False/InstallCheckFailed` and is looked at
again; a Forbidden answer keeps it Installing with "retrying execution due to error: ..." naming
what to grant (`olm.installplan.partial.forbidden`), as OLM does.
With the tenancy opt-in (`olm.installplan.tenancy`) a tenant's plan asking for more RBAC
than a tenant may give fails, and a scoped group's ServiceAccount that lacks rights the plan
needs (`Snapshot.access`) keeps it Installing the same way; both before the first write.

The data in and out (`Snapshot`, `Plan`) is in `olm.installplan.snapshot`; what a plan carried
out in part leaves in the status is in `olm.installplan.partial`.

Invariants: pure (reads only its argument); running it again over what it produced decides
nothing new; every failure a user can fix ends in `Failed` with a message naming the step or
the field, and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.conditions import find_condition, parse_timestamp
from olm.api.installplan import (
    TERMINAL_PHASES,
    ConditionStatus,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
)
from olm.groups.serviceaccount import query_service_account
from olm.installplan.handmade import (
    HAND_MADE_GRACE_SECONDS,
    hand_made_message,
    owned_by_subscription,
)
from olm.installplan.installing import install
from olm.installplan.snapshot import Plan, Snapshot, fail
from olm.installplan.status import ATTENUATED_REF, set_condition

# The namespace's OperatorGroup cannot say which ServiceAccount to act as: look again this soon.
GROUP_CHECK_RETRY_SECONDS = 2.0


def decide(snapshot: Snapshot) -> Plan:
    """What to write for one InstallPlan, by its phase (see the module docstring)."""
    plan = snapshot.plan
    status = plan.get("status") or {}
    phase = status.get("phase") or InstallPlanPhase.NONE.value
    if snapshot.finished or phase in TERMINAL_PHASES:
        return Plan()
    if phase == InstallPlanPhase.NONE:
        if owned_by_subscription(plan):
            return Plan()  # its Subscription writes the first status (and adopts it after a crash)
        created = parse_timestamp(body.meta(plan).get("creationTimestamp"))
        waited = (snapshot.now - created).total_seconds() if created is not None else None
        if waited is not None and waited < HAND_MADE_GRACE_SECONDS:
            # A tool (OLM's own e2e suite among them) may create a plan and then write its
            # status: give it the time to, before calling the plan hand-made.
            return Plan(requeue_after=HAND_MADE_GRACE_SECONDS - waited)
        return fail(
            {**status, "plan": []},
            hand_made_message(plan),
            snapshot.now,
            InstallPlanReason.PLAN_UNKNOWN,
        )
    if phase == InstallPlanPhase.REQUIRES_APPROVAL:
        if (plan.get("spec") or {}).get("approved") is True:
            return Plan(status={**status, "phase": InstallPlanPhase.INSTALLING.value}, again=True)
        return Plan()
    if phase == InstallPlanPhase.INSTALLING:
        scoped = _group_check(snapshot, status)
        if isinstance(scoped, Plan):
            return scoped
        return install(snapshot, scoped)
    return Plan()  # Planning (OLM never sets it) is not a state olm-py moves a plan out of


def _group_check(snapshot: Snapshot, status: Mapping[str, Any]) -> Plan | dict[str, Any]:
    """The status to install with (its attenuatedServiceAccountRef set or cleared, an old
    InstallCheckFailed condition gone), or the Plan that waits for the OperatorGroup."""
    ref, problem = query_service_account(snapshot.groups)
    conditions = list(status.get("conditions") or [])
    installed = find_condition(conditions, InstallPlanConditionType.INSTALLED)
    checking = bool(
        installed and installed.get("reason") == InstallPlanReason.INSTALL_CHECK_FAILED.value
    )
    if problem is not None:
        if checking and installed is not None and installed.get("message") == problem:
            return Plan(requeue_after=GROUP_CHECK_RETRY_SECONDS)
        new = {
            **status,
            "conditions": set_condition(
                conditions,
                InstallPlanConditionType.INSTALLED,
                ConditionStatus.FALSE,
                snapshot.now,
                InstallPlanReason.INSTALL_CHECK_FAILED,
                problem,
            ),
        }
        return Plan(
            status=new,
            requeue_after=GROUP_CHECK_RETRY_SECONDS,
            event=("Warning", InstallPlanReason.INSTALL_CHECK_FAILED.value, problem),
        )
    new = dict(status)
    if checking:
        new["conditions"] = [c for c in conditions if c is not installed]
        if not new["conditions"]:
            del new["conditions"]
    if ref is not None:
        new[ATTENUATED_REF] = ref
    else:
        new.pop(ATTENUATED_REF, None)
    return new
