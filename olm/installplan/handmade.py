"""InstallPlans nobody made the usual way: a Subscription makes a plan and writes its steps; a
plan without an owning Subscription, or without steps, cannot run, and its message says why and
what to do instead.

Invariants: pure; reads only its arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.kinds import KINDS, Kind

SUBSCRIPTION_KIND = KINDS[Kind.SUBSCRIPTION].kind.value
# How long a plan nobody owns may stay without status before it is failed as hand-made.
HAND_MADE_GRACE_SECONDS = 10.0


def owned_by_subscription(plan: Mapping[str, Any]) -> bool:
    return any(
        owner.get("kind") == SUBSCRIPTION_KIND
        for owner in body.meta(plan).get("ownerReferences") or []
    )


def hand_made_message(plan: Mapping[str, Any]) -> str:
    names = ", ".join((plan.get("spec") or {}).get("clusterServiceVersionNames") or []) or "none"
    return (
        "this InstallPlan has no steps to run (status.plan is empty) and no Subscription owns it "
        f"(spec.clusterServiceVersionNames: {names}). InstallPlans are made by Subscriptions, "
        "which resolve the operator from a catalog and write the steps: create a Subscription "
        "for the operator's package instead, and delete this InstallPlan"
    )


NO_STEPS_MESSAGE = (
    "this InstallPlan has no steps to run (status.plan is empty). InstallPlans are made by "
    "Subscriptions: delete it, and the Subscription resolves again and makes a new one"
)
