"""olm-py's version policies (beyond OLM) applied to one namespace's decision.

Three annotations of a Subscription (olm.api.versionpolicy) reach the Subscription
controller's decision here: `olm-py.io/auto-approve` approves a new Manual InstallPlan that
stays within its step size (olm.subscription.autoapprove); `olm-py.io/version-range`, already
applied by the resolver (olm.resolution.versionrange), is said on the Subscription as its
VersionHeld condition; `olm-py.io/rollback-to` (`olm rollback`), chosen by the resolver, is
checked here (a CRD written back must keep every stored version) and said in the Rollback
condition.

Invariants: pure; without either annotation nothing here changes a status, a plan or an Event.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from olm.api import body
from olm.api.conditions import find_condition, remove_conditions
from olm.api.csv import CsvPhase
from olm.api.installplan import ConditionStatus, InstallPlanPhase
from olm.api.planpolicy import SHARED_PLAN_ANNOTATION
from olm.api.subscription import SubscriptionConditionType
from olm.api.versionpolicy import (
    INVALID_AUTO_APPROVE_EVENT,
    INVALID_VERSION_RANGE_EVENT,
    ROLLBACK_ANNOTATION,
    ROLLBACK_PLAN_ANNOTATION,
    VERSION_RANGE_ANNOTATION,
    AutoApprove,
    OlmPyConditionType,
    RollbackReason,
    VersionHeldReason,
)
from olm.installplan.crdsafety import stored_versions_problem
from olm.installplan.steps import Step
from olm.resolution.model import Candidate
from olm.subscription.autoapprove import Move, approve_new_plan, invalid_message, policy_of
from olm.subscription.resolve import rollback_target
from olm.subscription.snapshot import NamespaceEvent, Snapshot
from olm.subscription.status import set_condition

WARNING = "Warning"


def _move(
    snapshot: Snapshot, statuses: Mapping[str, Mapping[str, Any]], name: str, to: Candidate
) -> Move:
    subscription = next(s for s in snapshot.subscriptions if s["metadata"]["name"] == name)
    installed = str(statuses[name].get("installedCSV") or "")
    version = str(((snapshot.csvs.get(installed) or {}).get("spec") or {}).get("version") or "")
    return Move(subscription, to.bundle, to.version, installed, version)


def auto_approve(
    snapshot: Snapshot,
    statuses: Mapping[str, Mapping[str, Any]],
    moved: Mapping[str, Candidate],
    body: dict[str, Any],
    dependencies: Sequence[str],
) -> list[NamespaceEvent]:
    """Approve the new Manual plan `body` when the moved Subscriptions' policies allow it;
    the Events that say so (or that a policy is not one)."""
    moves = [_move(snapshot, statuses, name, to) for name, to in moved.items()]
    return [NamespaceEvent(*event) for event in approve_new_plan(body, moves, dependencies)]


def auto_approve_condition(
    subscription: Mapping[str, Any], status: dict[str, Any], now: datetime.datetime
) -> None:
    """AutoApproveInvalid on a Subscription whose auto-approve value is not a policy (its
    plans then wait for a person, as Manual does); absent otherwise."""
    policy = policy_of(subscription)
    conditions = status.get("conditions") or []
    if not isinstance(policy, str) or isinstance(policy, AutoApprove):
        status["conditions"] = remove_conditions(
            conditions, OlmPyConditionType.AUTO_APPROVE_INVALID
        )
        return
    message = invalid_message(str(subscription["metadata"]["name"]), policy)
    status["conditions"] = set_condition(
        conditions,
        OlmPyConditionType.AUTO_APPROVE_INVALID,
        ConditionStatus.TRUE,
        INVALID_AUTO_APPROVE_EVENT,
        message,
        now,
    )


def version_held(
    snapshot: Snapshot,
    statuses: Mapping[str, dict[str, Any]],
    holds: Mapping[str, tuple[str, str]],
) -> list[NamespaceEvent]:
    """Set VersionHeld on each Subscription the resolver held to its range; a Warning Event
    when a range newly does not parse."""
    events = []
    for subscription in snapshot.subscriptions:
        name = subscription["metadata"]["name"]
        if name not in holds:
            continue
        reason, message = holds[name]
        status = statuses[name]
        before = find_condition(status.get("conditions") or [], OlmPyConditionType.VERSION_HELD)
        within = reason == VersionHeldReason.WITHIN_VERSION_RANGE.value
        status["conditions"] = set_condition(
            status.get("conditions") or [],
            OlmPyConditionType.VERSION_HELD,
            ConditionStatus.FALSE if within else ConditionStatus.TRUE,
            reason,
            message,
            snapshot.now,
        )
        invalid = reason == VersionHeldReason.INVALID_VERSION_RANGE.value
        if invalid and (before is None or before.get("message") != message):
            events.append(NamespaceEvent(WARNING, INVALID_VERSION_RANGE_EVENT, message))
    return events


def annotate_new_plan(
    body: dict[str, Any],
    shared_because: str,
    rollbacks: Mapping[str, Candidate],
    statuses: Mapping[str, Mapping[str, Any]],
) -> None:
    """What olm-py's opt-ins say on a new plan: why Subscriptions share it (plan per
    Subscription), which it moves back (`olm rollback`). Nothing without them."""
    annotations = {}
    if shared_because:
        annotations[SHARED_PLAN_ANNOTATION] = shared_because
    if rollbacks:
        annotations[ROLLBACK_PLAN_ANNOTATION] = "; ".join(
            f"{name}: {statuses[name].get('installedCSV')} -> {to.bundle}"
            for name, to in rollbacks.items()
        )
    if annotations:
        body["metadata"].setdefault("annotations", {}).update(annotations)


# ----- olm rollback ------------------------------------------------------------------------------


def is_rollback(subscription: Mapping[str, Any], to: Candidate) -> bool:
    target = rollback_target(subscription)
    return bool(target) and to.bundle == target


def rollback_plans(
    plans: Mapping[str, Mapping[str, Any]], unfinished: bool = False
) -> dict[str, Mapping[str, Any]]:
    """The plans `olm rollback` made; `unfinished`: only those not Complete or Failed (the
    only ones a new rollback may reuse: an earlier rollback's plan is history)."""
    finished = (InstallPlanPhase.COMPLETE.value, InstallPlanPhase.FAILED.value)
    return {
        name: plan
        for name, plan in plans.items()
        if ROLLBACK_PLAN_ANNOTATION in body.annotations(plan)
        and not (unfinished and (plan.get("status") or {}).get("phase") in finished)
    }


def rollback_problem(snapshot: Snapshot, steps: Sequence[Step]) -> str:
    """Why the rollback's steps may not run ("" when safe): a CRD they would write back
    without a version its existing objects are stored at (the upgrade's own check)."""
    for step in steps:
        manifest = step.manifest
        if manifest.get("kind") != "CustomResourceDefinition":
            continue
        existing = snapshot.crds.get(str(manifest["metadata"]["name"]))
        if existing is None:
            continue
        problem = stored_versions_problem(dict(existing), manifest)
        if problem:
            return f"rolling back to {step.resolving} is unsafe: {problem}"
    return ""


def rolled_back_from(subscription: Mapping[str, Any], snapshot: Snapshot) -> list[str]:
    """The CSVs to delete once a rollback's plan is Complete: those still replacing the
    target (the bad version; left alone, it and the target would each replace the other)."""
    target = rollback_target(subscription)
    status = subscription.get("status") or {}
    plan = snapshot.plans.get(str((status.get("installPlanRef") or {}).get("name") or ""))
    if not target or status.get("currentCSV") != target or plan is None:
        return []
    if plan not in rollback_plans(snapshot.plans).values():
        return []
    if (plan.get("status") or {}).get("phase") != InstallPlanPhase.COMPLETE.value:
        return []
    if target not in snapshot.csvs:
        return []
    return sorted(
        name
        for name, csv in snapshot.csvs.items()
        if (csv.get("spec") or {}).get("replaces") == target
        and not body.meta(csv).get("deletionTimestamp")
    )


def stale_plans(deleted: Sequence[str], snapshot: Snapshot) -> list[str]:
    """The finished plans that installed only CSVs a rollback deletes: gone with them, so a
    later upgrade to the same version gets a plan of its own (OLM reuses a plan that names
    the same CSVs, and a plan whose CSVs are gone would never install them again)."""
    gone = set(deleted)
    return sorted(
        name
        for name, plan in snapshot.plans.items()
        if set((plan.get("spec") or {}).get("clusterServiceVersionNames") or []) <= gone
        and gone
        and (plan.get("status") or {}).get("phase")
        in (InstallPlanPhase.COMPLETE.value, InstallPlanPhase.FAILED.value)
    )


def request_done(subscription: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """The rollback is done (its condition says RolledBack): olm-py removes the request, so it
    is carried out once (a later upgrade is not rolled back again)."""
    if not rollback_target(subscription):
        return False
    found = find_condition(status.get("conditions") or [], OlmPyConditionType.ROLLBACK)
    return found is not None and found.get("reason") == RollbackReason.ROLLED_BACK.value


def rollback_condition(
    subscription: Mapping[str, Any],
    status: dict[str, Any],
    snapshot: Snapshot,
) -> None:
    """The Subscription's Rollback condition from where it stands (absent without a request)."""
    conditions = status.get("conditions") or []
    target = rollback_target(subscription)
    if not target:
        # Done and its request removed: RolledBack stays while that CSV is what is installed.
        said = find_condition(conditions, OlmPyConditionType.ROLLBACK)
        installed_now = str(status.get("installedCSV") or "")
        if not (
            said is not None
            and said.get("reason") == RollbackReason.ROLLED_BACK.value
            and installed_now
            and f"back on {installed_now};" in str(said.get("message") or "")
        ):
            status["conditions"] = remove_conditions(conditions, OlmPyConditionType.ROLLBACK)
        return
    meta = subscription["metadata"]
    name, namespace = meta["name"], meta.get("namespace", "")
    installed, current = status.get("installedCSV"), status.get("currentCSV")
    plan = str((status.get("installPlanRef") or {}).get("name") or "")
    failed = find_condition(conditions, SubscriptionConditionType.RESOLUTION_FAILED)
    phase = str(((snapshot.csvs.get(target) or {}).get("status") or {}).get("phase") or "")
    plan_phase = ((snapshot.plans.get(plan) or {}).get("status") or {}).get("phase")
    # Done once the target runs again and nothing replaces it (a CSV a bad upgrade was
    # replacing still exists, Replacing, while the rollback's plan waits).
    back = phase == CsvPhase.SUCCEEDED.value and not any(
        (c.get("spec") or {}).get("replaces") == target for c in snapshot.csvs.values()
    )
    if installed == target and back and plan_phase != InstallPlanPhase.REQUIRES_APPROVAL.value:
        wanted = (
            ConditionStatus.TRUE,
            RollbackReason.ROLLED_BACK,
            f"{name} is back on {target}; its {VERSION_RANGE_ANNOTATION} annotation holds it "
            "there (change or remove it to upgrade again; olm-py has removed the request, "
            f"{ROLLBACK_ANNOTATION})",
        )
    elif current == target and plan and plan_phase != InstallPlanPhase.COMPLETE.value:
        wanted = (
            ConditionStatus.TRUE,
            RollbackReason.ROLLBACK_PLANNED,
            f"InstallPlan {plan} moves {name} from {installed} back to {target}. Read it: olm "
            f"plan show {plan} -n {namespace}; approve it: kubectl patch installplan {plan} -n "
            f'{namespace} --type merge -p \'{{"spec":{{"approved":true}}}}\'',
        )
    elif current == target and plan:
        wanted = (
            ConditionStatus.TRUE,
            RollbackReason.ROLLBACK_PLANNED,
            f"InstallPlan {plan} moved {name} back to {target}; waiting for {target} to "
            f"succeed (now {phase or 'absent'})",
        )
    elif failed is not None:
        wanted = (
            ConditionStatus.FALSE,
            RollbackReason.ROLLBACK_REFUSED,
            str(failed.get("message") or ""),
        )
    else:
        return  # not decided yet
    status["conditions"] = set_condition(
        conditions, OlmPyConditionType.ROLLBACK, wanted[0], wanted[1].value, wanted[2], snapshot.now
    )
