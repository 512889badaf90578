"""olm-py's version policies (beyond OLM) applied to one namespace's decision.

Two annotations of a Subscription (olm.api.versionpolicy) reach the Subscription controller's
decision here: `olm-py.io/auto-approve` approves a new Manual InstallPlan that stays within its
step size (olm.subscription.autoapprove), and `olm-py.io/version-range`, already applied by the
resolver (olm.resolution.versionrange), is said on the Subscription as its VersionHeld
condition.

Invariants: pure; without either annotation nothing here changes a status, a plan or an Event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olm.api.installplan import ConditionStatus
from olm.api.versionpolicy import (
    INVALID_VERSION_RANGE_EVENT,
    OlmPyConditionType,
    VersionHeldReason,
)
from olm.resolution.model import Candidate
from olm.subscription.autoapprove import Move, approve_new_plan
from olm.subscription.snapshot import NamespaceEvent, Snapshot
from olm.subscription.status import find, set_condition

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
        before = find(status.get("conditions") or [], OlmPyConditionType.VERSION_HELD)
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
