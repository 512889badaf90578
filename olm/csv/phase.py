"""The CSV phase machine (OLM v0 §2.1-2.2): observations in, one transition and actions out.

Invariants:
- Pure: `decide(world)` reads only its argument; the controller carries out the `Plan`.
- One transition per call, as OLM does; the status write wakes the CSV for the next one.
- A CSV that did not change gets an empty plan (no write, no event), so a Succeeded CSV's
  status stays byte-stable.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from olm.api.csv import GROUP_FAILURE_REASONS, INSTALL_TIMEOUT_SECONDS, CsvPhase, CsvReason
from olm.api.labels import Annotation
from olm.api.views import CsvView
from olm.csv.definitions import definition_problem
from olm.csv.replacement import (
    chosen_replacer,
    deployment_owner_problem,
    is_copy,
    newest_in_chain,
    replacement_problem,
)
from olm.csv.requirements import RequirementInputs, check_requirements, unmet_summary
from olm.csv.status import parse_timestamp, same_phase, set_phase, timestamp
from olm.groups.targets import csv_annotations, install_mode_problem
from olm.install.apiservices import adoption_problem, resource_issue
from olm.install.certs import ServingMaterial
from olm.install.health import Health, install_health
from olm.install.overrides import config_problem
from olm.install.render import (
    InstallContext,
    observed_materials,
    orphans,
    pending_conversions,
    render_deployments,
    render_install,
    stale_objects,
)
from olm.install.strategy import InvalidStrategy, Strategy, parse_strategy
from olm.install.webhooks import WebhookProblem, WebhookWorld, next_rotation, rotation_due

REQUEUE_WHILE_INSTALLING = 5.0
# After a failed install, wait this long before trying again (OLM retries with backoff). The
# retry is quiet: a Failed CSV re-applies its Deployments straight away, and a refusal with the
# same message leaves the status (and the CSV's resourceVersion) alone.
RETRY_FAILED_INSTALL_AFTER = 30.0
# A Succeeded CSV whose webhook certificates need rotating within this many seconds asks to be
# woken then; later rotations are noticed by a resync.
ROTATION_WAKE_HORIZON = 300.0
__all__ = [
    "GroupApiCheck",
    "Plan",
    "World",
    "decide",
    "install_failed",
    "is_copy",
    "lint",
    "transition",
]
# Top-level CSV spec fields OLM v0 knows; anything else is kept but reported.
KNOWN_SPEC_FIELDS = frozenset(
    [
        "displayName",
        "description",
        "version",
        "release",
        "replaces",
        "skips",
        "minKubeVersion",
        "maturity",
        "keywords",
        "labels",
        "annotations",
        "provider",
        "maintainers",
        "links",
        "icon",
        "selector",
        "relatedImages",
        "installModes",
        "install",
        "customresourcedefinitions",
        "apiservicedefinitions",
        "webhookdefinitions",
        "nativeAPIs",
        "cleanup",
    ]
)


def lint(csv: dict[str, Any]) -> list[tuple[str, str]]:
    """Input OLM ignores silently; olm-py says so once, as Warning events."""
    spec = csv.get("spec") or {}
    warnings = []
    if spec.get("replaces") and spec["replaces"] == csv["metadata"]["name"]:
        warnings.append(
            (
                "InvalidReplaces",
                f"spec.replaces names this CSV itself ({spec['replaces']}) and is ignored: set it to the "
                "name of the CSV this one upgrades, or remove it",
            )
        )
    for key in sorted(set(spec) - KNOWN_SPEC_FIELDS):
        hint = (
            " (a skipRange belongs in the metadata annotation olm.skipRange)"
            if key == "skipRange"
            else ""
        )
        warnings.append(
            (
                "UnknownField",
                f"spec.{key} is not a ClusterServiceVersion field and is ignored{hint}",
            )
        )
    return warnings


@dataclass(frozen=True)
class GroupApiCheck:
    """The outcome of `olm.scope.conflicts.decide_provided_apis` for the CSV, as plain data."""

    failure: tuple[CsvPhase, CsvReason, str] | None = None
    remove_deployments: bool = False
    provided_apis: str | None = None  # the group's new olm.providedAPIs, written first
    stop: bool = False
    recovery: tuple[CsvPhase, CsvReason, str] | None = None  # a conflict that went away


@dataclass(frozen=True)
class World:
    """Everything the decision for one CSV looks at."""

    csv: dict[str, Any]
    operator_groups: list[dict[str, Any]]
    group_targets: list[str] | None
    csvs: dict[str, dict[str, Any]]
    requirements: RequirementInputs
    deployments: dict[str, dict[str, Any]]
    replaced_condition: dict[str, Any] | None
    now: datetime.datetime
    # The Subscription that installed this CSV (status.installedCSV or currentCSV names it):
    # its name and spec.config, merged into every Deployment (olm.install.overrides).
    subscription: str | None = None
    subscription_config: Any = None
    # For a CSV with webhookdefinitions: its Secrets and webhook configurations, read live.
    webhooks: WebhookWorld | None = None
    # The provided-API check between groups (OLM §4.4, olm.scope.conflicts, made by the
    # controller); None skips it.
    api_check: GroupApiCheck | None = None


@dataclass
class Plan:
    """What to do for one CSV. Empty means nothing changes."""

    status: dict[str, Any] | None = None
    event: tuple[str, str, str] | None = None
    annotations: dict[str, str] | None = None
    apply: list[dict[str, Any]] = field(default_factory=list)
    # Applied before `apply`: the webhooks' Services, Secrets, RBAC, configurations and CRD
    # conversion settings (olm.install.webhooks).
    resources: list[dict[str, Any]] = field(default_factory=list)
    # (apiVersion, kind, namespace or None, name): webhook configurations no longer declared.
    delete_resources: list[tuple[str, str, str | None, str]] = field(default_factory=list)
    delete_deployments: list[str] = field(default_factory=list)
    # The new olm.providedAPIs annotation of the CSV's OperatorGroup (olm.scope.conflicts).
    group_provided_apis: str | None = None
    delete_csv: bool = False
    requeue_after: float | None = None
    wake: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (reason, message) events


def _status(world: World) -> dict[str, Any]:
    return dict(world.csv.get("status") or {})


def transition(
    world: World,
    phase: CsvPhase,
    reason: CsvReason,
    message: str,
    plan: Plan | None = None,
    **extra: Any,
) -> Plan:
    plan = plan or Plan()
    current = _status(world)
    extras_changed = any(current.get(k) != v for k, v in extra.items())
    if same_phase(current, phase, reason, message) and not extras_changed:
        return plan
    if same_phase(current, phase, reason, message):
        plan.status = {**current, **extra}
        return plan
    plan.status = {**set_phase(current, phase, reason, message, world.now), **extra}
    plan.event = ("Warning" if phase == CsvPhase.FAILED else "Normal", reason.value, message)
    return plan


def replacement_of(world: World) -> dict[str, Any] | None:
    """The CSV that replaces this one: of several, the oldest (OLM takes any one)."""
    return chosen_replacer(world.csv["metadata"]["name"], world.csvs)


def replaced_csv(world: World) -> dict[str, Any] | None:
    replaces = (world.csv.get("spec") or {}).get("replaces")
    if not replaces or replaces == world.csv["metadata"]["name"]:
        return None
    return world.csvs.get(replaces)


def _chain(world: World) -> set[str]:
    """Names in this CSV's replacement chain, both directions."""
    names = {world.csv["metadata"]["name"]}
    changed = True
    while changed:
        changed = False
        for other in world.csvs.values():
            other_name = other["metadata"]["name"]
            replaces = (other.get("spec") or {}).get("replaces")
            if other_name in names and replaces and replaces not in names:
                names.add(replaces)
                changed = True
            if replaces in names and other_name not in names:
                names.add(other_name)
                changed = True
    return names


def _owner_conflict(world: World) -> str | None:
    mine = CsvView.of(world.csv).owned_crd_names
    chain = _chain(world)
    for other in world.csvs.values():
        other_name = other["metadata"]["name"]
        if other_name in chain or is_copy(other):
            continue
        shared = mine & CsvView.of(other).owned_crd_names
        if shared:
            return f"conflicting CRD owner in namespace: {', '.join(sorted(shared))} is also owned by ClusterServiceVersion {other_name}"
    return None


def _not_upgradeable(condition: dict[str, Any] | None) -> str | None:
    if condition is None:
        return None

    def find(items: list[dict[str, Any]]) -> dict[str, Any] | None:
        return next((c for c in items if c.get("type") == "Upgradeable"), None)

    override = find((condition.get("spec") or {}).get("overrides") or [])
    if override is not None:
        return (
            override.get("message") or "Upgradeable override is False"
            if override.get("status") == "False"
            else None
        )
    reported = find((condition.get("spec") or {}).get("conditions") or []) or find(
        (condition.get("status") or {}).get("conditions") or []
    )
    if reported is None:
        return None
    if reported.get("status") == "False":
        return (
            reported.get("message")
            or reported.get("reason")
            or "the operator reported Upgradeable=False"
        )
    generation = condition["metadata"].get("generation")
    if (
        reported.get("observedGeneration") is not None
        and generation is not None
        and reported["observedGeneration"] != generation
    ):
        return "the Upgradeable condition is stale (observedGeneration differs from generation)"
    return None


def _deployment_conflict(world: World, strategy: Strategy) -> str | None:
    return deployment_owner_problem(
        world.csv, world.csvs, [d.name for d in strategy.deployments], world.deployments
    )


def _context(world: World) -> InstallContext:
    """The OperatorGroup context install rendering reads (the caller checked the one group)."""
    return InstallContext(
        group=world.operator_groups[0],
        subscription_config=world.subscription_config,
        webhooks=world.webhooks,
        crds=world.requirements.crds,
        deployments=world.deployments,
        now=world.now,
    )


def desired_deployments(
    world: World, strategy: Strategy, materials: dict[str, ServingMaterial] | None = None
) -> list[dict[str, Any]]:
    """The Deployments `render_install` would write for this world (olm.install.render)."""
    return render_deployments(world.csv, strategy, world.subscription_config, materials)


def _materials(world: World) -> tuple[dict[str, ServingMaterial], str | None]:
    """The webhook certificates the Deployments run with now (none for a CSV without webhooks)."""
    return observed_materials(world.csv, _context(world))


def _install(world: World, strategy: Strategy) -> Plan:
    """Apply the rendered install (olm.install.render) and move to Installing."""
    conflict = _deployment_conflict(world, strategy)
    if conflict:
        return transition(world, CsvPhase.FAILED, CsvReason.OWNER_CONFLICT, conflict)
    try:
        desired = render_install(world.csv, strategy, _context(world))
    except WebhookProblem as exc:
        return install_failed(world, f"install strategy failed: {exc}")
    plan = Plan(
        apply=desired.deployments,
        resources=desired.resources,
        delete_resources=desired.stale,
        delete_deployments=desired.orphans,
    )
    extra: dict[str, Any] = {}
    if desired.rotated:
        rotate_at = desired.next_rotation
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


def _apiservice_conflict(world: World) -> str | None:
    if world.webhooks is None:
        return None
    return adoption_problem(world.csv, world.webhooks.apiservices, world.csvs)


def _apiservice_issue(world: World, materials: dict[str, ServingMaterial]) -> str | None:
    if world.webhooks is None:
        return None
    return resource_issue(world.csv, world.webhooks.apiservices, materials)


def _stale(world: World) -> list[tuple[str, str, str | None, str]]:
    return stale_objects(world.csv, _context(world))


def _bad_materials(world: World, problem: str) -> Plan:
    # OLM: updateDeploymentSpecsWithAPIServiceData failed; the reinstall issues new material.
    return transition(
        world,
        CsvPhase.PENDING,
        CsvReason.NEEDS_REINSTALL,
        f"calculated deployment install is bad: {problem}",
    )


def _config_problem(world: World) -> str | None:
    problem = config_problem(world.subscription_config)
    if problem is None:
        return None
    return (
        f"Subscription {world.subscription}: {problem}. Fix spec.config in "
        f"Subscription {world.subscription}."
    )


def _provided_apis(world: World, decision: GroupApiCheck) -> Plan | None:
    """OLM's provided-API reconciliation between groups (olm.scope.conflicts): a conflict
    fails the CSV and removes its Deployments; an annotation change of the group is written
    first; a CSV failed by a conflict that went away starts over. None: go on."""
    if decision.failure is not None:
        plan = transition(world, *decision.failure)
        if decision.remove_deployments:
            plan.delete_deployments = orphans(world.csv, world.deployments)
        return plan
    if decision.provided_apis is not None:
        return Plan(group_provided_apis=decision.provided_apis)
    if decision.stop:
        return Plan()
    if decision.recovery is not None:
        return transition(world, *decision.recovery)
    return None


def decide(world: World) -> Plan:
    csv = world.csv
    if is_copy(csv):
        return Plan()
    try:
        phase = CsvPhase(_status(world).get("phase", ""))
    except ValueError:  # a phase OLM does not know (a hand-edited status): start over
        phase = CsvPhase.NONE
    reason = _status(world).get("reason", "")

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
        api_plan = _provided_apis(world, world.api_check)
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
    bad_config = _config_problem(world)
    if bad_config:
        return transition(world, CsvPhase.FAILED, CsvReason.INVALID_INSTALL_STRATEGY, bad_config)

    if phase == CsvPhase.FAILED and reason == CsvReason.OWNER_CONFLICT:
        # OLM sends this through the reinstall path, which runs into the conflict again (a
        # write loop); olm-py stays Failed while the conflict lasts and starts over after it.
        conflict = _owner_conflict(world) or _deployment_conflict(world, strategy)
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
    blocked = _not_upgradeable(world.replaced_condition) if old is not None else None
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
        _owner_conflict(world)
        or _deployment_conflict(world, strategy)
        or _apiservice_conflict(world)
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
        if entries != _status(world).get("requirementStatus"):
            plan.status = {**_status(world), "requirementStatus": entries}
        return plan
    return transition(
        world,
        CsvPhase.INSTALL_READY,
        CsvReason.ALL_REQUIREMENTS_MET,
        "all requirements found, attempting install",
        requirementStatus=entries,
    )


def _health(
    world: World,
    strategy: Strategy,
    materials: dict[str, ServingMaterial] | None = None,
    *,
    conversions: bool = True,
) -> Health:
    return install_health(world.csv, strategy, _context(world), materials, conversions=conversions)


def _installing(world: World, strategy: Strategy) -> Plan:
    materials, bad = _materials(world)
    if bad:
        return _bad_materials(world, bad)
    health = _health(world, strategy, materials, conversions=False)
    if health.healthy:
        # As OLM (newest): CRD conversion is pointed at the webhook only once its Deployment
        # is ready, so the API server never converts through pods that cannot answer.
        pending = pending_conversions(world.csv, _context(world), materials)
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
    since = parse_timestamp(_status(world).get("lastTransitionTime"))
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
    materials, bad = _materials(world)
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
    issue = _apiservice_issue(world, materials)
    if issue:  # OLM checkAPIServiceResources
        return transition(world, CsvPhase.FAILED, CsvReason.API_SERVICE_RESOURCE_ISSUE, issue)
    health = _health(world, strategy, materials)
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
        delete_resources=_stale(world),
        requeue_after=max(remaining, 1.0)
        if remaining is not None and remaining <= ROTATION_WAKE_HORIZON
        else None,
    )


def install_failed(world: World, message: str, *, forbidden: bool = False) -> Plan:
    """The plan after the API server refused an install write (the controller's part).

    A refusal with the same message as the CSV's Failed status changes nothing (no write, no
    event); a retryable one is tried again after RETRY_FAILED_INSTALL_AFTER.
    """
    # OLM: a Forbidden error is unrecoverable until the cluster changes (rights granted to the
    # OperatorGroup's service account); OLM tries again when RBAC changes, olm-py after the same
    # pause as any refusal, so a CSV recovers once the rights are there.
    reason = (
        CsvReason.INSTALL_COMPONENT_FAILED_NO_RETRY
        if forbidden
        else CsvReason.INSTALL_COMPONENT_FAILED
    )
    plan = transition(world, CsvPhase.FAILED, reason, message)
    plan.requeue_after = RETRY_FAILED_INSTALL_AFTER
    return plan


def _failed(world: World, strategy: Strategy) -> Plan:
    retry_install = _status(world).get("reason") in (
        CsvReason.INSTALL_COMPONENT_FAILED,
        CsvReason.INSTALL_COMPONENT_FAILED_NO_RETRY,
    )
    if retry_install:
        # Since the last refusal written, not the first: a refusal whose words vary (the API
        # server names one of several bad fields, in no fixed order) must not retry at once.
        since = parse_timestamp(
            _status(world).get("lastUpdateTime") or _status(world).get("lastTransitionTime")
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
    materials, bad = _materials(world)
    if materials and rotation_due(materials, world.now):
        return transition(
            world,
            CsvPhase.PENDING,
            CsvReason.NEEDS_CERT_ROTATION,
            "owned APIServices need cert refresh",
        )
    if retry_install:
        health = _health(world, strategy, materials)
        if not health.healthy and not health.timed_out:
            # Apply again straight from Failed: when the API server refuses with the same
            # message, nothing is written (OLM goes through Pending and InstallReady each time).
            return _install(world, strategy)
    if bad:
        return _bad_materials(world, bad)
    issue = _apiservice_issue(world, materials)
    if issue:  # OLM: APIService resources need reinstall
        return transition(
            world, CsvPhase.PENDING, CsvReason.API_SERVICE_RESOURCES_NEED_REINSTALL, issue
        )
    health = _health(world, strategy, materials)
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
