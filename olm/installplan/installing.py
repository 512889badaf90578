"""The Installing phase of an InstallPlan (OLM v0 `ExecutePlan`), stage by stage.

Each pass decides on a fresh snapshot (the controller decides again right after carrying out
a stage, in the same reconcile), and goes through the stages in order until one ends it:
0. Start and admission: every step must hold a Kubernetes object; the install policy
   (`olm.installplan.policy`) and the tenancy opt-in (`olm.installplan.tenancy`) are checked
   before the first write, so a refused bundle leaves nothing behind.
1. CRDs: created (WaitingForApi, then Created once Established and NamesAccepted) or, when
   they exist, checked for upgrade safety (§3.4) and updated (Present); either way labelled
   `olm.managed=true` (as OLM's catalog/step.go does) and annotated
   `operatorframework.io/installed-alongside-<hash>: <namespace>/<csv>` for the step's CSV,
   beside the references the CRD already has (OLM's record of who installed it). Nothing else
   runs until every CRD of the plan is Established; after `API_DEADLINE_SECONDS` the plan fails.
2. CSVs: created (Created) labelled `olm.managed=true` (OLM's ExecutePlan), or left exactly
   as they are when they exist (Present; a plan never overwrites a CSV).
3. Everything else, once the CSVs exist (their uids go into the owner references; bundle
   Services, ConfigMaps and Secrets get one to the CSV their step resolves, as OLM adds it),
   labelled `olm.managed=true` as OLM labels what its steps write: created when absent
   (Created); when present, updated with its live owners kept (Present), and not written at
   all when it already has what the step sets. Then the plan is Complete. A step of a kind no
   API server serves keeps the plan Installing with OLM's "retrying execution due to error:
   api-server resource not found ..." for OLM's one-minute retry timeout, then fails it.

Invariants: pure (reads only its arguments; the stages share one `_Pass` that only this call
holds); a step already Present or Created is never run again; running a pass again over what
it produced decides nothing new.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from olm.api.body import meta as body_meta
from olm.api.installplan import (
    API_DEADLINE_SECONDS,
    DONE_STEP_STATUSES,
    ConditionStatus,
    InstallPlanConditionType,
    InstallPlanPhase,
    InstallPlanReason,
    StepStatus,
)
from olm.csv.status import parse_timestamp, timestamp
from olm.installplan.attenuation import RETRYING_PREFIX
from olm.installplan.crdsafety import crd_upgrade_problem
from olm.installplan.handmade import NO_STEPS_MESSAGE
from olm.installplan.objects import (
    contains,
    generated_by,
    is_established,
    managed,
    resolve_owners,
    update_for,
    with_alongside,
    with_csv_owner,
    with_resource_version,
)
from olm.installplan.partial import forbidden
from olm.installplan.policy import refusal
from olm.installplan.snapshot import (
    Action,
    Plan,
    Snapshot,
    Verb,
    fail,
    step_error,
    unserved_message,
)
from olm.installplan.status import ATTENUATED_REF, set_condition
from olm.installplan.stepref import CRD_KIND, CSV_KIND, step_manifest, step_ref
from olm.installplan.steps import csv_owner
from olm.installplan.tenancy import RIGHTS_RETRY_SECONDS, tenancy_check

# Bundle objects OLM's ExecutePlan gives an ownerReference to the CSV their step resolves.
BUNDLE_OWNED_KINDS = frozenset({"Service", "ConfigMap", "Secret"})
# How soon to look again while CRDs become Established.
WAIT_FOR_API_SECONDS = 1.0
# A step's CSV owner is not visible yet (created by an earlier pass): look again after this long.
WAIT_FOR_OWNER_SECONDS = 0.5
# A step's CSV owner that is neither created by the plan nor there: OLM retries the step for
# about a minute before failing the plan; so does olm-py.
OWNER_DEADLINE_SECONDS = 60.0
# A step of a kind no API server serves: retried this often, for OLM's install plan retry
# timeout (its --install-plan-retry-timeout, one minute by default), then the plan fails.
UNSERVED_RETRY_SECONDS = 5.0
RETRY_DEADLINE_SECONDS = 60.0


@dataclass
class _Pass:
    """One pass over the plan's steps, as the stages work through it.

    `status` is the status this pass writes; `status["plan"]` is `entries` itself, so a step
    marked here shows in every Plan the pass returns, the Failed ones included. `manifests`
    are the steps' objects, index for index. `actions` are the writes decided so far.
    """

    snapshot: Snapshot
    status: dict[str, Any]
    started: datetime.datetime
    entries: list[dict[str, Any]]
    manifests: list[dict[str, Any]]
    actions: list[Action] = field(default_factory=list)

    @property
    def now(self) -> datetime.datetime:
        return self.snapshot.now

    @property
    def namespace(self) -> str:
        return str(body_meta(self.snapshot.plan).get("namespace") or "")

    def done(self, index: int) -> bool:
        """The step was carried out by an earlier pass (Present or Created)."""
        status = self.entries[index].get("status")  # free-form in the CRD: any JSON value
        return isinstance(status, str) and status in DONE_STEP_STATUSES

    def mark(self, index: int, result: StepStatus) -> None:
        self.entries[index] = {**self.entries[index], "status": result.value}

    def resolving(self, index: int) -> str:
        """The CSV the step was resolved for ("" when the entry does not say)."""
        value = self.entries[index].get("resolving")
        return value if isinstance(value, str) else ""

    def stage(self, kinds: set[str] | None) -> list[int]:
        """The indexes of the steps of `kinds`; None: every step but CRDs and CSVs."""
        return [
            i
            for i, m in enumerate(self.manifests)
            if (m["kind"] in kinds if kinds is not None else m["kind"] not in (CRD_KIND, CSV_KIND))
        ]

    def waited(self) -> float:
        """Seconds since the plan started Installing."""
        return (self.now - self.started).total_seconds()

    def fail(self, message: str) -> Plan:
        """The Plan that fails the plan with `message`, the steps marked so far kept."""
        return fail(self.status, message, self.now)

    def wait(self, seconds: float) -> Plan:
        """Write what was decided so far, and look again after `seconds`."""
        return Plan(tuple(self.actions), self.status, requeue_after=seconds)


def install(snapshot: Snapshot, status: Mapping[str, Any]) -> Plan:
    """One pass of the Installing phase over `status` (the group check's, see `decide`)."""
    work = _start(snapshot, status)
    if isinstance(work, Plan):
        return work
    for stage in (_admit, _crds, _csvs):
        plan = stage(work)
        if plan is not None:
            return plan
    return _others(work)


def _start(snapshot: Snapshot, status: Mapping[str, Any]) -> _Pass | Plan:
    """The pass over the plan's steps (its startTime set on the first), or the failing Plan
    when there are no steps or one holds no Kubernetes object."""
    now = snapshot.now
    entries = [dict(e) if isinstance(e, Mapping) else {} for e in status.get("plan") or []]
    if not entries:
        return fail(status, NO_STEPS_MESSAGE, now, InstallPlanReason.PLAN_UNKNOWN)
    new: dict[str, Any] = {**status, "plan": entries}
    started = parse_timestamp(status.get("startTime"))
    if started is None:
        started = now
        new["startTime"] = timestamp(now)
    manifests: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        manifest = step_manifest(entry)
        if manifest is None:
            return fail(
                new,
                f"status.plan[{index}].resource.manifest is not a Kubernetes object "
                "(JSON with apiVersion, kind and metadata.name); InstallPlans are made by "
                "Subscriptions: delete this one and the Subscription makes a new one",
                now,
                InstallPlanReason.PLAN_UNKNOWN,
            )
        manifests.append(manifest)
    return _Pass(snapshot, new, started, entries, manifests)


def _admit(work: _Pass) -> Plan | None:
    """Stage 0, before the first write: the Plan that fails a bundle the install policy
    refuses, or that fails or holds back a plan the tenancy opt-in refuses; None to go on."""
    snapshot = work.snapshot
    refused = refusal(work.entries, work.manifests, snapshot.policy)
    if refused is not None:  # a refused bundle leaves nothing
        work.status["plan"], message = refused
        return work.fail(message)
    verdict = tenancy_check(
        snapshot.policy.admin_namespaces,
        snapshot.plan,
        work.manifests,
        snapshot.groups,
        snapshot.access,
        work.status.get(ATTENUATED_REF),
    )
    if verdict is None:
        return None
    failed, message = verdict
    if failed:
        return work.fail(message)
    # The scoped ServiceAccount lacks rights the plan needs: Installing, as for a Forbidden.
    retry = forbidden(snapshot, Plan(status=work.status), 0, message)
    return replace(retry, requeue_after=RIGHTS_RETRY_SECONDS)


def _crds(work: _Pass) -> Plan | None:
    """Stage 1: create or update the plan's CRDs; the Plan that waits until every one is
    Established (or fails the plan), or None to go on with the CRD writes decided."""
    snapshot = work.snapshot
    waiting: list[int] = []
    for index in work.stage({CRD_KIND}):
        manifest = work.manifests[index]
        ref = step_ref(manifest)
        live = snapshot.objects.get(ref)
        if ref in snapshot.unserved:
            return work.fail(step_error(manifest, snapshot.unserved[ref]))
        if work.done(index):
            if live is not None and not is_established(live):
                waiting.append(index)
            continue
        if work.entries[index].get("status") == StepStatus.WAITING_FOR_API:
            if is_established(live):
                work.mark(index, StepStatus.CREATED)
            else:
                waiting.append(index)
            continue
        if live is not None and body_meta(live).get("deletionTimestamp"):
            # Being deleted (its custom resources are being removed): writing it now would be
            # lost with it; it is created again once it is gone.
            waiting.append(index)
            continue
        body = managed(
            with_alongside(
                manifest, live, work.namespace, work.resolving(index), snapshot.alongside
            )
        )
        if live is None:
            work.actions.append(Action(index, Verb.APPLY, body, StepStatus.WAITING_FOR_API))
            work.mark(index, StepStatus.WAITING_FOR_API)
            waiting.append(index)
            continue
        problem = crd_upgrade_problem(live, manifest, snapshot.custom_resources)
        if problem:
            # Refused before any CSV of the plan is written (OLM writes the CSV first, and it
            # then replaces the running version over the old CRD): what runs stays untouched.
            return work.fail(step_error(manifest, problem))
        work.actions.append(Action(index, Verb.APPLY, body, StepStatus.PRESENT))
        work.mark(index, StepStatus.PRESENT)
        if not is_established(live):
            waiting.append(index)
    return _wait_for_crds(work, waiting) if waiting else None


def _wait_for_crds(work: _Pass, waiting: list[int]) -> Plan:
    """The Plan while the CRD steps at `waiting` are not Established: look again soon, or
    fail once the plan has waited `API_DEADLINE_SECONDS`."""
    if work.waited() > API_DEADLINE_SECONDS:
        names = ", ".join(step_ref(work.manifests[i])[3] for i in waiting)
        return work.fail(
            f"CustomResourceDefinition {names} did not become Established within "
            f"{API_DEADLINE_SECONDS // 60} minutes; check the CRD's status conditions"
        )
    return work.wait(WAIT_FOR_API_SECONDS)


def _csvs(work: _Pass) -> Plan | None:
    """Stage 2: create the CSV steps not done yet (created, never overwritten). The Plan that
    writes them and decides again (the rest needs their uids), or None when none is new."""
    created = []
    for index in work.stage({CSV_KIND}):
        if work.done(index):
            continue
        manifest = work.manifests[index]
        if work.snapshot.objects.get(step_ref(manifest)) is not None:
            work.mark(index, StepStatus.PRESENT)
            continue
        body = managed(copy.deepcopy(dict(manifest)))
        created.append(Action(index, Verb.CREATE, body, StepStatus.CREATED))
        work.mark(index, StepStatus.CREATED)
    if not created:
        return None
    return Plan((*work.actions, *created), work.status, again=True)


def _others(work: _Pass) -> Plan:
    """Stage 3: every other step, owned by the CSVs; the plan is Complete once all are
    written, unless a step's CSV owner is not there yet (`_wait_for_owners`)."""
    snapshot = work.snapshot
    _own_bundle_objects(work)
    csv_uids = _csv_uids(snapshot)
    waiting = _wait_for_owners(work, csv_uids)
    if waiting is not None:
        return waiting
    for index in work.stage(None):
        if work.done(index):
            continue
        manifest = work.manifests[index]
        ref = step_ref(manifest)
        if ref in snapshot.unserved:
            return _unserved(work, index)
        plan_name = str(body_meta(snapshot.plan).get("name") or "")
        body = generated_by(managed(resolve_owners(manifest, csv_uids)), plan_name)
        live = snapshot.objects.get(ref)
        if live is None:
            work.actions.append(Action(index, Verb.CREATE, body, StepStatus.CREATED))
            work.mark(index, StepStatus.CREATED)
            continue
        desired = update_for(live, body)
        if not contains(live, desired):
            work.actions.append(
                Action(index, Verb.APPLY, with_resource_version(desired, live), StepStatus.PRESENT)
            )
        work.mark(index, StepStatus.PRESENT)
    return _complete(work)


def _own_bundle_objects(work: _Pass) -> None:
    """Give bundle Services, ConfigMaps and Secrets a non-blocking ownerReference to the CSV
    their step resolves, as OLM's ExecutePlan adds."""
    for index in work.stage(set(BUNDLE_OWNED_KINDS)):
        if work.resolving(index):
            work.manifests[index] = with_csv_owner(
                work.manifests[index], csv_owner(work.resolving(index))
            )


def _csv_uids(snapshot: Snapshot) -> dict[str, str]:
    """The uid of each CSV the snapshot read, by name ("" for one without)."""
    return {
        ref[3]: str(body_meta(obj).get("uid") or "")
        for ref, obj in snapshot.objects.items()
        if ref[1] == CSV_KIND and obj is not None
    }


def _wait_for_owners(work: _Pass, csv_uids: Mapping[str, str]) -> Plan | None:
    """None when every step not done has the uid of each CSV it names as owner; else the
    Plan that waits for them, or fails when one was deleted or never appeared in time.

    Never write a step without its CSV owner: an object owned only by the CSV it replaces is
    deleted by the garbage collector with that CSV (issue 16).
    """
    unknown_owners = sorted(
        {
            str(owner.get("name", ""))
            for index in work.stage(None)
            if not work.done(index)
            for owner in body_meta(work.manifests[index]).get("ownerReferences") or []
            if owner.get("kind") == CSV_KIND
            and not owner.get("uid")
            and not csv_uids.get(str(owner.get("name", "")))
        }
    )
    if not unknown_owners:
        return None
    planned = {step_ref(work.manifests[i])[3] for i in work.stage({CSV_KIND})}
    read = {ref[3] for ref in work.snapshot.objects if ref[1] == CSV_KIND}
    gone = [name for name in unknown_owners if name in planned and name in read]
    if gone:  # the snapshot read it, and it is not there: deleted after this plan made it
        return work.fail(
            f"ClusterServiceVersion {', '.join(gone)} was deleted before this InstallPlan "
            "finished; its ServiceAccounts and RBAC are not created without their owner. "
            "The Subscription resolves again; delete this InstallPlan if nothing does."
        )
    if work.waited() > OWNER_DEADLINE_SECONDS:
        names = ", ".join(unknown_owners)
        return work.fail(
            f"a step names ClusterServiceVersion {names} as its owner, and no "
            f"ClusterServiceVersion of that name appeared in namespace {work.namespace} "
            f"within {OWNER_DEADLINE_SECONDS:.0f} s; create it, or delete this InstallPlan"
        )
    return work.wait(WAIT_FOR_OWNER_SECONDS)


def _unserved(work: _Pass, index: int) -> Plan:
    """A step of a kind no API server serves (yet: a CRD or an APIService may bring it): OLM
    keeps the plan Installing, its message "retrying execution due to error: ..." with OLM's
    sentence, and fails the plan with that sentence once it has retried for
    `RETRY_DEADLINE_SECONDS`. A Warning Event says it when the message is new."""
    message = unserved_message(work.entries[index], work.manifests[index])
    if work.waited() > RETRY_DEADLINE_SECONDS:
        return work.fail(message)
    retrying = RETRYING_PREFIX + message
    old = work.snapshot.plan.get("status") or {}
    reason = InstallPlanReason.INSTALL_COMPONENT_FAILED.value
    return Plan(
        tuple(work.actions),
        {**work.status, "message": retrying},
        requeue_after=UNSERVED_RETRY_SECONDS,
        event=None if old.get("message") == retrying else ("Warning", reason, message),
    )


def _complete(work: _Pass) -> Plan:
    """The Plan that writes the last steps and marks the plan Complete and Installed."""
    new = work.status
    new["phase"] = InstallPlanPhase.COMPLETE.value
    new.pop("message", None)
    new["conditions"] = set_condition(
        list(new.get("conditions") or []),
        InstallPlanConditionType.INSTALLED,
        ConditionStatus.TRUE,
        work.now,
    )
    return Plan(tuple(work.actions), new)
