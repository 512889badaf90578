"""CSV status writing rules (OLM v0 §2.5).

Invariants: lastTransitionTime moves only when the phase changes; a condition snapshot is
appended only when (phase, reason) differs from the newest one; history keeps 20 entries;
timestamps are RFC3339 at second precision, UTC.
"""

from __future__ import annotations

import datetime
from typing import Any

from olm.api.conditions import parse_timestamp, timestamp
from olm.api.csv import CONDITION_HISTORY_LIMIT, CsvPhase, CsvReason

__all__ = ["parse_timestamp", "same_phase", "set_phase", "timestamp"]


def same_phase(status: dict[str, Any], phase: CsvPhase, reason: CsvReason, message: str) -> bool:
    return bool(
        status.get("phase", "") == phase.value
        and status.get("reason", "") == reason.value
        and status.get("message", "") == message
    )


def set_phase(
    status: dict[str, Any],
    phase: CsvPhase,
    reason: CsvReason,
    message: str,
    now: datetime.datetime,
) -> dict[str, Any]:
    """The status after moving to (phase, reason, message); `status` is not modified."""
    stamp = timestamp(now)
    new = dict(status)
    if new.get("phase", "") != phase.value or not new.get("lastTransitionTime"):
        new["lastTransitionTime"] = stamp
    new.update(phase=phase.value, reason=reason.value, message=message, lastUpdateTime=stamp)
    history = list(new.get("conditions") or [])
    last = history[-1] if history else {}
    if last.get("phase") != phase.value or last.get("reason") != reason.value:
        history.append(
            {
                "phase": phase.value,
                "reason": reason.value,
                "message": message,
                "lastUpdateTime": stamp,
                "lastTransitionTime": new["lastTransitionTime"],
            }
        )
    new["conditions"] = history[-CONDITION_HISTORY_LIMIT:]
    return new
