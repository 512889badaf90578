"""Step 1 of the namespace decision (OLM v0 §5.2 step 3, §5.5): a Subscription's status
as what exists says it is.

- CSV state (OLM's fix-up): a currentCSV that exists is installed (AtLatestKnown,
  installedCSV); one that does not is UpgradePending.
- The referenced InstallPlan (OLM's status reconciler): RequiresApproval/Installing/Planning
  or no phase yet -> InstallPlanPending (reason: the phase, or InstallPlanNotYetReconciled);
  Failed -> InstallPlanFailed (reason: the plan's Installed reason); Complete -> neither.
- A referenced plan that is gone -> InstallPlanMissing; when the Subscription was waiting on
  it, its reference and currentCSV are cleared so it is resolved again.

Invariants: pure; idempotent (settling a settled status changes nothing); conditions keep
their place in the list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.conditions import remove_conditions
from olm.api.installplan import ConditionStatus, InstallPlanPhase
from olm.api.planpolicy import SHARED_PLAN_ANNOTATION
from olm.api.subscription import SubscriptionConditionType, SubscriptionReason, SubscriptionState
from olm.subscription import plans as ip
from olm.subscription.snapshot import Snapshot
from olm.subscription.status import set_condition

Types = SubscriptionConditionType
Status = dict[str, Any]

PLAN_CONDITIONS = (
    Types.INSTALL_PLAN_MISSING,
    Types.INSTALL_PLAN_PENDING,
    Types.INSTALL_PLAN_FAILED,
)
PlanCondition = tuple[SubscriptionConditionType, str, str]  # (type, reason, message), True


def _plan_condition(reference: str, plan: Mapping[str, Any]) -> PlanCondition | None:
    """OLM's status reconciler: the referenced InstallPlan's phase as a condition."""
    phase = ip.phase(plan)
    if phase == InstallPlanPhase.NONE or phase in ip.PENDING_PHASES:
        reason = phase or SubscriptionReason.INSTALL_PLAN_NOT_YET_RECONCILED.value
        # The plan's own message only, as OLM: scripts (and OLM's e2e suite) match the
        # condition's message exactly, and a plan waiting for approval has none. A plan
        # olm-py's plan-per-subscription opt-in left joint says which Subscriptions share it.
        annotations = body.annotations(plan)
        shared = str(annotations.get(SHARED_PLAN_ANNOTATION) or "")
        return Types.INSTALL_PLAN_PENDING, reason, ip.plan_message(plan) or shared
    if phase == InstallPlanPhase.FAILED:
        installed = ip.installed_condition(plan)
        reason = (
            str(installed["reason"])
            if installed.get("status") == ConditionStatus.FALSE.value and installed.get("reason")
            else SubscriptionReason.INSTALL_PLAN_FAILED.value
        )
        why = ip.plan_message(plan) or str((plan.get("status") or {}).get("message") or "")
        message = (
            f"InstallPlan {reference} failed: {why}. Fix the cause, then delete the "
            "InstallPlan to try again"
        )
        return Types.INSTALL_PLAN_FAILED, reason, message
    return None  # Complete


def settle(status: Status, snapshot: Snapshot, plans: Mapping[str, Mapping[str, Any]]) -> Status:
    """The status as what exists says it is (OLM's CSV-state fixup and status reconciler)."""
    now, csvs = snapshot.now, snapshot.csvs
    status = dict(status)
    current = status.get("currentCSV")
    if current and current in csvs:
        status.update(state=SubscriptionState.AT_LATEST_KNOWN.value, installedCSV=current)
    elif current:
        status["state"] = SubscriptionState.UPGRADE_PENDING.value
    reference = ip.ref_name(status)
    plan = plans.get(reference) if reference else None
    keep_missing = not reference  # a reference cleared below keeps saying why
    wanted: PlanCondition | None = None
    if reference and plan is None:
        missing = SubscriptionReason.REFERENCED_INSTALL_PLAN_NOT_FOUND.value
        if status.get("state") == SubscriptionState.UPGRADE_PENDING.value:
            # The plan went away before it ran: say so, and resolve again from what is
            # installed (OLM clears the reference too).
            message = f"InstallPlan {reference} was deleted before it completed; resolving again"
            installed = status.get("installedCSV") if status.get("installedCSV") in csvs else None
            for key in ("installPlanRef", "installplan", "currentCSV", "state"):
                status.pop(key, None)
            if installed:
                status.update(currentCSV=installed, state=SubscriptionState.AT_LATEST_KNOWN.value)
        else:
            message = f"InstallPlan {reference} no longer exists"
        wanted = (Types.INSTALL_PLAN_MISSING, missing, message)
    elif plan is not None:
        wanted = _plan_condition(reference, plan)
    conditions = list(status.get("conditions") or [])
    for kind in PLAN_CONDITIONS:
        if wanted is not None and wanted[0] == kind:
            conditions = set_condition(
                conditions, kind, ConditionStatus.TRUE, wanted[1], wanted[2], now
            )
        elif not (keep_missing and kind == Types.INSTALL_PLAN_MISSING):
            conditions = remove_conditions(conditions, kind)
    status["conditions"] = conditions
    return status


def waiting(status: Mapping[str, Any], plans: Mapping[str, Mapping[str, Any]]) -> bool:
    """Waits on an InstallPlan that has a phase and has not failed (OLM's nothingToUpdate)."""
    plan = plans.get(ip.ref_name(status))
    return (
        plan is not None
        and ip.phase(plan) not in (InstallPlanPhase.NONE, InstallPlanPhase.FAILED)
        and status.get("state") == SubscriptionState.UPGRADE_PENDING.value
    )
