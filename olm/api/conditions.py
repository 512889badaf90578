"""Status conditions and the times they carry, one way for every object olm-py writes.

A condition list is `status.conditions`: plain dicts, one per `type`. The API olm-py serves
has three shapes of them, and `ConditionStyle` names each (so one `set_condition` serves all):
- `METAV1_CONDITION`: metav1.Condition (OperatorGroup, OLMConfig), as apimachinery's
  `meta.SetStatusCondition` keeps it: reason and message always written, the entry's other
  fields (observedGeneration) kept.
- `SUBSCRIPTION_CONDITION`: OLM's SubscriptionCondition (`SetCondition`): reason and message
  left out when empty (omitempty), the entry replaced whole, and a list whose entry already
  says the same status, reason and message returned as it is.
- `INSTALLPLAN_CONDITION`: OLM's InstallPlanCondition: like a Subscription's, plus a
  lastUpdateTime stamped on every set.

Invariants:
- One entry per type: setting one keeps its place in the list, or appends it.
- lastTransitionTime moves only when the status changes (it is kept while the status is the
  same and the entry has one), so re-deciding the same thing writes nothing new.
- Inputs are never modified; written values are plain strings (an enum's value).
- Times are written RFC 3339 at second precision in UTC with a `Z`, as metav1.Time serialises
  (`timestamp`), and read back strictly so (`parse_timestamp`); `parse_time` reads any RFC 3339
  time (a MicroTime, another client's offset).
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

Condition = dict[str, Any]
Entry = TypeVar("Entry", bound=Mapping[str, Any])  # a condition as read (dict or Mapping)

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now() -> datetime.datetime:
    """The clock every controller reads (aware, UTC)."""
    return datetime.datetime.now(datetime.UTC)


def timestamp(moment: datetime.datetime) -> str:
    """`moment` as metav1.Time writes it: RFC 3339, whole seconds, UTC, `Z`."""
    return moment.astimezone(datetime.UTC).strftime(TIME_FORMAT)


def parse_timestamp(text: str | None) -> datetime.datetime | None:
    """The moment a metav1.Time string names (aware, UTC); None when empty or not one."""
    if not text:
        return None
    try:
        return datetime.datetime.strptime(text, TIME_FORMAT).replace(tzinfo=datetime.UTC)
    except ValueError:
        return None


def parse_time(text: str) -> datetime.datetime | None:
    """Any RFC 3339 time, with a fraction (metav1.MicroTime) or an offset; None when not one.
    Naive when the text names no offset."""
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


@dataclass(frozen=True)
class ConditionStyle:
    """How one API type's conditions are written (see the module docstring)."""

    omit_empty: bool  # reason and message left out when empty (omitempty), else always written
    keep_fields: bool  # fields of the entry that a set does not write are kept
    stamp_update: bool  # lastUpdateTime is stamped on every set
    keep_when_same: bool  # a list already saying status, reason and message is returned as is
    stamp_transition: bool = True  # lastTransitionTime written (OLM omits it on some conditions)


METAV1_CONDITION = ConditionStyle(
    omit_empty=False, keep_fields=True, stamp_update=False, keep_when_same=False
)
SUBSCRIPTION_CONDITION = ConditionStyle(
    omit_empty=True, keep_fields=False, stamp_update=False, keep_when_same=True
)
# OLM's catalog operator writes a Subscription's ResolutionFailed with no time at all
# (setSubsCond: type, status, reason, message).
SUBSCRIPTION_UNSTAMPED = ConditionStyle(
    omit_empty=True,
    keep_fields=False,
    stamp_update=False,
    keep_when_same=True,
    stamp_transition=False,
)
INSTALLPLAN_CONDITION = ConditionStyle(
    omit_empty=True, keep_fields=False, stamp_update=True, keep_when_same=False
)


def find_condition(conditions: Iterable[Entry], kind: str) -> Entry | None:
    """The entry of type `kind`, or None."""
    kind = str(kind)
    return next((c for c in conditions if c.get("type") == kind), None)


def remove_conditions(conditions: Iterable[Entry], *kinds: str) -> list[Entry]:
    """The list without the entries of `kinds`, the rest in order."""
    names = {str(k) for k in kinds}
    return [c for c in conditions if c.get("type") not in names]


def set_condition(
    conditions: Sequence[Condition],
    kind: str,
    status: str,
    reason: str,
    message: str,
    now: datetime.datetime,
    style: ConditionStyle = METAV1_CONDITION,
) -> list[Condition]:
    """The list with the `kind` entry saying (status, reason, message), written in `style`:
    replaced in place, else appended; its lastTransitionTime kept while `status` holds."""
    kind, status, reason, message = str(kind), str(status), str(reason), str(message)
    current = find_condition(conditions, kind)
    if (
        style.keep_when_same
        and current is not None
        and (current.get("status"), current.get("reason", ""), current.get("message", ""))
        == (status, reason, message)
    ):
        return list(conditions)
    stamp = timestamp(now)
    wanted: Condition = {"type": kind, "status": status}
    if reason or not style.omit_empty:
        wanted["reason"] = reason
    if message or not style.omit_empty:
        wanted["message"] = message
    if style.stamp_update:
        wanted["lastUpdateTime"] = stamp
    since = None  # the status held since then
    if current is not None and current.get("status") == status:
        since = current.get("lastTransitionTime")
    if style.stamp_transition:
        wanted["lastTransitionTime"] = since or stamp
    if current is None:
        return [*conditions, wanted]
    entry = {**current, **wanted} if style.keep_fields else wanted
    return [entry if c is current else c for c in conditions]
