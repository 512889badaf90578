"""A plan carried out in part: the controller wrote only the first `done` actions of a Plan.

The writes that did not happen leave their steps' status as it was before this pass, so the
next pass runs them again. Why they did not happen decides the phase:
- `interrupted(..., error)`: the API server refused action `done`; the plan fails naming it.
- `interrupted(...)` without an error: a write found the cached copy stale; the plan stays
  Installing, to be decided again on a fresh snapshot.
- `forbidden`: the attenuated ServiceAccount may not write action `done`; the plan stays
  Installing with a message naming what to grant (OLM: a Forbidden is never terminal).

Invariants: pure; `plan.actions[:done]` and their step statuses are kept as decided.
"""

from __future__ import annotations

from dataclasses import replace

from olm.api.installplan import InstallPlanPhase, InstallPlanReason
from olm.installplan.snapshot import Plan, Snapshot, fail, step_error


def forbidden(snapshot: Snapshot, plan: Plan, done: int, message: str) -> Plan:
    """The plan when the attenuated ServiceAccount may not write action `done`: what was
    written keeps its step status, the plan stays Installing with `message` (OLM: a Forbidden
    is never terminal), and an Event says it when the message is new."""
    stale = interrupted(snapshot, plan, done)
    assert stale.status is not None and plan.status is not None
    new = {**stale.status, "message": message}
    if "conditions" in plan.status:  # as the group check left them (see `decide._group_check`)
        new["conditions"] = plan.status["conditions"]
    else:
        new.pop("conditions", None)
    old = snapshot.plan.get("status") or {}
    reason = InstallPlanReason.INSTALL_COMPONENT_FAILED.value
    event = None if old.get("message") == message else ("Warning", reason, message)
    return Plan(stale.actions, new, event=event)


def interrupted(snapshot: Snapshot, plan: Plan, done: int, error: str | None = None) -> Plan:
    """The plan when only `plan.actions[:done]` were written: the steps of the others keep
    their old status. With `error` (the API server refused action `done`) the plan fails;
    without (it was decided on a stale copy) it stays Installing, to be decided again."""
    assert plan.status is not None
    old_status = snapshot.plan.get("status") or {}
    old_entries = list(old_status.get("plan") or [])
    entries = [dict(e) for e in plan.status.get("plan") or []]
    for action in plan.actions[done:]:
        previous = old_entries[action.index] if action.index < len(old_entries) else {}
        if "status" in previous:
            entries[action.index]["status"] = previous["status"]
        else:
            entries[action.index].pop("status", None)
    new = {**plan.status, "plan": entries}
    if error is not None:
        return fail(new, step_error(plan.actions[done].body, error), snapshot.now)
    new["phase"] = InstallPlanPhase.INSTALLING.value
    for key in ("conditions", "message"):
        if key in old_status:
            new[key] = old_status[key]
        else:
            new.pop(key, None)
    return replace(plan, actions=plan.actions[:done], status=new, again=False)
