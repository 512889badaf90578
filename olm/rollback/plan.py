"""What `olm rollback` asks of olm-py, and what the answer means; pure.

The command does not install anything itself: it annotates the Subscription (the CSV to go
back to, `olm-py.io/rollback-to`, and a version range holding it there afterwards,
`olm-py.io/version-range`), and olm-py's Subscription controller, which has the catalogs,
plans the move back as one Manual InstallPlan, or refuses it, in the Subscription's Rollback
condition. This module chooses the target, writes the annotations (and the ones that undo
them), and reads the condition.

Invariants: the target is never the installed CSV; a request can always be undone to exactly
the annotations the Subscription had before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.versionpolicy import (
    ROLLBACK_ANNOTATION,
    VERSION_RANGE_ANNOTATION,
    OlmPyConditionType,
    RollbackReason,
)

Obj = Mapping[str, Any]
_VERSION_IN_NAME = re.compile(r"\.v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]*)?)$")


class RollbackRefused(ValueError):
    """Nothing was asked: the message says why and what to do."""


@dataclass(frozen=True)
class Request:
    subscription: str
    namespace: str
    installed: str
    target: str
    version: str
    before: Mapping[str, str | None]  # the annotations as they were (None: absent)

    def annotations(self) -> dict[str, str | None]:
        return {ROLLBACK_ANNOTATION: self.target, VERSION_RANGE_ANNOTATION: self.version}

    def undo(self) -> dict[str, str | None]:
        return dict(self.before)


def request(
    subscription: Obj,
    installed_csv: Obj | None,
    to: str,
    entries: Sequence[tuple[str, str]],
) -> Request:
    """The request for `subscription` (its installed CSV's object, if readable), back to `to`
    or else to the CSV the installed one replaced; `entries` are (CSV, version) pairs the
    package's catalog lists (its PackageManifest), to know the target's version."""
    meta = body.meta(subscription)
    name, namespace = str(meta.get("name")), str(meta.get("namespace") or "")
    status = subscription.get("status") or {}
    installed = str(status.get("installedCSV") or "")
    if not installed:
        raise RollbackRefused(
            f"Subscription {name} has installed nothing yet (status.installedCSV is empty): "
            "there is nothing to roll back"
        )
    target = to
    if not target:
        target = str(((installed_csv or {}).get("spec") or {}).get("replaces") or "")
        if not target:
            raise RollbackRefused(
                f"{installed} replaces no earlier CSV (spec.replaces is empty), so there is no "
                f"previous version to go back to: name one, olm rollback {name} -n {namespace} "
                "--to CSV"
            )
    if target == installed:
        raise RollbackRefused(f"{target} is what Subscription {name} has installed already")
    version = dict(entries).get(target) or _version_from_name(target)
    if not version:
        raise RollbackRefused(
            f"the version of {target} is unknown (its package lists no such CSV and its name "
            "ends in no version): check the name with kubectl get packagemanifest"
        )
    current = body.annotations(subscription)
    before = {key: current.get(key) for key in (ROLLBACK_ANNOTATION, VERSION_RANGE_ANNOTATION)}
    return Request(name, namespace, installed, target, version, before)


def _version_from_name(csv: str) -> str:
    found = _VERSION_IN_NAME.search(csv)
    return found.group(1) if found else ""


def answer(subscription: Obj, target: str) -> tuple[str, str, str]:
    """(reason, message, plan) of the Subscription's Rollback condition once it is about
    `target` (("", "", "") before olm-py has answered)."""
    status = subscription.get("status") or {}
    for condition in status.get("conditions") or []:
        if condition.get("type") != OlmPyConditionType.ROLLBACK.value:
            continue
        message = str(condition.get("message") or "")
        if target not in message:
            return "", "", ""  # about an earlier request
        plan = str((status.get("installPlanRef") or {}).get("name") or "")
        return str(condition.get("reason") or ""), message, plan
    return "", "", ""


def done(reason: str) -> bool:
    return reason in (RollbackReason.ROLLBACK_PLANNED, RollbackReason.ROLLED_BACK)
