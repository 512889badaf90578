"""Drive one corpus package on one side, as an admin would, and snapshot the points it reaches.

A package (`corpus_plan.PackagePlan`) gets its namespace(s), an OperatorGroup for its install
mode and a Subscription to its default channel in CatalogSource olm/corpus. With nothing to
upgrade the Subscription is Automatic and the point is "installed" (the head). With a start
behind the head it is Manual, and the runner approves each plan: "installed" is taken while the
start runs and the upgrade's plan waits for approval (a stable state; with Automatic approval it
would be a race), "upgraded" once the head runs and the Subscription is AtLatestKnown. A global
operator then gets a namespace made after the install: "namespace-added" once its copy is there.
A package that cannot resolve, whose plan or CSV fails, stops at "failed"; one that reaches no
end in time at "stuck". Both sides must reach the same points with the same objects.

Invariants: every wait polls an observable state with a bound; the only writes are the
admin's (namespaces, OperatorGroup, Subscription, plan approvals, clean-up).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tests.parity.corpus_plan import PackagePlan
from tests.parity.harness import ScenarioTimeout, Scope, Side, settled, wait
from tests.parity.steps import (
    COPY_TIMEOUT,
    Snapshots,
    approve,
    condition,
    csv_state,
    gone,
    namespace,
    operator_group,
    subscription_status,
)

SOURCE = "corpus"
STEP_TIMEOUT = 240.0
POLL = 3.0
SUBSCRIPTIONS = "subscriptions.operators.coreos.com"
PLANS = "installplans.operators.coreos.com"
CLUSTER_KINDS = [
    "validatingwebhookconfigurations.admissionregistration.k8s.io",
    "mutatingwebhookconfigurations.admissionregistration.k8s.io",
    "apiservices.apiregistration.k8s.io",
]


@dataclass
class Outcome:
    """What one side did with one package."""

    points: Snapshots = field(default_factory=dict)
    reached: list[str] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""  # why it stopped (failed/stuck), for the report

    def snap(self, side: Side, point: str, scope: Scope) -> None:
        self.points[point] = settled(side, scope)
        self.reached.append(point)


def scope_for(plan: PackagePlan, added: bool = False) -> Scope:
    namespaces = [plan.namespace, *plan.extra_namespaces]
    if added:
        namespaces.append(plan.added_namespace)
    return Scope(
        namespaces,
        catalogs=[SOURCE],
        api_prefixes=list(plan.owned_crds),
        crds=sorted(set(plan.owned_crds) | set(plan.required_crds)),
        resources=["services"],
        cluster_resources=CLUSTER_KINDS,
    )


def _subscribe(side: Side, plan: PackagePlan) -> None:
    spec: dict[str, Any] = {
        "name": plan.package,
        "channel": plan.channel,
        "source": SOURCE,
        "sourceNamespace": "olm",
        "installPlanApproval": "Manual" if plan.upgrades else "Automatic",
    }
    if plan.upgrades:
        spec["startingCSV"] = plan.starting
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": plan.package, "namespace": plan.namespace},
            "spec": spec,
        }
    )


def failure(side: Side, plan: PackagePlan) -> str:
    """Why the package cannot go on ('' while it still can): a failed plan or CSV, or a
    Subscription that failed to resolve before anything was installed."""
    for item in side.items(PLANS, plan.namespace):
        status = item.get("status") or {}
        if status.get("phase") == "Failed":
            return f"InstallPlan {item['metadata']['name']} Failed: {status.get('message', '')}"
    for item in side.items("clusterserviceversions.operators.coreos.com", plan.namespace):
        status = item.get("status") or {}
        copied = (item["metadata"].get("labels") or {}).get("olm.copiedFrom")
        if status.get("phase") == "Failed" and not copied:
            return f"CSV {item['metadata']['name']} Failed/{status.get('reason', '')}"
    resolution = condition(side, plan.namespace, SUBSCRIPTIONS, plan.package, "ResolutionFailed")
    installed = subscription_status(side, plan.namespace, plan.package).get("installedCSV")
    if resolution.get("status") == "True" and not installed:
        return f"ResolutionFailed: {resolution.get('message', '')}"
    return ""


def _until(side: Side, plan: PackagePlan, csv: str, approving: str) -> str:
    """Wait until CSV runs ('') or the package fails (why); on the way approve the waiting
    plans that name the CSV `approving` ("*": any)."""

    def check() -> str | None:
        if approving:
            for item in side.items(PLANS, plan.namespace):
                phase = (item.get("status") or {}).get("phase")
                names = item["spec"].get("clusterServiceVersionNames") or []
                wanted = approving == "*" or approving in names
                if phase == "RequiresApproval" and wanted and not item["spec"].get("approved"):
                    approve(side, plan.namespace, item)
        if csv_state(side, plan.namespace, csv) == "Succeeded/InstallSucceeded":
            return "ok"
        return failure(side, plan) or None

    found: str = wait(check, STEP_TIMEOUT, f"{plan.namespace}/{csv} Succeeded", POLL)
    return "" if found == "ok" else found


def _at_latest(side: Side, plan: PackagePlan) -> None:
    def done() -> bool:
        status = subscription_status(side, plan.namespace, plan.package)
        return (
            status.get("state") == "AtLatestKnown"
            and status.get("installedCSV") == plan.head
            and (not plan.upgrades or gone(side, plan.namespace, plan.starting))
        )

    wait(done, STEP_TIMEOUT, f"{plan.package} AtLatestKnown at {plan.head}", POLL)


def _plans_finished(side: Side, plan: PackagePlan) -> None:
    """Wait until every approved InstallPlan is Complete or Failed: OLM marks its plan Complete
    in a second pass when its first status write conflicted, seconds after the CSV runs."""

    def done() -> bool:
        return all(
            (item.get("status") or {}).get("phase") in ("Complete", "Failed")
            for item in side.items(PLANS, plan.namespace)
            if item["spec"].get("approved")
        )

    wait(done, STEP_TIMEOUT, f"{plan.package}'s approved InstallPlans finished", POLL)


def _upgrade_waiting(side: Side, plan: PackagePlan) -> bool:
    status = subscription_status(side, plan.namespace, plan.package)
    if status.get("state") != "UpgradePending":
        return False
    return any(
        (item.get("status") or {}).get("phase") == "RequiresApproval"
        for item in side.items(PLANS, plan.namespace)
    )


def drive(side: Side, plan: PackagePlan) -> Outcome:
    """Run one package on one side; never raises for the package's own behaviour."""
    out = Outcome()
    began = time.monotonic()
    scope = scope_for(plan)
    try:
        for ns in scope.namespaces:
            namespace(side, ns)
        operator_group(side, plan.namespace, list(plan.targets) if plan.targets else None)
        _subscribe(side, plan)
        why = _until(side, plan, plan.starting, plan.starting if plan.upgrades else "")
        if plan.upgrades and not why:
            wait(lambda: _upgrade_waiting(side, plan), STEP_TIMEOUT, "the upgrade's plan", POLL)
        if why:
            out.note = why
            out.snap(side, "failed", scope)
            return out
        if not plan.upgrades:
            _at_latest(side, plan)
        _plans_finished(side, plan)
        out.snap(side, "installed", scope)
        if plan.upgrades:
            why = _until(side, plan, plan.head, "*")
            if why:
                out.note = why
                out.snap(side, "failed", scope)
                return out
            _at_latest(side, plan)
            _plans_finished(side, plan)
            out.snap(side, "upgraded", scope)
        if plan.is_global:
            namespace(side, plan.added_namespace)
            wait(
                lambda: csv_state(side, plan.added_namespace, plan.head) == "Succeeded/Copied",
                COPY_TIMEOUT,
                f"the copy of {plan.head} in {plan.added_namespace}",
                POLL * 2,
            )
            out.snap(side, "namespace-added", scope_for(plan, added=True))
    except ScenarioTimeout as timeout:
        out.note = f"stuck: {timeout}"
        out.snap(side, "stuck", scope_for(plan, added=plan.is_global))
    finally:
        out.seconds = round(time.monotonic() - began, 1)
    return out


def clean_up(side: Side, plan: PackagePlan) -> None:
    """Delete the package's namespaces (the next package of its group starts clean)."""
    names = [plan.namespace, *plan.extra_namespaces, plan.added_namespace]
    side.kubectl("delete", "namespace", "--ignore-not-found", "--wait=false", *names, check=False)
    wait(
        lambda: all(side.get("namespace", n) is None for n in names),
        STEP_TIMEOUT,
        f"namespaces of {plan.package} deleted",
        POLL,
    )
