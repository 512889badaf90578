"""The InstallPlan phase machine (OLM v0 §5.4): a snapshot in, the writes and the status out.

Phases: a plan with no phase belongs to its Subscription (which writes the first status); a
plan nobody made that way (no Subscription owns it) fails with an explanation. RequiresApproval
waits for `spec.approved`; Installing runs the steps; Complete and Failed are terminal.

Installing runs in stages, each on a fresh snapshot (the controller decides again right after
carrying out a stage, in the same reconcile):
1. CRDs: created (WaitingForApi, then Created once Established and NamesAccepted) or, when
   they exist, checked for upgrade safety (§3.4) and updated (Present); either way labelled
   `olm.managed=true` (as OLM's catalog/step.go does) and annotated
   `operatorframework.io/installed-alongside-<hash>: <namespace>/<csv>` for the step's CSV,
   beside the references the CRD already has (OLM's record of who installed it). Nothing else runs
   until every CRD of the plan is Established; after `API_DEADLINE_SECONDS` the plan fails.
2. CSVs: created (Created) labelled `olm.managed=true` (OLM's ExecutePlan), or left exactly
   as they are when they exist (Present; a plan never overwrites a CSV).
3. Everything else, once the CSVs exist (their uids go into the owner references; bundle
   Services, ConfigMaps and Secrets get one to the CSV their step resolves, as OLM adds it),
   labelled `olm.managed=true` as OLM labels what its steps write: created
   when absent (Created); when present, updated with its live owners kept (Present), and not
   written at all when it already has what the step sets.
A step already Present or Created is never run again, and a plan that reached Complete or
Failed, or that this process already finished (`Snapshot.finished`), runs nothing at all.

Scoped installs (OLM's attenuated ServiceAccount): before a plan runs, the namespace's
OperatorGroups are asked which ServiceAccount it acts as (`olm.groups.serviceaccount`). The
answer goes to `status.attenuatedServiceAccountRef`, and the controller writes every step but
CRDs as that ServiceAccount. While the group is not usable (several groups, its ServiceAccount
not found) the plan keeps its phase with `Installed=False/InstallCheckFailed` and is looked at
again; a Forbidden answer keeps it Installing with "retrying execution due to error: ..." naming
what to grant (`forbidden`), as OLM does.
With the tenancy opt-in (`olm.installplan.tenancy`) a tenant's plan asking for more RBAC
than a tenant may give fails, and a scoped group's ServiceAccount that lacks rights the plan
needs (`Snapshot.access`) keeps it Installing the same way; both before the first write.

Invariants: pure (reads only its argument); running it again over what it produced decides
nothing new; every failure a user can fix ends in `Failed` with a message naming the step or
the field, and the fix.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from olm.api.installplan import (
    API_DEADLINE_SECONDS,
    DONE_STEP_STATUSES,
    TERMINAL_PHASES,
    ConditionStatus,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
    StepStatus,
)
from olm.csv.status import parse_timestamp, timestamp
from olm.groups.serviceaccount import query_service_account
from olm.installplan.crdsafety import crd_upgrade_problem
from olm.installplan.handmade import (
    HAND_MADE_GRACE_SECONDS,
    NO_STEPS_MESSAGE,
    hand_made_message,
    owned_by_subscription,
)
from olm.installplan.objects import (
    contains,
    is_established,
    managed,
    resolve_owners,
    update_for,
    with_alongside,
    with_csv_owner,
    with_resource_version,
)
from olm.installplan.policy import DEFAULT_POLICY, InstallPolicy, refusal
from olm.installplan.status import failed_status, set_condition
from olm.installplan.stepref import CRD_KIND, CSV_KIND, Ref, step_manifest, step_ref
from olm.installplan.steps import csv_owner
from olm.installplan.tenancy import RIGHTS_RETRY_SECONDS, Right, tenancy_check

# Bundle objects OLM's ExecutePlan gives an ownerReference to the CSV their step resolves.
BUNDLE_OWNED_KINDS = frozenset({"Service", "ConfigMap", "Secret"})
# How soon to look again while CRDs become Established.
WAIT_FOR_API_SECONDS = 1.0
# A step's CSV owner is not visible yet (created by an earlier pass): look again after this long.
WAIT_FOR_OWNER_SECONDS = 0.5
# A step's CSV owner that is neither created by the plan nor there: OLM retries the step for
# about a minute before failing the plan; so does olm-py.
OWNER_DEADLINE_SECONDS = 60.0
# The namespace's OperatorGroup cannot say which ServiceAccount to act as: look again this soon.
GROUP_CHECK_RETRY_SECONDS = 2.0
ATTENUATED_REF = "attenuatedServiceAccountRef"


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


def _fail(
    status: Mapping[str, Any],
    message: str,
    now: datetime.datetime,
    reason: InstallPlanReason = InstallPlanReason.INSTALL_COMPONENT_FAILED,
) -> Plan:
    return Plan(
        status=failed_status(status, message, reason, now),
        event=("Warning", reason.value, message),
    )


def step_error(manifest: Mapping[str, Any], error: str) -> str:
    return f"error creating step {manifest.get('kind', '')} {step_ref(manifest)[3]}: {error}"


# ----- the phase machine ----------------------------------------------------------------------


def decide(snapshot: Snapshot) -> Plan:
    plan = snapshot.plan
    status = plan.get("status") or {}
    phase = status.get("phase") or InstallPlanPhase.NONE.value
    if snapshot.finished or phase in TERMINAL_PHASES:
        return Plan()
    if phase == InstallPlanPhase.NONE:
        if owned_by_subscription(plan):
            return Plan()  # its Subscription writes the first status (and adopts it after a crash)
        created = parse_timestamp((plan.get("metadata") or {}).get("creationTimestamp"))
        waited = (snapshot.now - created).total_seconds() if created is not None else None
        if waited is not None and waited < HAND_MADE_GRACE_SECONDS:
            # A tool (OLM's own e2e suite among them) may create a plan and then write its
            # status: give it the time to, before calling the plan hand-made.
            return Plan(requeue_after=HAND_MADE_GRACE_SECONDS - waited)
        return _fail(
            {**status, "plan": []},
            hand_made_message(plan),
            snapshot.now,
            InstallPlanReason.PLAN_UNKNOWN,
        )
    if phase == InstallPlanPhase.REQUIRES_APPROVAL:
        if (plan.get("spec") or {}).get("approved") is True:
            return Plan(status={**status, "phase": InstallPlanPhase.INSTALLING.value}, again=True)
        return Plan()
    if phase == InstallPlanPhase.INSTALLING:
        scoped = _scope(snapshot, status)
        if isinstance(scoped, Plan):
            return scoped
        return _install(snapshot, scoped)
    return Plan()  # Planning (OLM never sets it) is not a state olm-py moves a plan out of


def _scope(snapshot: Snapshot, status: Mapping[str, Any]) -> Plan | dict[str, Any]:
    """The status to install with (its attenuatedServiceAccountRef set or cleared, an old
    InstallCheckFailed condition gone), or the Plan that waits for the OperatorGroup."""
    ref, problem = query_service_account(snapshot.groups)
    conditions = list(status.get("conditions") or [])
    installed = next(
        (c for c in conditions if c.get("type") == InstallPlanConditionType.INSTALLED), None
    )
    checking = bool(
        installed and installed.get("reason") == InstallPlanReason.INSTALL_CHECK_FAILED.value
    )
    if problem is not None:
        if checking and installed is not None and installed.get("message") == problem:
            return Plan(requeue_after=GROUP_CHECK_RETRY_SECONDS)
        new = {
            **status,
            "conditions": set_condition(
                conditions,
                InstallPlanConditionType.INSTALLED,
                ConditionStatus.FALSE,
                snapshot.now,
                InstallPlanReason.INSTALL_CHECK_FAILED,
                problem,
            ),
        }
        return Plan(
            status=new,
            requeue_after=GROUP_CHECK_RETRY_SECONDS,
            event=("Warning", InstallPlanReason.INSTALL_CHECK_FAILED.value, problem),
        )
    new = dict(status)
    if checking:
        new["conditions"] = [c for c in conditions if c is not installed]
        if not new["conditions"]:
            del new["conditions"]
    if ref is not None:
        new[ATTENUATED_REF] = ref
    else:
        new.pop(ATTENUATED_REF, None)
    return new


def forbidden(snapshot: Snapshot, plan: Plan, done: int, message: str) -> Plan:
    """The plan when the attenuated ServiceAccount may not write action `done`: what was
    written keeps its step status, the plan stays Installing with `message` (OLM: a Forbidden
    is never terminal), and an Event says it when the message is new."""
    stale = interrupted(snapshot, plan, done)
    assert stale.status is not None and plan.status is not None
    new = {**stale.status, "message": message}
    if "conditions" in plan.status:  # as the group check left them (see `_scope`)
        new["conditions"] = plan.status["conditions"]
    else:
        new.pop("conditions", None)
    old = snapshot.plan.get("status") or {}
    reason = InstallPlanReason.INSTALL_COMPONENT_FAILED.value
    event = None if old.get("message") == message else ("Warning", reason, message)
    return Plan(stale.actions, new, event=event)


def _install(snapshot: Snapshot, status: Mapping[str, Any]) -> Plan:
    now = snapshot.now
    entries = [dict(e) if isinstance(e, Mapping) else {} for e in status.get("plan") or []]
    if not entries:
        return _fail(status, NO_STEPS_MESSAGE, now, InstallPlanReason.PLAN_UNKNOWN)
    new: dict[str, Any] = {**status, "plan": entries}
    started = parse_timestamp(status.get("startTime"))
    if started is None:
        started = now
        new["startTime"] = timestamp(now)
    manifests: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        manifest = step_manifest(entry)
        if manifest is None:
            return _fail(
                new,
                f"status.plan[{index}].resource.manifest is not a Kubernetes object "
                "(JSON with apiVersion, kind and metadata.name); InstallPlans are made by "
                "Subscriptions: delete this one and the Subscription makes a new one",
                now,
                InstallPlanReason.PLAN_UNKNOWN,
            )
        manifests.append(manifest)
    refused = refusal(entries, manifests, snapshot.policy)
    if refused is not None:  # checked before the first write: a refused bundle leaves nothing
        new["plan"], message = refused
        return _fail(new, message, now)
    verdict = tenancy_check(
        snapshot.policy.admin_namespaces,
        snapshot.plan,
        manifests,
        snapshot.groups,
        snapshot.access,
        new.get(ATTENUATED_REF),
    )
    if verdict is not None:  # the tenancy opt-in (olm.installplan.tenancy), as early
        failed, message = verdict
        if failed:
            return _fail(new, message, now)
        retry = forbidden(snapshot, Plan(status=new), 0, message)
        return replace(retry, requeue_after=RIGHTS_RETRY_SECONDS)
    actions: list[Action] = []

    def done(index: int) -> bool:
        status = entries[index].get("status")  # free-form in the CRD: any JSON value
        return isinstance(status, str) and status in DONE_STEP_STATUSES

    def mark(index: int, result: StepStatus) -> None:
        entries[index] = {**entries[index], "status": result.value}

    def resolving(index: int) -> str:
        value = entries[index].get("resolving")
        return value if isinstance(value, str) else ""

    plan_namespace = str((snapshot.plan.get("metadata") or {}).get("namespace") or "")

    def stage(kinds: set[str] | None) -> list[int]:
        return [
            i
            for i, m in enumerate(manifests)
            if (m["kind"] in kinds if kinds is not None else m["kind"] not in (CRD_KIND, CSV_KIND))
        ]

    def create_csvs() -> list[Action]:
        """Create the CSV steps not done yet; created, never overwritten."""
        created = []
        for index in stage({CSV_KIND}):
            if done(index):
                continue
            manifest = manifests[index]
            if snapshot.objects.get(step_ref(manifest)) is not None:
                mark(index, StepStatus.PRESENT)
                continue
            body = managed(copy.deepcopy(dict(manifest)))
            created.append(Action(index, Verb.CREATE, body, StepStatus.CREATED))
            mark(index, StepStatus.CREATED)
        return created

    # 1. CRDs, and the wait for them to be Established.
    waiting: list[int] = []
    for index in stage({CRD_KIND}):
        manifest = manifests[index]
        ref = step_ref(manifest)
        live = snapshot.objects.get(ref)
        if ref in snapshot.unserved:
            return _fail(new, step_error(manifest, snapshot.unserved[ref]), now)
        if done(index):
            if live is not None and not is_established(live):
                waiting.append(index)
            continue
        if entries[index].get("status") == StepStatus.WAITING_FOR_API:
            if is_established(live):
                mark(index, StepStatus.CREATED)
            else:
                waiting.append(index)
            continue
        if live is not None and (live.get("metadata") or {}).get("deletionTimestamp"):
            # Being deleted (its custom resources are being removed): writing it now would be
            # lost with it; it is created again once it is gone.
            waiting.append(index)
            continue
        body = managed(with_alongside(manifest, live, plan_namespace, resolving(index)))
        if live is None:
            actions.append(Action(index, Verb.APPLY, body, StepStatus.WAITING_FOR_API))
            mark(index, StepStatus.WAITING_FOR_API)
            waiting.append(index)
            continue
        problem = crd_upgrade_problem(live, manifest, snapshot.custom_resources)
        if problem:
            # Refused before any CSV of the plan is written (OLM writes the CSV first, and it
            # then replaces the running version over the old CRD): what runs stays untouched.
            return _fail(new, step_error(manifest, problem), now)
        actions.append(Action(index, Verb.APPLY, body, StepStatus.PRESENT))
        mark(index, StepStatus.PRESENT)
        if not is_established(live):
            waiting.append(index)
    if waiting:
        if (now - started).total_seconds() > API_DEADLINE_SECONDS:
            names = ", ".join(step_ref(manifests[i])[3] for i in waiting)
            return _fail(
                new,
                f"CustomResourceDefinition {names} did not become Established within "
                f"{API_DEADLINE_SECONDS // 60} minutes; check the CRD's status conditions",
                now,
            )
        return Plan(tuple(actions), new, requeue_after=WAIT_FOR_API_SECONDS)

    # 2. CSVs: created, never overwritten.
    created = create_csvs()
    if created:  # the rest needs the new CSVs' uids
        return Plan((*actions, *created), new, again=True)

    # 3. Everything else, owned by the CSVs. Bundle Services, ConfigMaps and Secrets get a
    # non-blocking ownerReference to the CSV their step resolves, as OLM's ExecutePlan adds.
    for index in stage(set(BUNDLE_OWNED_KINDS)):
        if resolving(index):
            manifests[index] = with_csv_owner(manifests[index], csv_owner(resolving(index)))
    csv_uids = {
        ref[3]: str((obj.get("metadata") or {}).get("uid") or "")
        for ref, obj in snapshot.objects.items()
        if ref[1] == CSV_KIND and obj is not None
    }
    unknown_owners = sorted(
        {
            str(owner.get("name", ""))
            for index in stage(None)
            if not done(index)
            for owner in (manifests[index].get("metadata") or {}).get("ownerReferences") or []
            if owner.get("kind") == CSV_KIND
            and not owner.get("uid")
            and not csv_uids.get(str(owner.get("name", "")))
        }
    )
    if unknown_owners:
        # Never write a step without its CSV owner: an object owned only by the CSV it
        # replaces is deleted by the garbage collector with that CSV (issue 16).
        # A CSV of this plan that was read and is not there was deleted after the plan made it.
        planned = {step_ref(manifests[i])[3] for i in stage({CSV_KIND})}
        read = {ref[3] for ref in snapshot.objects if ref[1] == CSV_KIND}
        gone = [name for name in unknown_owners if name in planned and name in read]
        if gone:  # the snapshot read it, and it is not there: deleted after this plan made it
            return _fail(
                new,
                f"ClusterServiceVersion {', '.join(gone)} was deleted before this InstallPlan "
                "finished; its ServiceAccounts and RBAC are not created without their owner. "
                "The Subscription resolves again; delete this InstallPlan if nothing does.",
                now,
            )
        if (now - started).total_seconds() > OWNER_DEADLINE_SECONDS:
            names = ", ".join(unknown_owners)
            return _fail(
                new,
                f"a step names ClusterServiceVersion {names} as its owner, and no "
                f"ClusterServiceVersion of that name appeared in namespace {plan_namespace} "
                f"within {OWNER_DEADLINE_SECONDS:.0f} s; create it, or delete this InstallPlan",
                now,
            )
        return Plan(tuple(actions), new, requeue_after=WAIT_FOR_OWNER_SECONDS)
    for index in stage(None):
        if done(index):
            continue
        manifest = manifests[index]
        ref = step_ref(manifest)
        if ref in snapshot.unserved:
            return _fail(new, step_error(manifest, snapshot.unserved[ref]), now)
        body = managed(resolve_owners(manifest, csv_uids))
        live = snapshot.objects.get(ref)
        if live is None:
            actions.append(Action(index, Verb.CREATE, body, StepStatus.CREATED))
            mark(index, StepStatus.CREATED)
            continue
        desired = update_for(live, body)
        if not contains(live, desired):
            actions.append(
                Action(index, Verb.APPLY, with_resource_version(desired, live), StepStatus.PRESENT)
            )
        mark(index, StepStatus.PRESENT)

    new["phase"] = InstallPlanPhase.COMPLETE.value
    new.pop("message", None)
    new["conditions"] = set_condition(
        list(status.get("conditions") or []),
        InstallPlanConditionType.INSTALLED,
        ConditionStatus.TRUE,
        now,
    )
    return Plan(tuple(actions), new)


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
        return _fail(new, step_error(plan.actions[done].body, error), snapshot.now)
    new["phase"] = InstallPlanPhase.INSTALLING.value
    for key in ("conditions", "message"):
        if key in old_status:
            new[key] = old_status[key]
        else:
            new.pop(key, None)
    return replace(plan, actions=plan.actions[:done], status=new, again=False)
