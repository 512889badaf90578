"""InstallPlan status writing (OLM v0 §1.3): conditions and the Failed status, and the merge
patch that writes a status change.

Invariants: a condition set with the same status as before keeps its lastTransitionTime;
timestamps are RFC3339 at second precision, UTC; inputs are never modified.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from olm.api.conditions import INSTALLPLAN_CONDITION
from olm.api.conditions import set_condition as conditions_set
from olm.api.installplan import (
    ConditionStatus,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
)

# The status field naming the ServiceAccount a scoped plan's steps are written as (OLM's
# attenuated ServiceAccount; set by the group check, `olm.installplan.decide`).
ATTENUATED_REF = "attenuatedServiceAccountRef"


def set_condition(
    conditions: list[dict[str, Any]],
    kind: InstallPlanConditionType,
    status: ConditionStatus,
    now: datetime.datetime,
    reason: InstallPlanReason | None = None,
    message: str = "",
) -> list[dict[str, Any]]:
    """The list with `kind` set as OLM writes an InstallPlanCondition: replaced whole in place,
    else appended; reason and message left out when not given; lastUpdateTime stamped on every
    set; lastTransitionTime kept while the status holds."""
    return conditions_set(
        conditions,
        kind,
        status,
        "" if reason is None else reason,
        message,
        now,
        style=INSTALLPLAN_CONDITION,
    )


def failed_status(
    status: Mapping[str, Any],
    message: str,
    reason: InstallPlanReason,
    now: datetime.datetime,
) -> dict[str, Any]:
    new = dict(status)
    new["phase"] = InstallPlanPhase.FAILED.value
    new["message"] = message
    new.setdefault("catalogSources", [])
    new["conditions"] = set_condition(
        list(status.get("conditions") or []),
        InstallPlanConditionType.INSTALLED,
        ConditionStatus.FALSE,
        now,
        reason,
        message,
    )
    return new


def status_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON merge patch from status `old` to `new` (empty when nothing changed)."""
    patch = {key: value for key, value in new.items() if old.get(key) != value}
    patch.update({key: None for key in old if key not in new})
    return patch
