"""The OperatorGroup decision (OLM v0 §4.1-4.2): snapshot in, one `GroupPlan` out.

What a group gets:
- `status.namespaces` (+ `lastUpdated`), rewritten only when the set of targets changes;
- `MultipleOperatorGroup=True` while its namespace holds more than one group (OLM);
- `status.serviceAccountRef` naming `spec.serviceAccountName` once that ServiceAccount exists,
  and `OperatorGroupServiceAccount=True` (ServiceAccountNotFound) while it does not (OLM's
  scoped-install syncer; olm-py also clears the ref when the ServiceAccount goes);
- `MissingTargetNamespaces=True` while spec.targetNamespaces names namespaces that do not
  exist, and `InvalidTargetNamespaces=True` while it holds "" (olm-py; OLM says nothing);
- the `olm.providedAPIs` annotation pruned of APIs no member CSV provides any more (OLM's
  pruneProvidedAPIs, computed by `olm.scope.conflicts.pruned_provided_apis` and handed in);
  APIs are added by the CSVs' own sync (AddAPIs), as in OLM;
- a Warning Event whenever one of those problems appears or changes.
Which CSVs to wake: those whose view of the group is out of step with the group as stored
(annotations, group-failure reasons); all of them when the group goes away.

Invariants: pure (reads only the snapshot); a group whose status already says everything gets
an empty plan, so a second pass over the same snapshot writes nothing.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.conditions import (
    Condition,
    find_condition,
    parse_timestamp,
    remove_conditions,
    set_condition,
    timestamp,
)
from olm.api.csv import GROUP_FAILURE_REASONS, CsvReason
from olm.api.labels import Annotation, Label
from olm.api.operatorgroup import (
    MULTIPLE_OPERATOR_GROUPS_MESSAGE,
    ConditionStatus,
    OperatorGroupConditionType,
    OperatorGroupReason,
)
from olm.groups.serviceaccount import (
    service_account_missing_message,
    service_account_name,
    service_account_ref,
)
from olm.groups.targets import ALL_NAMESPACES, csv_annotations, target_namespaces

# The namespace list is not in the cache yet (the group's own namespace is missing from it).
REQUEUE_UNTIL_NAMESPACES_KNOWN = 1.0
# A namespace applied together with a new group may reach the cache just after it: a target
# missing this soon after the group's creation is looked at again before it is reported.
MISSING_NAMESPACE_GRACE_SECONDS = 5.0
WARNING = "Warning"


@dataclass(frozen=True)
class GroupSnapshot:
    """Everything the decision for one OperatorGroup looks at (plain data from the cache)."""

    namespace: str
    name: str
    group: Mapping[str, Any] | None  # None once deleted
    sibling_names: tuple[str, ...]  # every OperatorGroup in the namespace, this one included
    namespaces: Mapping[str, Mapping[str, str]]  # every namespace's labels, by name
    namespace_terminating: bool
    csvs: tuple[Mapping[str, Any], ...]  # the CSVs in the group's namespace
    now: datetime.datetime
    # The ServiceAccount spec.serviceAccountName names, None when absent (or none named).
    service_account: Mapping[str, Any] | None = None
    # The group's olm.providedAPIs once pruned, None when nothing is to be pruned.
    pruned_provided_apis: str | None = None


@dataclass(frozen=True)
class GroupEvent:
    type: str
    reason: str
    message: str


@dataclass
class GroupPlan:
    """What to do for one OperatorGroup. Empty means nothing changes."""

    status: dict[str, Any] | None = None  # a merge patch of status (None values delete)
    provided_apis: str | None = None  # the new olm.providedAPIs annotation
    events: list[GroupEvent] = field(default_factory=list)
    wake_csvs: list[str] = field(default_factory=list)
    requeue_after: float | None = None


def is_copy(csv: Mapping[str, Any]) -> bool:
    """A copied CSV (OLM §4.5) belongs to another namespace's group."""
    meta = body.meta(csv)
    return (
        Label.COPIED_FROM in (meta.get("labels") or {})
        or (csv.get("status") or {}).get("reason") == CsvReason.COPIED
    )


def _members(snapshot: GroupSnapshot) -> list[Mapping[str, Any]]:
    return [c for c in snapshot.csvs if not is_copy(c)]


def _quoted(names: list[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def missing_namespaces_message(missing: list[str]) -> str:
    if len(missing) == 1:
        return (
            f'spec.targetNamespaces names namespace "{missing[0]}", which does not exist: '
            f"create it (kubectl create namespace {missing[0]}) or remove it from "
            "spec.targetNamespaces"
        )
    return (
        f"spec.targetNamespaces names namespaces {_quoted(missing)}, which do not exist: "
        f"create them (kubectl create namespace {' '.join(missing)}) or remove them from "
        "spec.targetNamespaces"
    )


EMPTY_TARGET_MESSAGE = (
    'spec.targetNamespaces contains an empty name (""), which OLM refuses: list namespaces by '
    "name, or remove spec.targetNamespaces and spec.selector to target all namespaces"
)


def multiple_groups_message(namespace: str, names: tuple[str, ...]) -> str:
    return (
        f"{MULTIPLE_OPERATOR_GROUPS_MESSAGE}: namespace {namespace} holds OperatorGroups "
        f"{_quoted(sorted(names))}; a namespace may have only one, so delete the others"
    )


def _age(group: Mapping[str, Any], now: datetime.datetime) -> float:
    """Seconds since the group was created (a long time when that is unknown)."""
    when = parse_timestamp(str(body.meta(group).get("creationTimestamp") or ""))
    return float("inf") if when is None else (now - when).total_seconds()


def _recheck_missing_after(snapshot: GroupSnapshot, group: Mapping[str, Any]) -> float | None:
    """When a missing target is still within its grace period, how long until it is not."""
    spec = group.get("spec") or {}
    explicit = [t for t in spec.get("targetNamespaces") or [] if isinstance(t, str)]
    if not any(t and t not in snapshot.namespaces for t in explicit):
        return None
    left = MISSING_NAMESPACE_GRACE_SECONDS - _age(group, snapshot.now)
    return max(left, 0.1) if left > 0 else None


def _conditions(
    snapshot: GroupSnapshot, group: Mapping[str, Any], existing: list[Condition]
) -> tuple[list[Condition], list[GroupEvent]]:
    """The managed conditions as they should be, and an Event per problem that appeared or
    changed."""
    spec = group.get("spec") or {}
    explicit = [t for t in spec.get("targetNamespaces") or [] if isinstance(t, str)]
    missing = sorted({t for t in explicit if t and t not in snapshot.namespaces})
    if missing and _age(group, snapshot.now) < MISSING_NAMESPACE_GRACE_SECONDS:
        missing = []  # not yet: the caller looks again after the grace period
    problems: list[tuple[OperatorGroupConditionType, OperatorGroupReason, str | None]] = [
        (
            OperatorGroupConditionType.MULTIPLE_OPERATOR_GROUP,
            OperatorGroupReason.MULTIPLE_OPERATOR_GROUPS_FOUND,
            multiple_groups_message(snapshot.namespace, snapshot.sibling_names)
            if len(snapshot.sibling_names) > 1
            else None,
        ),
        (
            OperatorGroupConditionType.MISSING_TARGET_NAMESPACES,
            OperatorGroupReason.TARGET_NAMESPACE_NOT_FOUND,
            missing_namespaces_message(missing) if missing else None,
        ),
        (
            OperatorGroupConditionType.INVALID_TARGET_NAMESPACES,
            OperatorGroupReason.EMPTY_TARGET_NAMESPACE,
            EMPTY_TARGET_MESSAGE if "" in explicit else None,
        ),
        (
            OperatorGroupConditionType.SERVICE_ACCOUNT,
            OperatorGroupReason.SERVICE_ACCOUNT_NOT_FOUND,
            service_account_missing_message(group)
            if service_account_name(group) and snapshot.service_account is None
            else None,
        ),
    ]
    conditions, events = list(existing), []
    for kind, reason, message in problems:
        if message is None:
            conditions = remove_conditions(conditions, kind)
            continue
        before = find_condition(conditions, kind)
        conditions = set_condition(
            conditions, kind, ConditionStatus.TRUE, reason, message, snapshot.now
        )
        if (
            before is None
            or before.get("message") != message
            or before.get("status") != ConditionStatus.TRUE
        ):
            events.append(GroupEvent(WARNING, reason.value, message))
    return conditions, events


def csvs_to_wake(snapshot: GroupSnapshot, group: Mapping[str, Any] | None) -> list[str]:
    """The CSVs whose decision depends on something about the group they have not seen yet."""
    members = [c for c in _members(snapshot) if not body.meta(c).get("deletionTimestamp")]
    if group is None or body.meta(group).get("deletionTimestamp"):
        return sorted(body.name(c) for c in members)
    if len(snapshot.sibling_names) > 1:
        return sorted(
            body.name(c)
            for c in members
            if (c.get("status") or {}).get("reason") != CsvReason.TOO_MANY_OPERATOR_GROUPS
        )
    status = group.get("status") or {}
    if not status.get("lastUpdated"):
        return []  # the CSVs wait for status.namespaces; its write brings the next pass
    wanted = csv_annotations(group, list(status.get("namespaces") or []))
    wake = []
    for csv in members:
        annotations = body.annotations(csv)
        reason = (csv.get("status") or {}).get("reason")
        if reason in GROUP_FAILURE_REASONS or any(
            annotations.get(k) != v for k, v in wanted.items()
        ):
            wake.append(body.name(csv))
    return sorted(wake)


def decide(snapshot: GroupSnapshot) -> GroupPlan:
    group = snapshot.group
    if group is None or body.meta(group).get("deletionTimestamp"):
        return GroupPlan(wake_csvs=csvs_to_wake(snapshot, group))
    if snapshot.namespace_terminating:
        return GroupPlan()  # nothing can be written in a terminating namespace
    if snapshot.namespace not in snapshot.namespaces:
        return GroupPlan(requeue_after=REQUEUE_UNTIL_NAMESPACES_KNOWN)
    status = group.get("status") or {}
    patch: dict[str, Any] = {}
    targets = target_namespaces(group, snapshot.namespaces)
    if set(status.get("namespaces") or []) != set(targets) or not status.get("lastUpdated"):
        patch["namespaces"] = targets or None
        patch["lastUpdated"] = timestamp(snapshot.now)
    wanted_ref = (
        service_account_ref(snapshot.service_account)
        if service_account_name(group) and snapshot.service_account is not None
        else None
    )
    if status.get("serviceAccountRef") != wanted_ref:
        patch["serviceAccountRef"] = wanted_ref
        patch["lastUpdated"] = timestamp(snapshot.now)
    existing = list(status.get("conditions") or [])
    conditions, events = _conditions(snapshot, group, existing)
    if conditions != existing:
        patch["conditions"] = conditions or None
    plan = GroupPlan(
        status=patch or None,
        events=events if patch else [],
        requeue_after=_recheck_missing_after(snapshot, group),
    )
    spec = group.get("spec") or {}
    if not spec.get("staticProvidedAPIs") and snapshot.pruned_provided_apis is not None:
        current = body.annotations(group).get(Annotation.PROVIDED_APIS, "")
        if current != snapshot.pruned_provided_apis:
            plan.provided_apis = snapshot.pruned_provided_apis
    plan.wake_csvs = csvs_to_wake(snapshot, group)
    return plan


__all__ = [
    "ALL_NAMESPACES",
    "GroupEvent",
    "GroupPlan",
    "GroupSnapshot",
    "csvs_to_wake",
    "decide",
    "is_copy",
]
