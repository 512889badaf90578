"""Auto-approval of Manual InstallPlans by a Subscription's `olm-py.io/auto-approve` policy.

A new plan is Manual when any Subscription of its namespace is (OLM). olm-py approves it at
creation (`spec.approved: true`, the InstallPlan controller then moves it from RequiresApproval
to Installing as for a person's approval) when every Manual Subscription the plan moves has a
policy (olm.api.versionpolicy) that allows its own step:
- a first install (no installed CSV) is a step of size `first`;
- an upgrade is `patch`, `minor` or `major` by the first semver part that changes;
  a downgrade, a prerelease, or a version that is unknown or does not parse is never approved
  by a policy but `all`.
Automatic Subscriptions moved by the same plan need no approval. A plan that also installs
dependencies (bundles no Subscription of the namespace asked for) is approved only when every
Manual Subscription's policy is `all`: what a dependency brings is not sized by a version step.

Invariants: pure; off (no annotation anywhere) it approves nothing; it never approves a plan
that a Manual Subscription without a valid policy is part of.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.installplan import Approval
from olm.api.versionpolicy import (
    AUTO_APPROVE_ANNOTATION,
    AUTO_APPROVED_ANNOTATION,
    AUTO_APPROVED_EVENT,
    INVALID_AUTO_APPROVE_EVENT,
    AutoApprove,
)
from olm.catalog.semver import SemverError, parse_version

# What each step size needs, smallest first; `major` only under `all`.
_SIZES = ("first", "patch", "minor", "major")
_ALLOWS = {
    AutoApprove.FIRST: 0,
    AutoApprove.PATCH: 1,
    AutoApprove.MINOR: 2,
    AutoApprove.ALL: len(_SIZES),
}


@dataclass(frozen=True)
class Move:
    """One Subscription the plan moves: from `installed` (version; "" for a first install)."""

    subscription: Mapping[str, Any]
    csv: str
    version: str
    installed: str = ""
    installed_version: str = ""


@dataclass(frozen=True)
class AutoApproval:
    approved: bool
    # Why, for the plan's annotation and the Event (approved), or for the log (not).
    summary: str = ""
    # Subscriptions whose annotation is not a policy: each gets a Warning Event.
    invalid: tuple[str, ...] = ()


def step_size(installed_version: str, version: str, installed: str = "") -> str | None:
    """`first` (nothing installed), `patch`, `minor` or `major`; None for a downgrade, a
    prerelease, or a version that is unknown or does not parse (only `all` approves those)."""
    if not installed and not installed_version:
        return "first"
    try:
        old, new = parse_version(installed_version), parse_version(version)
    except SemverError:
        return None
    if new <= old or new.prerelease:
        return None
    if new.major != old.major:
        return "major"
    if new.minor != old.minor:
        return "minor"
    return "patch"


def policy_of(subscription: Mapping[str, Any]) -> AutoApprove | str | None:
    """The Subscription's policy, the raw text when it is not one, None without annotation."""
    value = body.annotations(subscription).get(AUTO_APPROVE_ANNOTATION)
    if value is None:
        return None
    text = str(value).strip()
    try:
        return AutoApprove(text)
    except ValueError:
        return text


def invalid_message(name: str, value: str) -> str:
    values = ", ".join(p.value for p in AutoApprove)
    return (
        f"Subscription {name}: annotation {AUTO_APPROVE_ANNOTATION}={value!r} is not a policy "
        f"({values}); its InstallPlans wait for approval, as for installPlanApproval: Manual. "
        f"Fix: kubectl annotate subscription {name} --overwrite {AUTO_APPROVE_ANNOTATION}=patch"
    )


def auto_approval(moves: Sequence[Move], dependencies: Sequence[str]) -> AutoApproval:
    """Whether olm-py approves a Manual plan that makes `moves` (and installs `dependencies`)."""
    said: list[str] = []
    invalid: list[str] = []
    approved = True
    for move in moves:
        spec = move.subscription.get("spec") or {}
        if spec.get("installPlanApproval") != Approval.MANUAL.value:
            continue
        name = str(move.subscription["metadata"]["name"])
        policy = policy_of(move.subscription)
        if not isinstance(policy, AutoApprove):
            if isinstance(policy, str):
                invalid.append(name)
            approved = False
            continue
        size = step_size(move.installed_version, move.version, move.installed)
        rank = _SIZES.index(size) if size is not None else len(_SIZES)
        if dependencies and policy != AutoApprove.ALL:
            approved = False
            said.append(f"{name}: dependencies {', '.join(dependencies)} need a person")
            continue
        if rank > _ALLOWS[policy] or (size is None and policy != AutoApprove.ALL):
            approved = False
            said.append(f"{name}: {_step(move)} is a {size or 'downgrade'} step, beyond {policy}")
            continue
        said.append(f"{name} ({policy}): {_step(move)}")
    manual = any(
        (m.subscription.get("spec") or {}).get("installPlanApproval") == Approval.MANUAL.value
        for m in moves
    )
    return AutoApproval(approved and manual and not invalid, "; ".join(said), tuple(invalid))


def _step(move: Move) -> str:
    if not move.installed:
        return f"first install of {move.csv} {move.version}"
    return f"{move.installed} {move.installed_version} -> {move.csv} {move.version}"


def approve_new_plan(
    body: dict[str, Any], moves: Sequence[Move], dependencies: Sequence[str]
) -> list[tuple[str, str, str]]:
    """Mark the new Manual plan `body` approved (and say why on it) when the policies allow;
    returns the Events (type, reason, message) to record for the namespace."""
    decision = auto_approval(moves, dependencies)
    events = [
        ("Warning", INVALID_AUTO_APPROVE_EVENT, invalid_message(name, str(policy_of(sub))))
        for name in decision.invalid
        for sub in [
            next(m.subscription for m in moves if m.subscription["metadata"]["name"] == name)
        ]
    ]
    if decision.approved:
        body["spec"]["approved"] = True
        annotations = body["metadata"].setdefault("annotations", {})
        annotations[AUTO_APPROVED_ANNOTATION] = decision.summary
        events.append(
            (
                "Normal",
                AUTO_APPROVED_EVENT,
                f"InstallPlan {body['metadata']['name']} approved by olm-py: {decision.summary}",
            )
        )
    return events
