"""The namespace decision (OLM v0 §5.2, §5.5): snapshot in, one `Plan` out.

The pipeline, per namespace:
1. settle (`olm.subscription.settle`): each Subscription's status follows what exists (its
   currentCSV exists -> AtLatestKnown + installedCSV; its InstallPlan's phase ->
   InstallPlanPending/Failed; a referenced plan that is gone -> InstallPlanMissing, and a
   pending one is resolved again);
2. resolve (`olm.subscription.resolve`), unless every Subscription waits on its InstallPlan, the namespace is terminating,
   or a catalog in scope is not loaded yet (then: requeue, and no catalog health is written);
3. the resolved bundles that need installing go into one InstallPlan
   (`olm.subscription.plans`): an existing one for the same CSVs (adopting it if its status was never written), else a new one, created alone;
   plans whose status was never written and that nobody wants any more are marked Failed;
   a chosen bundle (or dependency) known by image only is asked for (`Plan.unpacks`) and its
   Subscription waits with BundleUnpacking/UnpackingInProgress, no InstallPlan, until the
   unpacked objects are in the catalog (a failed unpack: BundleUnpackFailed, asked again);
4. catalog health and `CatalogSourcesUnhealthy`, then one status write per Subscription whose
   status changed (lastUpdated is stamped then, and only then).

Invariants: pure; a second decision over the cache the first one's writes produce writes
nothing; nothing but status is written in a terminating namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api.conditions import (
    SUBSCRIPTION_UNSTAMPED,
    find_condition,
    remove_conditions,
    timestamp,
)
from olm.api.installplan import Approval, ConditionStatus, InstallPlanPhase
from olm.api.subscription import (
    RESOLUTION_FAILED_EVENT,
    SubscriptionConditionType,
    SubscriptionReason,
    SubscriptionState,
)
from olm.api.versionpolicy import OlmPyConditionType
from olm.installplan.steps import Step
from olm.resolution.model import Candidate, Installed
from olm.subscription import plans as ip
from olm.subscription import separate
from olm.subscription.bundlesteps import Failures, named, plan_steps
from olm.subscription.deprecations import deprecation_conditions, installed_deprecations
from olm.subscription.policies import (
    annotate_new_plan,
    auto_approve,
    auto_approve_condition,
    is_rollback,
    request_done,
    rollback_condition,
    rollback_plans,
    rolled_back_from,
    stale_plans,
    version_held,
)
from olm.subscription.resolve import (
    Resolution,
    catalogs_known,
    resolve,
    unpack_request,
    version_range_of,
)
from olm.subscription.separate import PlanGroup
from olm.subscription.settle import settle, waiting
from olm.subscription.snapshot import (
    NamespaceEvent,
    NewInstallPlan,
    Plan,
    PlanStatusWrite,
    Snapshot,
    StatusWrite,
    UnpackRequest,
)
from olm.subscription.status import (
    LAST_UPDATED,
    catalog_condition,
    catalog_health,
    set_condition,
    status_patch,
)

# A catalog in scope is not loaded yet (olm-py just started): look again after this long.
REQUEUE_UNTIL_CATALOGS_KNOWN = 2.0
# While a chosen bundle's image is being unpacked (its end wakes the namespace too), as OLM.
REQUEUE_WHILE_UNPACKING = 5.0
WARNING = "Warning"
Types = SubscriptionConditionType
Status = dict[str, Any]


# ----- 2-3. resolve, and the one InstallPlan -----------------------------------------------------


@dataclass
class Resolved:
    statuses: dict[str, Status]
    plans: dict[str, Mapping[str, Any]]
    create: NewInstallPlan | None = None
    plan_statuses: list[PlanStatusWrite] = field(default_factory=list)
    events: list[NamespaceEvent] = field(default_factory=list)
    unpacks: list[UnpackRequest] = field(default_factory=list)


def _choose(
    snapshot: Snapshot,
    statuses: dict[str, Status],
    plans: Mapping[str, Mapping[str, Any]],
    outcome: Resolution,
    failures: Failures,
) -> dict[str, Candidate]:
    """The Subscriptions that move to a bundle not planned yet (and what they move to)."""
    moved: dict[str, Candidate] = {}
    for subscription in snapshot.subscriptions:
        name = subscription["metadata"]["name"]
        status = statuses[name]
        if name in failures:
            continue
        installed = outcome.installed.get(name, "")
        chosen = outcome.decision.chosen.get(name)
        if installed and installed != status.get("installedCSV"):
            # Its status is behind what is installed for it (olm-py stopped between creating
            # an InstallPlan and writing this status): follow the installed CSV.
            status["installedCSV"] = installed
            if isinstance(chosen, Installed) and chosen.csv == installed:
                status.update(currentCSV=installed, state=SubscriptionState.AT_LATEST_KNOWN.value)
            if not ip.ref_name(status):
                # A Subscription made by the plan that installed its CSV (a dependency's): it
                # refers to that plan, as OLM's does.
                made_by = [p for p in plans.values() if installed in ip.csv_names(p)]
                if made_by:
                    maker = max(made_by, key=lambda p: (ip.generation(p), p["metadata"]["name"]))
                    reference, legacy = ip.reference(maker)
                    # OLM's ensureSubscriptionInstallPlanState: no installPlanGeneration.
                    status.update(installPlanRef=reference, installplan=legacy)
        if not isinstance(chosen, Candidate):
            continue
        plan = plans.get(ip.ref_name(status))
        if (
            status.get("currentCSV") == chosen.bundle
            and plan is not None
            and ip.phase(plan) != InstallPlanPhase.NONE
        ):
            continue  # already planned: waiting, installed, or failed (no automatic retry)
        moved[name] = chosen
    return moved


def _unpacks(
    snapshot: Snapshot, moved: dict[str, Candidate], outcome: Resolution
) -> list[UnpackRequest]:
    """The bundle images to unpack before the moved Subscriptions can be planned (their
    bundles and the dependencies', all asked for at once)."""
    chosen = [*moved.values(), *(outcome.decision.dependencies if moved else [])]
    found = (unpack_request(snapshot, candidate) for candidate in chosen)
    return sorted({r for r in found if r is not None}, key=lambda r: (r.namespace, r.name, r.image))


LISTING_RANK = {"ClusterServiceVersion": 0, "CustomResourceDefinition": 1}


def listing_order(steps: list[Step]) -> list[Step]:
    """A plan's steps as OLM lists them over all its bundles (its OrderSteps): every CSV, then
    every CRD, then the rest, each in bundle order (a stable sort)."""
    return sorted(steps, key=lambda step: LISTING_RANK.get(str(step.manifest.get("kind")), 2))


def _one_plan(
    snapshot: Snapshot,
    result: Resolved,
    moved: dict[str, Candidate],
    names: list[str],
    steps: list[Step],
    dependencies: list[tuple[str, list[Step]]],
    group: PlanGroup,
) -> Mapping[str, Any] | None:
    """Point the moved Subscriptions at the one plan for their CSVs: reused (adopted when its
    status was never written), else `result.create` is set. Returns the plan reused. A plan
    of its own (olm-py's plan per Subscription) is owned and approved by `moved` only."""
    subscriptions, plans = snapshot.subscriptions, result.plans
    if group.own:
        subscriptions = tuple(s for s in subscriptions if s["metadata"]["name"] in moved)
    # `olm rollback`: a plan of its own, never the one that first installed the same CSV.
    back = {n: c for n, c in moved.items() if is_rollback(named(snapshot, n), c)}
    reusable_plans = rollback_plans(result.plans, unfinished=True) if back else plans
    uids = [s["metadata"].get("uid", "") for s in subscriptions]
    referenced = {ip.ref_name(result.statuses[name]) for name in moved}
    every = [*names, *(bundle for bundle, _ in dependencies)]
    reused = ip.reusable(reusable_plans, every, uids, referenced)
    if reused is None:
        # Dependencies a running or waiting plan installs already are not planned twice.
        # (Over every Subscription of the namespace: one with a plan of its own may be
        # installing the dependency already.)
        every_uid = [s["metadata"].get("uid", "") for s in snapshot.subscriptions]
        pending = ip.pending_csvs(plans, every_uid)
        dependencies = [(b, s) for b, s in dependencies if b not in pending]
        every = [*names, *(bundle for bundle, _ in dependencies)]
        reused = ip.reusable(reusable_plans, every, uids, referenced)
    steps = listing_order([*steps, *(step for _, found in dependencies for step in found)])
    if reused is None:
        approval = ip.approval(subscriptions)
        if back:  # a person reads and approves a rollback, whatever the approval mode
            approval = Approval.MANUAL
        generation = ip.next_generation(plans, subscriptions)
        body = ip.new_plan_body(snapshot.namespace, subscriptions, every, generation, approval)
        annotate_new_plan(body, group.shared_because, back, result.statuses)
        if approval == Approval.MANUAL and not back:  # olm-py's auto-approve (beyond OLM)
            result.events += auto_approve(
                snapshot, result.statuses, moved, body, every[len(names) :]
            )
        status = ip.plan_status(steps, approval.value)
        result.create = NewInstallPlan(body, status, tuple(result.events))
        return None
    meta = reused["metadata"]
    if ip.phase(reused) == InstallPlanPhase.NONE:
        adopted = ip.plan_status(steps, str((reused.get("spec") or {}).get("approval") or ""))
        version = str(meta.get("resourceVersion") or "")
        result.plan_statuses.append(PlanStatusWrite(meta["name"], adopted, version))
        result.plans[meta["name"]] = {**reused, "status": adopted}
    reference, legacy = ip.reference(reused)
    for name, candidate in moved.items():
        status = result.statuses[name]
        status.update(
            currentCSV=candidate.bundle,
            state=SubscriptionState.UPGRADE_PENDING.value,
            installPlanRef=reference,
            installplan=legacy,
            installPlanGeneration=ip.generation(reused),
        )
        status["conditions"] = remove_conditions(
            status.get("conditions") or [], Types.INSTALL_PLAN_MISSING
        )
    return reused


# An unpack in progress or failed: the condition shown, and its sibling taken off.
UNPACKING_CONDITIONS = {
    SubscriptionReason.UNPACKING_IN_PROGRESS: (Types.BUNDLE_UNPACKING, Types.BUNDLE_UNPACK_FAILED),
    SubscriptionReason.BUNDLE_UNPACK_FAILED: (Types.BUNDLE_UNPACK_FAILED, Types.BUNDLE_UNPACKING),
}


def _resolution_conditions(snapshot: Snapshot, result: Resolved, failures: Failures) -> None:
    """ResolutionFailed on the failing Subscriptions (and one Event when it is new or
    changed), off the others; unpacking conditions off all (OLM), but BundleUnpackFailed on
    those whose bundle image could not be unpacked (instead of ResolutionFailed, as OLM)."""
    messages = []
    for subscription in snapshot.subscriptions:
        name = subscription["metadata"]["name"]
        status = result.statuses[name]
        reason_and_message = failures.get(name)
        unpacking = UNPACKING_CONDITIONS.get(reason_and_message[0]) if reason_and_message else None
        if reason_and_message and unpacking:
            # OLM while its unpack Job runs (BundleUnpacking) or after it failed
            # (BundleUnpackFailed): no InstallPlan yet, and no ResolutionFailed.
            reason, message = reason_and_message
            shown, hidden = unpacking
            conditions = set_condition(
                status.get("conditions") or [],
                shown,
                ConditionStatus.TRUE,
                reason.value,
                message,
                snapshot.now,
            )
            status["conditions"] = remove_conditions(conditions, hidden, Types.RESOLUTION_FAILED)
            continue
        conditions = remove_conditions(
            status.get("conditions") or [], Types.BUNDLE_UNPACKING, Types.BUNDLE_UNPACK_FAILED
        )
        if name in failures:
            reason, message = failures[name]
            before = find_condition(conditions, Types.RESOLUTION_FAILED)
            conditions = set_condition(
                conditions,
                Types.RESOLUTION_FAILED,
                ConditionStatus.TRUE,
                reason.value,
                message,
                snapshot.now,
                SUBSCRIPTION_UNSTAMPED,
            )
            if before is None or before.get("message") != message:
                messages.append(message)
        else:
            conditions = remove_conditions(conditions, Types.RESOLUTION_FAILED)
        status["conditions"] = conditions
    if messages:
        result.events.append(NamespaceEvent(WARNING, RESOLUTION_FAILED_EVENT, "; ".join(messages)))


def _resolve_namespace(
    snapshot: Snapshot, statuses: dict[str, Status], plans: dict[str, Mapping[str, Any]]
) -> Resolved:
    outcome = resolve(snapshot, statuses)
    result = Resolved({name: dict(status) for name, status in statuses.items()}, dict(plans))
    failures: Failures = {
        name: (SubscriptionReason.CONSTRAINTS_NOT_SATISFIABLE, message)
        for name, message in outcome.decision.failures.items()
    }
    failures.update(
        (name, (SubscriptionReason.ERROR_PREVENTED_RESOLUTION, message))
        for name, message in outcome.decision.errors.items()
    )
    moved = _choose(snapshot, result.statuses, plans, outcome, failures)
    result.unpacks = _unpacks(snapshot, moved, outcome)
    split = separate.enabled(snapshot.namespace_object, snapshot.operator_groups)
    reused: set[str] = set()
    for group in separate.groups(moved, outcome.decision.dependencies, split):
        part = {name: moved[name] for name in group.subscriptions}
        names, steps, dependencies = plan_steps(
            snapshot, part, group.dependencies, outcome, failures
        )
        found = (
            _one_plan(snapshot, result, part, names, steps, dependencies, group) if part else None
        )
        if found is not None:
            reused.add(found["metadata"]["name"])
        if result.create is not None:
            return result
    uids = [s["metadata"].get("uid", "") for s in snapshot.subscriptions]
    for name, plan in plans.items():
        if ip.unwritten(plan, uids) and name not in reused:
            superseded = ip.superseded_status(plan)
            version = str(plan["metadata"].get("resourceVersion") or "")
            result.plan_statuses.append(PlanStatusWrite(name, superseded, version))
            result.plans[name] = {**plan, "status": superseded}
    _resolution_conditions(snapshot, result, failures)
    result.events += version_held(snapshot, result.statuses, outcome.decision.version_holds)
    return result


# ----- the decision ----------------------------------------------------------------------------


def _status_write(
    subscription: Mapping[str, Any], status: Status, snapshot: Snapshot
) -> StatusWrite | None:
    """The write that takes the Subscription to `status`, if anything but lastUpdated differs."""
    old = subscription.get("status") or {}
    patch = status_patch(old, status)
    if not patch:
        return None
    patch[LAST_UPDATED] = timestamp(snapshot.now)
    written = {k: v for k, v in {**old, **patch}.items() if v is not None}
    return StatusWrite(subscription["metadata"]["name"], patch, written)


def creation_failed(snapshot: Snapshot, error: str) -> Plan:
    """The API server refused the new InstallPlan: OLM's BundleUnpackFailed condition with
    reason EnsureInstallPlanFailed, on every Subscription of the namespace (the next
    successful resolution removes it)."""
    plan = Plan()
    message = f"error ensuring InstallPlan: {error}"
    for subscription in snapshot.subscriptions:
        status = dict(subscription.get("status") or {})
        status["conditions"] = set_condition(
            status.get("conditions") or [],
            Types.BUNDLE_UNPACK_FAILED,
            ConditionStatus.TRUE,
            SubscriptionReason.ENSURE_INSTALL_PLAN_FAILED.value,
            message,
            snapshot.now,
        )
        write = _status_write(subscription, status, snapshot)
        if write is not None:
            plan.statuses.append(write)
    return plan


def _deprecations(snapshot: Snapshot, spec: Mapping[str, Any], status: Status) -> None:
    """The deprecation conditions, from what the Subscription's own catalog says about its
    installed CSV (olm.subscription.deprecations); untouched while that catalog is not
    loaded."""
    target = (str(spec.get("sourceNamespace") or ""), str(spec.get("source") or ""))
    source = next((c for c in snapshot.catalogs if (c.namespace, c.name) == target), None)
    if source is None or source.loaded is None:
        return
    channel = str(spec.get("channel") or "")
    found = installed_deprecations(
        source.loaded.catalog,
        str(spec.get("name") or ""),
        channel,
        str(status.get("installedCSV") or ""),
    )
    status["conditions"] = deprecation_conditions(
        status.get("conditions") or [], found, channel, snapshot.now
    )


def decide(snapshot: Snapshot) -> Plan:
    plan = Plan()
    subscriptions = snapshot.subscriptions
    if not subscriptions:
        return plan
    uids = [s["metadata"].get("uid", "") for s in subscriptions]
    plans: dict[str, Mapping[str, Any]] = dict(snapshot.plans)
    statuses = {
        s["metadata"]["name"]: settle(dict(s.get("status") or {}), snapshot, plans)
        for s in subscriptions
    }
    known = catalogs_known(snapshot.catalogs)
    if not known:
        plan.requeue_after = REQUEUE_UNTIL_CATALOGS_KNOWN
    needed = any(not waiting(status, plans) for status in statuses.values()) or any(
        ip.unwritten(p, uids) for p in plans.values()
    )
    if known and needed and not snapshot.terminating:
        resolved = _resolve_namespace(snapshot, statuses, plans)
        if resolved.create is not None:
            return Plan(create=resolved.create)
        plan.plan_statuses, plan.events = resolved.plan_statuses, resolved.events
        plan.unpacks = resolved.unpacks
        unpacking = SubscriptionConditionType.BUNDLE_UNPACKING.value
        if any(
            c.get("type") == unpacking
            for s in resolved.statuses.values()
            for c in s.get("conditions") or []
        ):
            plan.requeue_after = REQUEUE_WHILE_UNPACKING
        plans = resolved.plans
        statuses = {
            name: settle(status, snapshot, plans) for name, status in resolved.statuses.items()
        }
    for subscription in subscriptions:
        spec = subscription.get("spec") or {}
        name = subscription["metadata"]["name"]
        status = statuses[name]
        if known:
            status["catalogHealth"] = catalog_health(
                snapshot.catalogs, status.get("catalogHealth") or [], snapshot.now
            )
            health, reason, message = catalog_condition(
                snapshot.catalogs,
                str(spec.get("sourceNamespace") or ""),
                str(spec.get("source") or ""),
            )
            status["conditions"] = set_condition(
                status.get("conditions") or [],
                Types.CATALOG_SOURCES_UNHEALTHY,
                health,
                reason.value,
                message,
                snapshot.now,
            )
        _deprecations(snapshot, spec, status)
        if not version_range_of(subscription):
            status["conditions"] = remove_conditions(
                status.get("conditions") or [], OlmPyConditionType.VERSION_HELD
            )
        rollback_condition(subscription, status, snapshot)
        auto_approve_condition(subscription, status, snapshot.now)
        deleted = rolled_back_from({**subscription, "status": status}, snapshot)
        plan.delete_csvs += deleted
        plan.delete_plans += stale_plans(deleted, snapshot)
        if request_done(subscription, status):
            plan.rollbacks_done.append(name)
        write = _status_write(subscription, status, snapshot)
        if write is not None:
            plan.statuses.append(write)
    return plan
