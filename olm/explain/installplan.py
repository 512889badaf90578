"""Why an InstallPlan has not installed its operators (OLM v0 §5.4), or that it has:

- no phase: olm-py has not written its status yet;
- RequiresApproval: it waits for a person (`spec.approval: Manual`, `spec.approved: false`);
  the fix is the approval itself. As in OLM, one plan serves every Subscription of the
  namespace, so approving it installs all the CSVs it lists: the chain says which;
- Installing: the Installed condition's message when it has one (a scoped install's missing
  right, no usable OperatorGroup), else it is at work;
- Failed: the Installed condition's message (it names the step and the fix) and the steps that
  did not complete; once the cause is fixed, deleting the plan makes the Subscription resolve
  again;
- Complete: the CSVs it installed, each explained in turn.

Invariant: pure.
"""

from __future__ import annotations

from olm.api.body import meta, name, namespace
from olm.api.installplan import (
    DONE_STEP_STATUSES,
    Approval,
    InstallPlanPhase,
    InstallPlanReason,
    StepStatus,
)
from olm.api.kinds import Kind
from olm.csv.replacement import replaces
from olm.explain import commands
from olm.explain.csv import explain_csv
from olm.explain.groups import membership
from olm.explain.model import (
    NOTHING_SEEN,
    Explanation,
    Fix,
    Link,
    Obj,
    Seen,
    Snapshot,
    healthy,
    in_progress,
    problem,
    spec,
    status,
)
from olm.subscription.plans import csv_names, installed_condition, phase, plan_message

KIND = Kind.INSTALL_PLAN.value
NOT_RUN = frozenset({StepStatus.UNKNOWN.value, StepStatus.NOT_PRESENT.value})
STEPS_SHOWN = 5


def _owners(plan: Obj) -> list[str]:
    return sorted(
        str(ref.get("name"))
        for ref in meta(plan).get("ownerReferences") or []
        if ref.get("kind") == Kind.SUBSCRIPTION.value
    )


def explain_plan(snapshot: Snapshot, plan: Obj, seen: Seen = NOTHING_SEEN) -> Explanation:
    plan_name, plan_ns = name(plan), namespace(plan)
    plan_phase = phase(plan)
    csvs = sorted(csv_names(plan))
    installs = f"it installs {', '.join(csvs)}" if csvs else "it lists no CSV"
    message = plan_message(plan) or str(status(plan).get("message") or "")
    if not plan_phase:
        return in_progress(
            Link(KIND, plan_name, plan_ns, "no phase", installs),
            f"InstallPlan {plan_name} has no status yet: olm-py has not planned its steps",
        )
    if plan_phase == InstallPlanPhase.REQUIRES_APPROVAL:
        approval = str(spec(plan).get("approval") or Approval.MANUAL.value)
        owners = _owners(plan)
        shared = (
            f"; approving it installs all of them, for Subscriptions {', '.join(owners)}"
            if len(owners) > 1 or len(csvs) > 1
            else ""
        )
        link = Link(
            KIND,
            plan_name,
            plan_ns,
            plan_phase,
            f"waits for approval ({approval}); {installs}{shared}",
        )
        return problem(
            link,
            f"InstallPlan {plan_name} waits for a person to approve it (installPlanApproval: {approval})",
            Fix("approve it", commands.approve(plan_name, plan_ns)),
        )
    if plan_phase == InstallPlanPhase.INSTALLING:
        installed = installed_condition(plan)
        link = Link(KIND, plan_name, plan_ns, plan_phase, message or installs)
        if installed.get("reason") == InstallPlanReason.INSTALL_CHECK_FAILED:
            group = membership(snapshot, plan_ns)
            if group is not None:
                return group.after(link)
        if message:
            return problem(
                link,
                message,
                Fix("fix what the message names; the InstallPlan retries by itself"),
            )
        return in_progress(link, f"InstallPlan {plan_name} is installing: {installs}")
    if plan_phase == InstallPlanPhase.FAILED:
        return _failed(plan, message, installs)
    link = Link(KIND, plan_name, plan_ns, plan_phase, installs)
    for csv_name in csvs:
        csv = snapshot.csv(csv_name, plan_ns)
        successors = [c for c in snapshot.csvs if replaces(c) == csv_name]
        if csv is None and successors:
            continue  # upgraded since: the plan's CSV was replaced and deleted, as it should
        if csv is None:
            return problem(
                link,
                f"InstallPlan {plan_name} completed, but CSV {csv_name} is not in namespace {plan_ns} (deleted since?)",
                Fix("see the Subscription that wants it", commands.get("subscriptions", plan_ns)),
            )
        if (Kind.CLUSTER_SERVICE_VERSION.value, plan_ns, csv_name) in seen:
            continue
        following = explain_csv(snapshot, csv, seen)
        if not following.healthy:
            return following.after(link)
    return healthy(link, f"InstallPlan {plan_name} is Complete and what it installed Succeeded")


def _failed(plan: Obj, message: str, installs: str) -> Explanation:
    plan_name, plan_ns = name(plan), namespace(plan)
    done = {d.value for d in DONE_STEP_STATUSES}
    not_done = [s for s in status(plan).get("plan") or [] if s.get("status") not in done]
    # The steps that went wrong (UnsupportedResource, WaitingForApi, ...) by name; those that
    # never ran only counted, unless nothing else is there to show.
    wrong = [s for s in not_done if s.get("status") not in NOT_RUN]
    named = [
        f"{(s.get('resource') or {}).get('kind')} {(s.get('resource') or {}).get('name')} "
        f"({s.get('status')})"
        for s in (wrong or not_done)[:STEPS_SHOWN]
    ]
    unnamed = len(not_done) - len(named)
    says = f"failed; {installs}"
    if named:
        says += f"; {'steps that went wrong' if wrong else 'steps not done'}: {', '.join(named)}"
    if unnamed:
        says += f"; {unnamed} other step(s) not run"
    reason = str(installed_condition(plan).get("reason") or "")
    return problem(
        Link(
            KIND,
            plan_name,
            plan_ns,
            f"{InstallPlanPhase.FAILED.value}/{reason}"
            if reason
            else InstallPlanPhase.FAILED.value,
            says,
        ),
        message or f"InstallPlan {plan_name} failed",
        Fix(
            "fix the cause it names, then delete the failed InstallPlan: the Subscription resolves "
            "again and makes a new one",
            commands.delete(Kind.INSTALL_PLAN, plan_name, plan_ns),
        ),
    )
