"""What the CSV phase machine reads (`World`) and what it asks for (`Plan`), the one way a
plan moves the CSV to a new phase (`transition`), and the World as install rendering's
context (`install_context`).

Invariants:
- Plain data: the controller builds the `World` from its cache and live reads, and carries
  out the `Plan`; nothing here does I/O.
- `transition` writes status only when the phase, reason, message or an extra field changes;
  only a change of phase (or reason or message) records an Event.
- The plan carries the rendered install (olm.install.render) as it is: `resources` before
  `apply`, then the deletions; what a refused write means is olm.csv.refusals'.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import Any

from olm.api.csv import CsvPhase, CsvReason
from olm.api.views import Strategy
from olm.csv.replacement import chosen_replacer
from olm.csv.requirements import RequirementInputs
from olm.csv.status import same_phase, set_phase
from olm.install.certresources import WebhookWorld
from olm.install.certs import ServingMaterial
from olm.install.render import InstallContext, orphans, render_deployments

# After the CSV's OperatorGroup got a new olm.providedAPIs annotation, decide again this soon:
# the annotation's watch event is on its way into the cache.
RECHECK_AFTER_GROUP_WRITE = 0.2


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
    # conversion settings (olm.install.render).
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

    @property
    def removes_deployments(self) -> bool:
        """Deployments to delete and none to apply: a conflict between groups takes the
        operator away (olm.scope.conflicts); otherwise `delete_deployments` are the orphans
        an install leaves, deleted after it."""
        return bool(self.delete_deployments) and not self.apply

    def starts_replacing(self, csv: dict[str, Any]) -> bool:
        """The status write moves `csv` to Replacing: an upgrade (OLM's csv_upgrade_count)."""
        return (
            self.status is not None
            and self.status.get("phase") == CsvPhase.REPLACING
            and (csv.get("status") or {}).get("phase") != CsvPhase.REPLACING
        )


def current_status(world: World) -> dict[str, Any]:
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
    current = current_status(world)
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


def install_context(world: World) -> InstallContext:
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


def provided_apis(world: World, decision: GroupApiCheck) -> Plan | None:
    """OLM's provided-API reconciliation between groups (olm.scope.conflicts): a conflict
    fails the CSV and removes its Deployments; an annotation change of the group is written
    first; a CSV failed by a conflict that went away starts over. None: go on."""
    if decision.failure is not None:
        plan = transition(world, *decision.failure)
        if decision.remove_deployments:
            plan.delete_deployments = orphans(world.csv, world.deployments)
        return plan
    if decision.provided_apis is not None:
        return Plan(
            group_provided_apis=decision.provided_apis,
            requeue_after=RECHECK_AFTER_GROUP_WRITE,
        )
    if decision.stop:
        return Plan()
    if decision.recovery is not None:
        return transition(world, *decision.recovery)
    return None
