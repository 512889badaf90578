"""The installed operators' view-model: each CSV with its phase and reason in words, its
Subscription, the InstallPlans waiting for approval, and the Events about it.

Invariants: pure; copied CSVs (label `olm.copiedFrom`) are not listed as installs of their
own; a reason olm-py has no words for is shown as itself; rows are sorted by namespace, name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.csv import CsvPhase, CsvReason
from olm.api.installplan import InstallPlanPhase
from olm.api.labels import Label

Obj = Mapping[str, Any]

REASON_WORDS: dict[str, str] = {
    CsvReason.REQUIREMENTS_UNKNOWN: "checking its requirements",
    CsvReason.REQUIREMENTS_NOT_MET: "a requirement is not met",
    CsvReason.ALL_REQUIREMENTS_MET: "all requirements met, installing",
    CsvReason.INSTALL_WAITING: "waiting for its Deployments to become available",
    CsvReason.INSTALL_SUCCEEDED: "installed and running",
    CsvReason.INSTALL_CHECK_FAILED: "its Deployments are not healthy",
    CsvReason.COMPONENT_UNHEALTHY: "a component is unhealthy",
    CsvReason.BEING_REPLACED: "being replaced by a newer version",
    CsvReason.REPLACED: "replaced by a newer version",
    CsvReason.NO_OPERATOR_GROUP: "its namespace has no OperatorGroup",
    CsvReason.TOO_MANY_OPERATOR_GROUPS: "its namespace has more than one OperatorGroup",
    CsvReason.UNSUPPORTED_OPERATOR_GROUP: "the OperatorGroup's targets are not an install mode it supports",
    CsvReason.OWNER_CONFLICT: "another operator owns one of its APIs",
    CsvReason.INSTALL_COMPONENT_FAILED: "a component failed to install",
}


@dataclass(frozen=True)
class EventView:
    type: str
    reason: str
    message: str
    count: int
    last: str


@dataclass(frozen=True)
class InstalledView:
    namespace: str
    name: str
    display_name: str
    version: str
    phase: str
    reason: str
    words: str
    message: str
    subscription: str
    package: str
    channel: str
    approval: str

    @property
    def succeeded(self) -> bool:
        return self.phase == CsvPhase.SUCCEEDED


@dataclass(frozen=True)
class PlanView:
    namespace: str
    name: str
    csvs: tuple[str, ...]
    phase: str
    approval: str
    approved: bool

    @property
    def waiting(self) -> bool:
        return self.phase == InstallPlanPhase.REQUIRES_APPROVAL and not self.approved


def words(reason: str) -> str:
    return REASON_WORDS.get(reason, reason)


def _subscription_of(csv: Obj, subscriptions: Sequence[Obj]) -> Obj | None:
    name, namespace = body.name(csv), body.namespace(csv)
    for sub in subscriptions:
        status = sub.get("status") or {}
        if body.namespace(sub) == namespace and name in (
            status.get("installedCSV"),
            status.get("currentCSV"),
        ):
            return sub
    return None


def installed(csvs: Sequence[Obj], subscriptions: Sequence[Obj]) -> list[InstalledView]:
    rows = []
    for csv in csvs:
        if Label.COPIED_FROM in body.labels(csv):
            continue
        status, spec = csv.get("status") or {}, csv.get("spec") or {}
        sub = _subscription_of(csv, subscriptions) or {}
        sub_spec = sub.get("spec") or {}
        reason = str(status.get("reason") or "")
        rows.append(
            InstalledView(
                namespace=body.namespace(csv),
                name=body.name(csv),
                display_name=str(spec.get("displayName") or body.name(csv)),
                version=str(spec.get("version") or ""),
                phase=str(status.get("phase") or "Pending"),
                reason=reason,
                words=words(reason),
                message=str(status.get("message") or ""),
                subscription=body.name(sub) if sub else "",
                package=str(sub_spec.get("name") or ""),
                channel=str(sub_spec.get("channel") or ""),
                approval=str(sub_spec.get("installPlanApproval") or ""),
            )
        )
    return sorted(rows, key=lambda r: (r.namespace, r.name))


def plans(items: Sequence[Obj]) -> list[PlanView]:
    rows = [
        PlanView(
            namespace=body.namespace(p),
            name=body.name(p),
            csvs=tuple((p.get("spec") or {}).get("clusterServiceVersionNames") or ()),
            phase=str((p.get("status") or {}).get("phase") or ""),
            approval=str((p.get("spec") or {}).get("approval") or ""),
            approved=bool((p.get("spec") or {}).get("approved")),
        )
        for p in items
    ]
    return sorted(rows, key=lambda r: (r.namespace, r.name))


def events_about(events: Sequence[Obj], kind: str, name: str) -> list[EventView]:
    """The Events whose involved object is `kind` `name`, newest first."""
    found = [
        e
        for e in events
        if (e.get("involvedObject") or {}).get("kind") == kind
        and (e.get("involvedObject") or {}).get("name") == name
    ]

    def last(e: Obj) -> str:
        return str(e.get("lastTimestamp") or e.get("eventTime") or "")

    return [
        EventView(
            str(e.get("type") or ""),
            str(e.get("reason") or ""),
            str(e.get("message") or ""),
            int(e.get("count") or 1),
            last(e),
        )
        for e in sorted(found, key=last, reverse=True)
    ]


@dataclass(frozen=True)
class UninstallView:
    """`olm uninstall-operator --dry-run`'s report, split into what goes and what stays."""

    summary: str
    goes: tuple[str, ...]
    stays: tuple[str, ...]
    other: tuple[str, ...]


GOES = ("would delete", "deleted", "deletes", "gc ", "olm-py ")
STAYS = ("kept", "left")


def uninstall_view(lines: Sequence[str]) -> UninstallView:
    """The report's lines by their first word (olm.uninstall.render's fixed prefixes)."""
    goes: list[str] = []
    stays: list[str] = []
    other: list[str] = []
    for line in lines[1:]:
        if line.startswith(GOES):
            goes.append(line)
        elif line.startswith(STAYS):
            stays.append(line)
        else:
            other.append(line)
    return UninstallView(lines[0] if lines else "", tuple(goes), tuple(stays), tuple(other))
