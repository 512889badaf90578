"""InstallPlans from the Subscriptions' side (OLM v0 §5.2 step 7, §5.4 creation, §5.5).

Invariants:
- At most one InstallPlan per set of CSVs: before creating one, any plan of the namespace
  with the same `spec.clusterServiceVersionNames` (as a set) that has not failed, is not being
  deleted and belongs to a Subscription of the namespace is reused, whatever its phase.
- A plan whose status was never written (olm-py stopped between creating it and writing its
  status) is adopted: it gets the status a new plan gets. It is never left with an empty phase
  once resolution has run: if resolution no longer wants its CSVs, it is marked Failed with
  the reason (it never ran).
- A new plan's name is derived from its namespace, generation and CSVs ("install-" and five
  characters, like a generated name), so creating it twice cannot make two plans.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from olm.api import body
from olm.api.conditions import find_condition
from olm.api.installplan import (
    Approval,
    ConditionStatus,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
)
from olm.api.kinds import KINDS, Kind
from olm.installplan.steps import Step

SUBSCRIPTION = KINDS[Kind.SUBSCRIPTION]
INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
PLAN_NAME_PREFIX = "install-"
# The alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes).
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAME_SUFFIX_LENGTH = 5
# OLM's BundleLookup condition type for a bundle still being unpacked (§1.3).
BUNDLE_LOOKUP_PENDING = "BundleLookupPending"
PENDING_PHASES = frozenset(
    {InstallPlanPhase.PLANNING, InstallPlanPhase.REQUIRES_APPROVAL, InstallPlanPhase.INSTALLING}
)

Obj = Mapping[str, Any]


def phase(plan: Obj) -> str:
    return str((plan.get("status") or {}).get("phase") or "")


def csv_names(plan: Obj) -> frozenset[str]:
    return frozenset((plan.get("spec") or {}).get("clusterServiceVersionNames") or [])


def generation(plan: Obj) -> int:
    try:
        return int((plan.get("spec") or {}).get("generation") or 0)
    except (TypeError, ValueError):
        return 0


def ref_name(status: Mapping[str, Any]) -> str:
    """The InstallPlan a Subscription status refers to (installPlanRef, or the legacy
    installplan)."""
    return str(
        (status.get("installPlanRef") or {}).get("name")
        or (status.get("installplan") or {}).get("name")
        or ""
    )


def owned_by(plan: Obj, subscription_uids: Iterable[str]) -> bool:
    """True when one of the plan's owners is one of these Subscriptions."""
    uids = set(subscription_uids)
    return any(
        o.get("kind") == SUBSCRIPTION.kind.value and o.get("uid") in uids
        for o in body.meta(plan).get("ownerReferences") or []
    )


def unwritten(plan: Obj, subscription_uids: Iterable[str]) -> bool:
    """Created by olm-py for these Subscriptions, but its status was never written (no phase
    and no steps: a plan whose phase alone someone cleared is not one, OLM's e2e suite does)."""
    meta = body.meta(plan)
    return (
        phase(plan) == InstallPlanPhase.NONE
        and not (plan.get("status") or {}).get("plan")
        and not meta.get("deletionTimestamp")
        and owned_by(plan, subscription_uids)
    )


def reusable(
    plans: Mapping[str, Obj],
    names: Iterable[str],
    subscription_uids: Iterable[str],
    referenced: Iterable[str] = (),
) -> Obj | None:
    """The plan to use for `names` instead of a new one, if there is one (the invariant
    above). Preference: one a Subscription already refers to, one that has a phase, the
    newest generation, then the name."""
    wanted = frozenset(names)
    uids = set(subscription_uids)
    refs = set(referenced)
    found = [
        p
        for p in plans.values()
        if csv_names(p) == wanted
        and phase(p) != InstallPlanPhase.FAILED
        and not body.meta(p).get("deletionTimestamp")
        and owned_by(p, uids)
    ]
    found.sort(
        key=lambda p: (
            p["metadata"]["name"] not in refs,
            phase(p) == InstallPlanPhase.NONE,
            -generation(p),
            p["metadata"]["name"],
        )
    )
    return found[0] if found else None


def pending_csvs(plans: Mapping[str, Obj], subscription_uids: Iterable[str]) -> frozenset[str]:
    """CSVs named by a plan of these Subscriptions that is waiting or running."""
    uids = set(subscription_uids)
    return frozenset(
        name
        for p in plans.values()
        if phase(p) in PENDING_PHASES and owned_by(p, uids)
        for name in csv_names(p)
    )


def next_generation(plans: Mapping[str, Obj], subscriptions: Sequence[Obj]) -> int:
    """OLM: one more than any Subscription's installPlanGeneration and any plan's generation."""
    found = [generation(p) for p in plans.values()]
    for subscription in subscriptions:
        try:
            found.append(int((subscription.get("status") or {}).get("installPlanGeneration") or 0))
        except (TypeError, ValueError):
            continue
    return 1 + max(found, default=0)


def plan_name(namespace: str, gen: int, names: Iterable[str]) -> str:
    digest = hashlib.sha256(f"{namespace}/{gen}/{','.join(sorted(names))}".encode()).digest()
    suffix = "".join(NAME_ALPHABET[b % len(NAME_ALPHABET)] for b in digest[:NAME_SUFFIX_LENGTH])
    return PLAN_NAME_PREFIX + suffix


def approval(subscriptions: Sequence[Obj]) -> Approval:
    """Manual when any Subscription of the namespace is Manual (OLM)."""
    manual = any(
        (s.get("spec") or {}).get("installPlanApproval") == Approval.MANUAL.value
        for s in subscriptions
    )
    return Approval.MANUAL if manual else Approval.AUTOMATIC


def plan_status(steps: Sequence[Step], plan_approval: str) -> dict[str, Any]:
    """The status OLM writes right after creating a plan."""
    first = (
        InstallPlanPhase.REQUIRES_APPROVAL
        if plan_approval == Approval.MANUAL.value
        else InstallPlanPhase.INSTALLING
    )
    return {
        "phase": first.value,
        "catalogSources": sorted({s.source_name for s in steps}),
        "plan": [s.status_entry() for s in steps],
        "conditions": [],
    }


def new_plan_body(
    namespace: str,
    subscriptions: Sequence[Obj],
    names: Sequence[str],
    gen: int,
    plan_approval: Approval,
) -> dict[str, Any]:
    """OLM's InstallPlan: owned (non-blocking) by every Subscription of the namespace."""
    owners = [
        {
            "apiVersion": SUBSCRIPTION.api_version,
            "kind": SUBSCRIPTION.kind.value,
            "name": s["metadata"]["name"],
            "uid": s["metadata"]["uid"],
            "controller": False,
            "blockOwnerDeletion": False,
        }
        for s in subscriptions
    ]
    return {
        "apiVersion": INSTALL_PLAN.api_version,
        "kind": INSTALL_PLAN.kind.value,
        "metadata": {
            "name": plan_name(namespace, gen, names),
            "namespace": namespace,
            "ownerReferences": owners,
        },
        "spec": {
            "clusterServiceVersionNames": list(names),
            "approval": plan_approval.value,
            "approved": plan_approval == Approval.AUTOMATIC,
            "generation": gen,
        },
    }


def superseded_status(plan: Obj) -> dict[str, Any]:
    """For a plan that never got its steps and that resolution no longer wants."""
    names = ", ".join(sorted(csv_names(plan))) or "no CSVs"
    message = (
        f"this InstallPlan for {names} never ran: olm-py stopped before writing its steps, "
        "and resolving the namespace again no longer selects these CSVs"
    )
    return {
        "phase": InstallPlanPhase.FAILED.value,
        "catalogSources": [],
        "plan": [],
        "message": message,
        "conditions": [
            {
                "type": InstallPlanConditionType.INSTALLED.value,
                "status": ConditionStatus.FALSE.value,
                "reason": InstallPlanReason.PLAN_UNKNOWN.value,
                "message": message,
            }
        ],
    }


def reference(plan: Obj) -> tuple[dict[str, Any], dict[str, Any]]:
    """(status.installPlanRef, the legacy status.installplan) for a plan."""
    meta = plan["metadata"]
    ref = {
        "apiVersion": INSTALL_PLAN.api_version,
        "kind": INSTALL_PLAN.kind.value,
        "name": meta["name"],
        "namespace": meta["namespace"],
        "uid": meta.get("uid", ""),
    }
    legacy = {
        "apiVersion": INSTALL_PLAN.api_version,
        "kind": INSTALL_PLAN.kind.value,
        "name": meta["name"],
        "uuid": meta.get("uid", ""),
    }
    return ref, legacy


def installed_condition(plan: Obj) -> Mapping[str, Any]:
    conditions = (plan.get("status") or {}).get("conditions") or []
    return find_condition(conditions, InstallPlanConditionType.INSTALLED) or {}


def plan_message(plan: Obj) -> str:
    """OLM's extractMessage: the Installed condition's message, else the pending bundle
    lookups' messages."""
    installed = installed_condition(plan)
    if installed.get("status") not in (None, ConditionStatus.UNKNOWN.value) and installed.get(
        "message"
    ):
        return str(installed["message"])
    messages = []
    for lookup in (plan.get("status") or {}).get("bundleLookups") or []:
        for condition in lookup.get("conditions") or []:
            if (
                condition.get("type") == BUNDLE_LOOKUP_PENDING
                and condition.get("status") not in (None, ConditionStatus.UNKNOWN.value)
                and condition.get("message")
            ):
                messages.append(f"{condition['message']}.")
    return " ".join(messages)
