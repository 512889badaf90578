"""The CSV phase machine (OLM v0 §2.1-2.2): observations in, one transition and actions out.

Invariants:
- Pure: `decide(world)` reads only its argument; the controller carries out the `Plan`.
- One transition per call, as OLM does; the status write wakes the CSV for the next one.
- A CSV that did not change gets an empty plan (no write, no event), so a Succeeded CSV's
  status stays byte-stable.
"""

from __future__ import annotations

from typing import Any

from olm.api.csv import GROUP_FAILURE_REASONS, INSTALL_TIMEOUT_SECONDS, CsvPhase, CsvReason
from olm.api.labels import Annotation
from olm.api.views import Strategy
from olm.csv.checks import (
    apiservice_conflict,
    apiservice_issue,
    deployment_conflict,
    subscription_config_problem,
)
from olm.csv.definitions import definition_problem
from olm.csv.lint import lint
from olm.csv.operatorcondition import not_upgradeable
from olm.csv.plan import (
    GroupApiCheck,
    Plan,
    World,
    current_status,
    desired_deployments,
    install_context,
    provided_apis,
    replaced_csv,
    replacement_of,
    transition,
)
from olm.csv.refusals import RETRY_FAILED_INSTALL_AFTER, install_failed
from olm.csv.replacement import (
    crd_owner_problem,
    is_copy,
    newest_in_chain,
    replacement_problem,
)
from olm.csv.requirements import check_requirements, unmet_summary
from olm.csv.status import parse_timestamp, timestamp
from olm.groups.targets import csv_annotations, install_mode_problem
from olm.install.certresources import next_rotation, rotation_due
from olm.install.health import install_health
from olm.install.render import (
    observed_materials,
    pending_conversions,
    render_install,
    stale_objects,
)
from olm.install.strategy import InvalidStrategy, parse_strategy
from olm.install.webhooks import WebhookProblem

REQUEUE_WHILE_INSTALLING = 5.0
# A Succeeded CSV whose webhook certificates need rotating within this many seconds asks to be
# woken then; later rotations are noticed by a resync.
ROTATION_WAKE_HORIZON = 300.0
__all__ = [
    "RETRY_FAILED_INSTALL_AFTER",
    "GroupApiCheck",
    "Plan",
    "World",
    "decide",
    "desired_deployments",
    "install_failed",
    "is_copy",
    "lint",
    "transition",
]


def _install(world: World, strategy: Strategy) -> Plan:
    """Apply the rendered install (olm.install.render) and move to Installing."""
    conflict = deployment_conflict(world, strategy)
    if conflict:
        return transition(world, CsvPhase.FAILED, CsvReason.OWNER_CONFLICT, conflict)
    try:
        desired = render_install(world.csv, strategy, install_context(world))
    except WebhookProblem as exc:
        return install_failed(world, f"install strategy failed: {exc}")
    plan = Plan(
        apply=desired.deployments,
        resources=desired.resources,
        delete_resources=desired.stale,
        delete_deployments=desired.orphans,
    )
    extra: dict[str, Any] = {}
    rotate_at = desired.next_rotation
    # A CSV that takes over a valid certificate (an upgrade: the Secret is the Deployment's,
    # not the old CSV's) records when it rotates too. OLM's new CSV gets both fields from the
    # new CA it issues once the old CSV's Secret went with it (NeedsCertRotation).
    adopted = rotate_at is not None and not (world.csv.get("status") or {}).get("certsRotateAt")
    if desired.rotated or adopted:
        extra = {
            "certsLastUpdated": timestamp(world.now),
            "certsRotateAt": timestamp(rotate_at) if rotate_at else None,
        }
    return transition(
        world,
        CsvPhase.INSTALLING,
        CsvReason.INSTALL_SUCCEEDED,
        "waiting for install components to report healthy",
        plan,
        **extra,
    )


def _bad_materials(world: World, problem: str) -> Plan:
    # OLM: updateDeploymentSpecsWithAPIServiceData failed; the reinstall issues new material.
    return transition(
        world,
        CsvPhase.PENDING,
        CsvReason.NEEDS_REINSTALL,
        f"calculated deployment install is bad: {problem}",
    )


def decide(world: World) -> Plan:
    csv = world.csv
    if is_copy(csv):
        return Plan()
    try:
        phase = CsvPhase(current_status(world).get("phase", ""))
    except ValueError:  # a phase OLM does not know (a hand-edited status): start over
        phase = CsvPhase.NONE
    reason = current_status(world).get("reason", "")

    if phase == CsvPhase.DELETING:
        return Plan(delete_csv=True)
    if not world.operator_groups:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.NO_OPERATOR_GROUP,
            "csv in namespace with no operatorgroups",
        )
    if len(world.operator_groups) > 1:
        names = ", ".join(sorted(g["metadata"]["name"] for g in world.operator_groups))
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.TOO_MANY_OPERATOR_GROUPS,
            f"csv created in namespace with multiple operatorgroups, can't pick one automatically ({names}): delete all but one",
        )
    group = world.operator_groups[0]
    if world.group_targets is None:
        return Plan(requeue_after=1.0)  # the group's status.namespaces is not computed yet
    wanted = csv_annotations(group, world.group_targets)
    current = csv["metadata"].get("annotations") or {}
    if any(current.get(k) != v for k, v in wanted.items()):
        return Plan(annotations=wanted)
    targets = (
        [t for t in current.get(Annotation.TARGET_NAMESPACES, "").split(",")]
        if world.group_targets
        else []
    )
    problem = install_mode_problem(csv, targets)
    if problem:
        return transition(world, CsvPhase.FAILED, problem[0], problem[1])
    if world.api_check is not None:
        api_plan = provided_apis(world, world.api_check)
        if api_plan is not None:
            return api_plan

    if phase == CsvPhase.NONE:
        plan = Plan(warnings=lint(csv))
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.REQUIREMENTS_UNKNOWN,
            "requirements not yet checked",
            plan,
        )
    if phase == CsvPhase.FAILED and reason in GROUP_FAILURE_REASONS:
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.REQUIREMENTS_UNKNOWN,
            "InstallModes now support target namespaces",
        )
    # A replace cycle or a rival replacer never settles on its own (OLM leaves the first
    # Pending forever and lets the second fight over Deployments): fail in every phase, so a
    # Succeeded CSV caught in one stops too, and stay Failed until spec.replaces is fixed.
    chain_problem = replacement_problem(csv, world.csvs)
    if chain_problem:
        return transition(world, CsvPhase.FAILED, CsvReason.OWNER_CONFLICT, chain_problem)

    try:
        strategy = parse_strategy(csv)
    except InvalidStrategy as exc:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.INVALID_INSTALL_STRATEGY,
            f"install strategy invalid: {exc}",
        )
    invalid = definition_problem(csv, {d.name for d in strategy.deployments})
    if invalid:
        refused = transition(world, CsvPhase.FAILED, invalid[0], invalid[1])
        detail = getattr(invalid, "detail", "")
        if detail and refused.event is not None:
            refused.event = (*refused.event[:2], f"{invalid[1]}: {detail}")
        return refused
    bad_config = subscription_config_problem(world)
    if bad_config:
        return transition(world, CsvPhase.FAILED, CsvReason.INVALID_INSTALL_STRATEGY, bad_config)

    if phase == CsvPhase.FAILED and reason == CsvReason.OWNER_CONFLICT:
        # OLM sends this through the reinstall path, which runs into the conflict again (a
        # write loop); olm-py stays Failed while the conflict lasts and starts over after it.
        conflict = crd_owner_problem(world.csv, world.csvs) or deployment_conflict(world, strategy)
        if conflict:
            return transition(world, CsvPhase.FAILED, CsvReason.OWNER_CONFLICT, conflict)
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.REQUIREMENTS_UNKNOWN,
            "the owner conflict is resolved; checking requirements again",
        )
    if phase == CsvPhase.PENDING:
        return _pending(world, strategy)
    if phase == CsvPhase.INSTALL_READY:
        return _install(world, strategy)
    if phase == CsvPhase.INSTALLING:
        return _installing(world, strategy)
    if phase == CsvPhase.SUCCEEDED:
        return _succeeded(world, strategy)
    if phase == CsvPhase.FAILED:
        return _failed(world, strategy)
    if phase == CsvPhase.REPLACING:
        return _replacing(world)
    return Plan()


def _pending(world: World, strategy: Strategy) -> Plan:
    old = replaced_csv(world)
    blocked = not_upgradeable(world.replaced_condition) if old is not None else None
    if blocked:
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.OPERATOR_CONDITION_NOT_UPGRADEABLE,
            f"operator is not upgradeable: {blocked}",
        )
    met, entries = check_requirements(world.csv, strategy, world.requirements)
    if not met:
        message = f"one or more requirements couldn't be found: {unmet_summary(entries)}"
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.REQUIREMENTS_NOT_MET,
            message,
            requirementStatus=entries,
        )
    conflict = (
        crd_owner_problem(world.csv, world.csvs)
        or deployment_conflict(world, strategy)
        or apiservice_conflict(world)
    )
    if conflict:
        # The requirements were checked: their status stays, as OLM sets it before this check.
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.OWNER_CONFLICT,
            conflict,
            requirementStatus=entries,
        )
    old_phase = (old.get("status") or {}).get("phase") if old is not None else None
    if old is not None and old_phase != CsvPhase.REPLACING:
        # Wait for the old CSV to step aside. A Succeeded one does so on its next decision,
        # so wake it (as OLM requeues it); any other phase changes by itself, and its status
        # write wakes this CSV (the watch relates CSVs through spec.replaces). No polling: a
        # wait on a CSV that never steps aside must cost nothing.
        plan = Plan(wake=[old["metadata"]["name"]] if old_phase == CsvPhase.SUCCEEDED else [])
        if entries != current_status(world).get("requirementStatus"):
            plan.status = {**current_status(world), "requirementStatus": entries}
        return plan
    return transition(
        world,
        CsvPhase.INSTALL_READY,
        CsvReason.ALL_REQUIREMENTS_MET,
        "all requirements found, attempting install",
        requirementStatus=entries,
    )


def _installing(world: World, strategy: Strategy) -> Plan:
    materials, bad = observed_materials(world.csv, install_context(world))
    if bad:
        return _bad_materials(world, bad)
    health = install_health(
        world.csv, strategy, install_context(world), materials, conversions=False
    )
    if health.healthy:
        # As OLM (newest): CRD conversion is pointed at the webhook only once its Deployment
        # is ready, so the API server never converts through pods that cannot answer.
        pending = pending_conversions(world.csv, install_context(world), materials)
        if pending:
            return Plan(resources=pending, requeue_after=REQUEUE_WHILE_INSTALLING)
        return transition(
            world,
            CsvPhase.SUCCEEDED,
            CsvReason.INSTALL_SUCCEEDED,
            "install strategy completed with no errors",
        )
    if health.drifted or health.missing:
        return transition(
            world,
            CsvPhase.INSTALL_READY,
            CsvReason.INSTALL_WAITING,
            f"installing: {health.message}",
        )
    if health.timed_out:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.INSTALL_CHECK_FAILED,
            f"install failed: {health.message}",
        )
    since = parse_timestamp(current_status(world).get("lastTransitionTime"))
    if since is not None and (world.now - since).total_seconds() >= INSTALL_TIMEOUT_SECONDS:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.INSTALL_CHECK_FAILED,
            f"install timeout: {health.message}",
        )
    plan = transition(
        world, CsvPhase.INSTALLING, CsvReason.INSTALL_WAITING, f"installing: {health.message}"
    )
    plan.requeue_after = REQUEUE_WHILE_INSTALLING
    return plan


def _succeeded(world: World, strategy: Strategy) -> Plan:
    new = replacement_of(world)
    if new is not None:
        name = new["metadata"]["name"]
        return transition(
            world,
            CsvPhase.REPLACING,
            CsvReason.BEING_REPLACED,
            f"being replaced by csv: {name}",
            Plan(wake=[name]),
        )
    materials, bad = observed_materials(world.csv, install_context(world))
    if materials and rotation_due(materials, world.now):
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.NEEDS_CERT_ROTATION,
            "CSV owns resources that require a cert refresh",
        )
    met, entries = check_requirements(world.csv, strategy, world.requirements)
    if not met:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.REQUIREMENTS_NOT_MET,
            f"requirements no longer met: {unmet_summary(entries)}",
            requirementStatus=entries,
        )
    if bad:
        return _bad_materials(world, bad)
    issue = apiservice_issue(world, materials)
    if issue:  # OLM checkAPIServiceResources
        return transition(world, CsvPhase.FAILED, CsvReason.API_SERVICE_RESOURCE_ISSUE, issue)
    health = install_health(world.csv, strategy, install_context(world), materials)
    if health.drifted:
        return transition(
            world,
            CsvPhase.INSTALL_READY,
            CsvReason.COMPONENT_UNHEALTHY,
            f"installing: {health.message}",
        )
    if health.timed_out:
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.INSTALL_CHECK_FAILED,
            f"install failed: {health.message}",
        )
    if not health.healthy:
        return transition(
            world, CsvPhase.FAILED, CsvReason.COMPONENT_UNHEALTHY, f"installing: {health.message}"
        )
    # Wake up when the certificates enter their rotation window, if that is before the next
    # resync (which wakes every CSV anyway): one delayed key, not one per event for two years.
    rotation = next_rotation(materials)
    remaining = (rotation - world.now).total_seconds() if rotation else None
    return Plan(
        delete_resources=stale_objects(world.csv, install_context(world)),
        requeue_after=max(remaining, 1.0)
        if remaining is not None and remaining <= ROTATION_WAKE_HORIZON
        else None,
    )


def _failed(world: World, strategy: Strategy) -> Plan:
    retry_install = current_status(world).get("reason") in (
        CsvReason.INSTALL_COMPONENT_FAILED,
        CsvReason.INSTALL_COMPONENT_FAILED_NO_RETRY,
    )
    if retry_install:
        # Since the last refusal written, not the first: a refusal whose words vary (the API
        # server names one of several bad fields, in no fixed order) must not retry at once.
        since = parse_timestamp(
            current_status(world).get("lastUpdateTime")
            or current_status(world).get("lastTransitionTime")
        )
        waited = (world.now - since).total_seconds() if since else RETRY_FAILED_INSTALL_AFTER
        if waited < RETRY_FAILED_INSTALL_AFTER:
            return Plan(requeue_after=RETRY_FAILED_INSTALL_AFTER - waited)
    met, entries = check_requirements(world.csv, strategy, world.requirements)
    if not met:
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.REQUIREMENTS_NOT_MET,
            f"requirements not met: {unmet_summary(entries)}",
            requirementStatus=entries,
        )
    materials, bad = observed_materials(world.csv, install_context(world))
    if materials and rotation_due(materials, world.now):
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.NEEDS_CERT_ROTATION,
            "owned APIServices need cert refresh",
        )
    if retry_install:
        health = install_health(world.csv, strategy, install_context(world), materials)
        if not health.healthy and not health.timed_out:
            # Apply again straight from Failed: when the API server refuses with the same
            # message, nothing is written (OLM goes through Pending and InstallReady each time).
            return _install(world, strategy)
    if bad:
        return _bad_materials(world, bad)
    issue = apiservice_issue(world, materials)
    if issue:  # OLM: APIService resources need reinstall
        return transition(
            world, CsvPhase.PENDING, CsvReason.API_SERVICE_RESOURCES_NEED_REINSTALL, issue
        )
    health = install_health(world.csv, strategy, install_context(world), materials)
    if health.healthy:
        return transition(
            world,
            CsvPhase.SUCCEEDED,
            CsvReason.INSTALL_SUCCEEDED,
            "install strategy completed with no errors",
        )
    if health.timed_out:
        # OLM checks this before its reinstall path: a Deployment past its progress deadline
        # keeps the CSV Failed (reinstalling would time out again at once: a write loop).
        return transition(
            world,
            CsvPhase.FAILED,
            CsvReason.INSTALL_CHECK_FAILED,
            f"install failed: {health.message}",
        )
    if health.drifted:
        return transition(
            world,
            CsvPhase.INSTALL_READY,
            CsvReason.NEEDS_REINSTALL,
            f"installing: {health.message}",
        )
    return transition(
        world, CsvPhase.PENDING, CsvReason.NEEDS_REINSTALL, f"installing: {health.message}"
    )


def _replacing(world: World) -> Plan:
    if replaced_csv(world) is not None:
        return Plan()  # the oldest CSV of a chain goes first
    new = replacement_of(world)
    if new is None:
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.NEEDS_REINSTALL,
            "the ClusterServiceVersion that was replacing this one is gone; reinstalling",
        )
    # The replacement may already be on its way out itself (a chain applied at once): any
    # Succeeded CSV further down the chain has taken over.
    if any(
        (c.get("status") or {}).get("phase") == CsvPhase.SUCCEEDED
        for c in newest_in_chain(new, world.csvs)
    ):
        return transition(
            world,
            CsvPhase.DELETING,
            CsvReason.REPLACED,
            "has been replaced by a newer ClusterServiceVersion that has successfully installed.",
        )
    # Not yet: the replacement's status writes wake this CSV (no polling).
    return Plan()
