"""What the InstallPlan decision reads and what it decides, as plain data.

`Snapshot` is read from the cache by the controller (`olm.controllers.installplan`); `Plan` is
carried out by it: its `actions` written in order, then its `status`. `fail` is the Plan of a
plan that ends Failed, and `step_error` names the step that made it fail.

Invariants: neither holds a client; the snapshot's dicts are the cached objects themselves and
are never modified; an action's `index` is the position of its step in `status.plan`.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from olm.api.installplan import InstallPlanReason, StepStatus
from olm.installplan.policy import DEFAULT_POLICY, InstallPolicy
from olm.installplan.status import failed_status
from olm.installplan.stepref import Ref, step_ref
from olm.installplan.tenancy import Right


class Verb(StrEnum):
    CREATE = "create"  # a plain create: refused (409) when the object exists after all
    APPLY = "apply"  # server-side apply


@dataclass(frozen=True)
class Action:
    """One write: the step at `index` of status.plan gets `result` once `body` is written."""

    index: int
    verb: Verb
    body: dict[str, Any]
    result: StepStatus


@dataclass(frozen=True)
class Snapshot:
    plan: dict[str, Any]
    now: datetime.datetime
    # This process already wrote Complete or Failed for this plan (its cached copy may lag).
    finished: bool = False
    # The live object each step names, None when absent (CSVs and CRDs always, others while
    # their step is not done).
    objects: Mapping[Ref, dict[str, Any] | None] = field(default_factory=dict)
    # Steps whose apiVersion/kind the API server does not serve, with its words.
    unserved: Mapping[Ref, str] = field(default_factory=dict)
    # (CRD name, version) -> the existing custom resources of that version (CRD upgrade safety).
    custom_resources: Mapping[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    # For each CSV a live CRD of the plan says it was installed alongside: whether it still
    # exists as an original (False: gone or a copy, and the reference is dropped, as OLM does).
    alongside: Mapping[tuple[str, str], bool] = field(default_factory=dict)
    # The OperatorGroups of the plan's namespace (which ServiceAccount the steps act as).
    groups: tuple[Mapping[str, Any], ...] = ()
    # What bundles may install (olm.installplan.policy): OLM's kinds unless the admin added some.
    policy: InstallPolicy = DEFAULT_POLICY
    # The scoped group's ServiceAccount's SubjectAccessReview answers (the tenancy opt-in).
    access: Mapping[Right, bool] | None = None


@dataclass(frozen=True)
class Plan:
    actions: tuple[Action, ...] = ()
    # The status once every action succeeded; None leaves it as it is.
    status: dict[str, Any] | None = None
    # Decide again right after the actions, on a fresh snapshot (the next stage needs them).
    again: bool = False
    requeue_after: float | None = None
    # (type, reason, message) of an Event to record with the status.
    event: tuple[str, str, str] | None = None


def fail(
    status: Mapping[str, Any],
    message: str,
    now: datetime.datetime,
    reason: InstallPlanReason = InstallPlanReason.INSTALL_COMPONENT_FAILED,
) -> Plan:
    """The Plan that fails the InstallPlan with `message`, and a Warning Event saying it."""
    return Plan(
        status=failed_status(status, message, reason, now),
        event=("Warning", reason.value, message),
    )


def step_error(manifest: Mapping[str, Any], error: str) -> str:
    """The Failed message for a step the API server refused or olm-py would not write."""
    return f"error creating step {manifest.get('kind', '')} {step_ref(manifest)[3]}: {error}"


def unserved_message(entry: Mapping[str, Any], manifest: Mapping[str, Any]) -> str:
    """Why a step of a kind no API server here serves cannot be written: OLM's sentence (the
    step resource's group/version and kind, as Go prints a GroupVersionKind), then the fix."""
    resource = entry.get("resource") if isinstance(entry.get("resource"), Mapping) else {}
    assert isinstance(resource, Mapping)
    api_version = str(manifest.get("apiVersion", ""))
    group, _, version = api_version.rpartition("/")
    group = str(resource.get("group", group) or "")
    version = str(resource.get("version", version) or "")
    kind = str(resource.get("kind", "") or manifest.get("kind", ""))
    name = str(resource.get("name", "") or step_ref(manifest)[3])
    return (
        f"api-server resource not found installing {kind} {name}: GroupVersionKind "
        f"{group}/{version}, Kind={kind} not found on the cluster. No API server of this "
        f"cluster serves that kind: install what provides it (a CRD or an APIService), or "
        "remove the step's object from the bundle."
    )
