"""metav1.Condition lists (OperatorGroup `status.conditions`), as apimachinery's
`meta.SetStatusCondition` / `RemoveStatusCondition` keep them.

Invariants: one entry per type; `lastTransitionTime` moves only when `status` changes; entries
of types the caller does not manage are kept as they are, in place; inputs are not modified.
"""

from __future__ import annotations

import datetime
from typing import Any

from olm.api.operatorgroup import ConditionStatus

Condition = dict[str, Any]


def timestamp(now: datetime.datetime) -> str:
    """RFC 3339 at second precision, UTC (as metav1.Time serialises)."""
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def find(conditions: list[Condition], kind: str) -> Condition | None:
    return next((c for c in conditions if c.get("type") == kind), None)


def set_condition(
    conditions: list[Condition],
    kind: str,
    status: ConditionStatus,
    reason: str,
    message: str,
    now: datetime.datetime,
) -> list[Condition]:
    """The list with `kind` set; the entry keeps its place and, when `status` is unchanged,
    its lastTransitionTime."""
    current = find(conditions, kind)
    wanted: Condition = {
        "type": kind,
        "status": status.value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": (
            current["lastTransitionTime"]
            if current is not None
            and current.get("status") == status.value
            and current.get("lastTransitionTime")
            else timestamp(now)
        ),
    }
    if current is None:
        return [*conditions, wanted]
    kept = {k: v for k, v in current.items() if k not in wanted}  # e.g. observedGeneration
    return [{**kept, **wanted} if c is current else c for c in conditions]


def remove_condition(conditions: list[Condition], kind: str) -> list[Condition]:
    return [c for c in conditions if c.get("type") != kind]
