"""Fault trials: a user story in a namespace of its own, `olm run` killed (SIGKILL) at a random
moment of it and started again; then the namespace is judged.

Shared by tests/e2e/test_restart_safety.py (a few trials, asserted) and benchmarks/faults.py
(30 per story, measured). The stories are the ones of issue 8:

- `kubectl`: the admin applies RBAC, CSV 0.0.1 and a Memcached instance, waits for 0.0.1 to
  read Succeeded, then applies CSV 0.0.2 (replaces 0.0.1);
- `subscription-automatic` / `subscription-manual`: a Subscription to the samples catalog
  (`olm/samples`, channel alpha, startingCSV 0.0.1) and a Memcached instance; with Manual the
  admin approves every InstallPlan as soon as it shows up.

Every story ends at 0.0.2. A trial is judged on:

- converged: the end state is reached after the restart and holds for `HOLD` seconds; its time
  is from the restart (the moment the new process was started) to the moment it was reached
  for good; `left_end_state` counts how often it was reached and then lost again;
- duplicates, after a grace for the garbage collector: more than one InstallPlan per CSV
  (counted over the whole trial from the watch, so a plan that came and went counts), and
  Deployments, ServiceAccounts, Roles, RoleBindings, OperatorConditions beyond what the story
  should leave; cluster RBAC left for the namespace by a replaced CSV;
- InstallPlans whose `status.phase` is still empty at the end;
- operand UIDs: the Memcached instance and its Deployment never get a second UID, are never
  deleted; the operator's Deployment is taken over on upgrade, never recreated;
- the operator's ServiceAccount is present at the end (and, when OLM made it, owned by 0.0.2).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import yaml

from benchmarks.watching import Kube, KubectlError, Observer

SAMPLE = Path(__file__).resolve().parents[1] / "manifests" / "samples" / "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
OPERATOR = "memcached-operator"  # the operator's Deployment and ServiceAccount
OPERAND = "cache-a"  # the Memcached instance, and the Deployment the operator makes for it
KINDS = [
    "csv",
    "subscription",
    "installplan",
    "operatorgroup",
    "operatorcondition",
    "deployment",
    "serviceaccount",
    "role",
    "rolebinding",
    "memcached",
]
HOLD = 4.0  # seconds the end state must hold to count as reached (covers olm run start-up)
GRACE = 30.0  # seconds after convergence for the garbage collector and the operand to appear


class Restartable(Protocol):
    """`olm run` as a process the trial can kill (SIGKILL) and start again."""

    def kill(self) -> None: ...

    def start(self) -> None: ...


def csv_manifest(version: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(
        (SAMPLE / f"memcached-operator.v{version}.csv.yaml").read_text()
    )
    return loaded


def memcached(name: str = OPERAND, size: int = 1) -> dict[str, Any]:
    return {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": name},
        "spec": {"size": size},
    }


def prepare_cluster(kube: Kube) -> None:
    """What every story needs cluster-wide: the Memcached CRD (as the admin applies it)."""
    kube.apply_file(SAMPLE / "crd.yaml")
    kube.run(
        "wait", "--for=condition=Established", "crd/memcacheds.cache.example.com", "--timeout=60s"
    )


def phase(observer: Observer, namespace: str, name: str) -> str:
    """'Phase/Reason' of a CSV as the watch last saw it, or 'absent'."""
    csv = observer.get("csv", namespace, name)
    if csv is None:
        return "absent"
    status = csv.get("status") or {}
    return f"{status.get('phase', '')}/{status.get('reason', '')}"


def _wait(check: Callable[[], bool], stop: threading.Event, interval: float = 0.1) -> bool:
    while not stop.is_set():
        if check():
            return True
        time.sleep(interval)
    return False


@dataclass(frozen=True)
class Story:
    """One of issue 8's stories: the admin's steps, the end state, and what it must leave."""

    name: str
    approval: str | None  # None: the kubectl story; else the Subscription's installPlanApproval

    @property
    def subscribes(self) -> bool:
        return self.approval is not None

    def prepare(self, kube: Kube, namespace: str, labels: dict[str, str]) -> None:
        """Before the clock: the namespace and its OperatorGroup."""
        kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": namespace, "labels": labels},
            }
        )
        kube.apply(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": "og"},
                "spec": {"targetNamespaces": [namespace]},
            },
            namespace,
        )

    def act(self, kube: Kube, observer: Observer, namespace: str, stop: threading.Event) -> None:
        """The admin's steps; returns when there is nothing left to do (or `stop` is set)."""
        if not self.subscribes:
            kube.apply_file(SAMPLE / "rbac.yaml", namespace)
            kube.apply(csv_manifest("0.0.1"), namespace)
            kube.apply(memcached(), namespace)
            if _wait(lambda: phase(observer, namespace, OLD).startswith("Succeeded/"), stop):
                kube.apply(csv_manifest("0.0.2"), namespace)
            return
        kube.apply(
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "Subscription",
                "metadata": {"name": "memcached"},
                "spec": {
                    "name": "memcached-operator",
                    "channel": "alpha",
                    "source": "samples",
                    "sourceNamespace": "olm",
                    "installPlanApproval": self.approval,
                    "startingCSV": OLD,
                },
            },
            namespace,
        )
        kube.apply(memcached(), namespace)
        approved: set[str] = set()
        while self.approval == "Manual" and not stop.is_set():
            for plan in observer.items("installplan", namespace):
                name = plan["metadata"]["name"]
                if (plan.get("spec") or {}).get("approved") is False and name not in approved:
                    kube.run(
                        "patch",
                        "installplans.operators.coreos.com",
                        name,
                        "-n",
                        namespace,
                        "--type=merge",
                        "-p",
                        '{"spec":{"approved":true}}',
                        check=False,
                    )
                    approved.add(name)
            time.sleep(0.1)

    def missing(self, observer: Observer, namespace: str) -> list[str]:
        """What of the end state is not there yet (empty: reached)."""
        missing = []
        if phase(observer, namespace, NEW) != "Succeeded/InstallSucceeded":
            missing.append(f"{NEW} is {phase(observer, namespace, NEW)}")
        if phase(observer, namespace, OLD) != "absent":
            missing.append(f"{OLD} is still there ({phase(observer, namespace, OLD)})")
        deployment = observer.get("deployment", namespace, OPERATOR)
        owner = ((deployment or {}).get("metadata", {}).get("labels") or {}).get("olm.owner")
        if owner != NEW:
            missing.append(f"Deployment {OPERATOR} is owned by {owner}")
        if self.subscribes:
            subscription = observer.get("subscription", namespace, "memcached") or {}
            status = subscription.get("status") or {}
            seen = (status.get("state"), status.get("installedCSV"), status.get("currentCSV"))
            if seen != ("AtLatestKnown", NEW, NEW):
                missing.append(f"Subscription state/installedCSV/currentCSV are {seen}")
            reference = (status.get("installPlanRef") or {}).get("name", "")
            plan = observer.get("installplan", namespace, reference) or {}
            plan_phase = (plan.get("status") or {}).get("phase")
            if plan_phase != "Complete":
                missing.append(f"its InstallPlan {reference!r} is {plan_phase!r}")
        return missing

    def leftovers(self, observer: Observer, namespace: str) -> dict[str, list[str]]:
        """Objects the story should not leave in the namespace, by kind (duplicates, orphans)."""
        found: dict[str, list[str]] = {}

        def extra(kind: str, allowed: Callable[[dict[str, Any]], bool]) -> None:
            unexpected = [
                o["metadata"]["name"] for o in observer.items(kind, namespace) if not allowed(o)
            ]
            if unexpected:
                found[kind] = unexpected

        def owned_by_new(obj: dict[str, Any]) -> bool:
            return (obj["metadata"].get("labels") or {}).get("olm.owner") == NEW

        def on_condition(obj: dict[str, Any]) -> bool:
            refs = obj["metadata"].get("ownerReferences") or []
            return any(r.get("kind") == "OperatorCondition" for r in refs)

        extra("deployment", lambda o: o["metadata"]["name"] in (OPERATOR, OPERAND))
        extra("serviceaccount", lambda o: o["metadata"]["name"] in ("default", OPERATOR))
        extra("operatorcondition", lambda o: o["metadata"]["name"] == NEW)
        for kind in ("role", "rolebinding"):
            # The live CSV's OperatorCondition's own Role and RoleBinding (OLM makes them too).
            extra(kind, lambda o: o["metadata"]["name"] == NEW or not on_condition(o))
        if self.subscribes:
            for kind in ("role", "rolebinding"):
                extra(kind, lambda o: owned_by_new(o) or on_condition(o))
                operators = [
                    o["metadata"]["name"]
                    for o in observer.items(kind, namespace)
                    if not on_condition(o)
                ]
                if len(operators) > 1:
                    found[kind] = operators
        else:
            for kind in ("role", "rolebinding"):
                extra(kind, lambda o: o["metadata"]["name"] == OPERATOR or on_condition(o))
        return found

    @staticmethod
    def cluster_leftovers(kube: Kube, namespace: str) -> list[str]:
        """ClusterRoles and -Bindings OLM made for a CSV of the namespace that is not the live
        one (those of its OperatorGroup are the group's, not leftovers)."""
        items = kube.get_json(
            "clusterroles,clusterrolebindings", "-l", f"olm.owner.namespace={namespace}"
        )["items"]
        return [
            f"{o['kind']}/{o['metadata']['name']}"
            for o in items
            if (o["metadata"].get("labels") or {}).get("olm.owner.kind") == "ClusterServiceVersion"
            and (o["metadata"].get("labels") or {}).get("olm.owner") != NEW
        ]

    def account_problems(self, observer: Observer, namespace: str) -> list[str]:
        account = observer.get("serviceaccount", namespace, OPERATOR)
        if account is None:
            return [f"ServiceAccount {OPERATOR} is missing"]
        owners = [o["name"] for o in account["metadata"].get("ownerReferences") or []]
        if self.subscribes and owners != [NEW]:
            return [f"ServiceAccount {OPERATOR} is owned by {owners}, not [{NEW}]"]
        return []


STORIES = [
    Story("kubectl", None),
    Story("subscription-automatic", "Automatic"),
    Story("subscription-manual", "Manual"),
]


@dataclass
class TrialResult:
    story: str
    namespace: str
    kill_after: float | None  # seconds into the story; None for a run without a fault
    converged: bool
    seconds: float | None  # restart (or story start) -> end state reached for good
    left_end_state: int = 0
    done_before_kill: bool = False  # the end state was already reached when the kill landed
    restarted_at: str = ""  # wall-clock time of the restart, to find it in olm run's log
    plans_per_csv: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    empty_phase_plans: list[str] = field(default_factory=list)
    operand_uid_changes: list[str] = field(default_factory=list)
    recreated_deployments: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    report: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        when = "no fault" if self.kill_after is None else f"killed at {self.kill_after:.2f} s"
        if self.done_before_kill:
            when += ", after the end state was reached"
        outcome = f"converged in {self.seconds:.2f} s" if self.converged else "did NOT converge"
        text = f"{self.story} {self.namespace} ({when}): {outcome}"
        if self.problems:
            text += "\n  - " + "\n  - ".join(self.problems)
        if self.report:
            text += "\n  namespace state:\n    " + self.report.replace("\n", "\n    ")
        return text


def run_trial(
    kube: Kube,
    observer: Observer,
    operator: Restartable,
    story: Story,
    namespace: str,
    rng: random.Random,
    kill_window: float | None,
    timeout: float = 60.0,
    labels: dict[str, str] | None = None,
    cleanup: bool = True,
    grace: float = GRACE,
) -> TrialResult:
    """One story in `namespace`; with `kill_window`, `olm run` is killed at a moment drawn
    uniformly from [0, kill_window] seconds into the story and started again 0-0.5 s later."""
    story.prepare(kube, namespace, labels or {})
    stop = threading.Event()
    failures: list[str] = []

    def act() -> None:
        try:
            story.act(kube, observer, namespace, stop)
        except (KubectlError, OSError) as exc:
            failures.append(f"the admin's step failed: {exc}")

    actor = threading.Thread(target=act, daemon=True)
    started = time.monotonic()
    actor.start()
    kill_after, done_before_kill = None, False
    if kill_window is not None:
        kill_after = rng.uniform(0.0, kill_window)
        time.sleep(max(0.0, started + kill_after - time.monotonic()))
        done_before_kill = not story.missing(observer, namespace)
        operator.kill()
        time.sleep(rng.uniform(0.0, 0.5))
        operator.start()
    clock = time.monotonic()
    restarted_at = datetime.now(UTC).isoformat(timespec="milliseconds")

    reached: float | None = None
    left = 0
    missing: list[str] = []
    while time.monotonic() < clock + timeout:
        now = time.monotonic()
        missing = story.missing(observer, namespace)
        if not missing and reached is None:
            reached = now
        elif missing and reached is not None:
            left, reached = left + 1, None
        if reached is not None and now - reached >= HOLD:
            break
        time.sleep(0.1)
    else:
        if reached is not None and not story.missing(observer, namespace):
            missing = []
        else:
            reached = None
    converged = reached is not None
    result = TrialResult(
        story.name,
        namespace,
        None if kill_after is None else round(kill_after, 2),
        converged,
        round(reached - clock, 2) if reached is not None else None,
        left_end_state=left,
        done_before_kill=done_before_kill,
        restarted_at=restarted_at if kill_window is not None else "",
    )
    if not converged:
        result.problems.append(
            f"not converged {timeout:.0f} s after the {'restart' if kill_window else 'start'}: "
            + "; ".join(missing)
        )
    if left:
        result.problems.append(f"reached the end state and lost it again {left} time(s)")
    _judge(kube, observer, story, namespace, result, settle=grace if converged else 0.0)
    stop.set()
    actor.join(10)
    result.problems.extend(failures)
    if result.problems:
        result.report = namespace_report(kube, namespace)
    if cleanup:
        kube.run("delete", "namespace", namespace, "--wait=false", check=False)
        observer.forget(namespace)
    return result


def _judge(
    kube: Kube,
    observer: Observer,
    story: Story,
    namespace: str,
    result: TrialResult,
    settle: float,
) -> None:
    """Duplicates, empty phases, operand UIDs; waits up to `settle` s for leftovers to go."""
    deadline = time.monotonic() + settle
    while True:
        leftovers = story.leftovers(observer, namespace)
        accounts = story.account_problems(observer, namespace)
        operand = observer.get("deployment", namespace, OPERAND)
        if (not leftovers and not accounts and operand) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    if leftovers or accounts or operand is None:
        # Confirm against a fresh listing: a watch that was restarted never reports what
        # was deleted during its gap.
        observer.resync(namespace)
        leftovers = story.leftovers(observer, namespace)
        accounts = story.account_problems(observer, namespace)
        operand = observer.get("deployment", namespace, OPERAND)
    orphans = story.cluster_leftovers(kube, namespace)
    if orphans:
        leftovers["cluster rbac"] = orphans
    history = observer.history(namespace)

    plans: dict[str, set[str]] = defaultdict(set)
    uids: dict[tuple[str, str], set[str]] = defaultdict(set)
    deleted: set[tuple[str, str]] = set()
    for seen in history:
        if seen.kind == "installplan":
            for csv in (seen.obj.get("spec") or {}).get("clusterServiceVersionNames") or []:
                plans[csv].add(seen.name)
        if seen.kind in ("deployment", "memcached"):
            uids[(seen.kind, seen.name)].add(str(seen.obj["metadata"]["uid"]))
            if seen.type == "DELETED":
                deleted.add((seen.kind, seen.name))
    result.plans_per_csv = {csv: len(names) for csv, names in sorted(plans.items())}
    for csv, names in sorted(plans.items()):
        if len(names) > 1:
            leftovers[f"installplans for {csv}"] = sorted(names)
    result.duplicates = leftovers
    result.empty_phase_plans = [
        p["metadata"]["name"]
        for p in observer.items("installplan", namespace)
        if not (p.get("status") or {}).get("phase")
    ]
    for key in (("memcached", OPERAND), ("deployment", OPERAND)):
        if len(uids[key]) > 1 or key in deleted:
            result.operand_uid_changes.append(
                f"{key[0]}/{key[1]}: {len(uids[key])} UIDs, deleted={key in deleted}"
            )
    if len(uids[("deployment", OPERATOR)]) > 1:
        result.recreated_deployments.append(OPERATOR)

    if leftovers:
        result.problems.append(f"duplicates or leftovers: {json.dumps(leftovers)}")
    if result.empty_phase_plans:
        result.problems.append(f"InstallPlans with an empty phase: {result.empty_phase_plans}")
    if result.operand_uid_changes:
        result.problems.append(f"operand UIDs changed: {result.operand_uid_changes}")
    if result.recreated_deployments:
        result.problems.append(f"Deployments recreated: {result.recreated_deployments}")
    result.problems.extend(accounts)
    if operand is None and result.converged:
        result.problems.append(
            f"the operand Deployment {OPERAND} was not made within {settle:.0f} s "
            "(is the operator running?)"
        )


def namespace_report(kube: Kube, namespace: str) -> str:
    """What a person would look at when a trial goes wrong, one line per object."""
    lines = []
    kinds = (
        "subscriptions.operators.coreos.com,installplans.operators.coreos.com,"
        "clusterserviceversions.operators.coreos.com,deployments.apps,serviceaccounts,"
        "roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io"
    )
    try:
        items = kube.get_json(kinds, "-n", namespace)["items"]
    except KubectlError as exc:
        return f"(could not read the namespace: {exc})"
    for item in items:
        meta, status = item["metadata"], item.get("status") or {}
        summary: dict[str, Any] = {
            k: status.get(k)
            for k in ("phase", "reason", "message", "state", "installedCSV", "currentCSV")
            if status.get(k)
        }
        if item["kind"] == "InstallPlan":
            summary["csvs"] = item["spec"].get("clusterServiceVersionNames")
            summary["approved"] = item["spec"].get("approved")
        if item["kind"] == "Subscription":
            summary["installPlanRef"] = (status.get("installPlanRef") or {}).get("name")
        owners = [o["name"] for o in meta.get("ownerReferences") or []]
        if owners and item["kind"] not in ("InstallPlan", "Deployment"):
            summary["owners"] = owners
        olm_owner = (meta.get("labels") or {}).get("olm.owner")
        if olm_owner:
            summary["olm.owner"] = olm_owner
        lines.append(f"{item['kind']} {meta['name']}: {json.dumps(summary)[:400]}")
    return "\n".join(lines)
