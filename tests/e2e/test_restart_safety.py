"""`olm run` can stop at any moment, and installed operators must not notice.

1. Twenty namespaces are installed and upgraded to 0.0.2, half by the kubectl story (CSV, CRD,
   RBAC applied by hand) and half by a Subscription (Automatic, startingCSV 0.0.1, from the
   samples catalog). Then `olm run` is restarted, first gracefully (SIGTERM), then with
   SIGKILL. After each restart nothing in those namespaces is written for 60 s
   (OLM_RESTART_QUIET_SECONDS shortens it for a quick look): every CSV, Subscription,
   InstallPlan, Deployment, ServiceAccount, Role, RoleBinding and OperatorGroup keeps its
   resourceVersion, no CSV leaves Succeeded even for a moment, no Subscription loses its
   state or installedCSV, there is at most one InstallPlan per CSV and none with an empty phase.
2. Kill trials: `olm run` is killed (SIGKILL) at a random moment of the kubectl story and of
   the Subscription story (Automatic, and Manual with the admin approving), and started again.
   Every trial converges to 0.0.2 with no duplicate InstallPlans, Deployments, Roles,
   RoleBindings or ServiceAccounts, no InstallPlan with an empty phase, and the Memcached
   instance and its Deployment keep their UIDs (benchmarks/fault_stories.py has the stories
   and the judge; `make bench` runs 30 trials per story and measures the times).

OLM_FAULT_SEED fixes the random kill moments (every failure message names the seed);
OLM_KILL_TRIALS changes the number of kill trials per story (3).
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from benchmarks.fault_stories import KINDS, NEW, STORIES, Story, prepare_cluster, run_trial
from benchmarks.watching import Kube, Observer, differences, writers
from tests.support.cluster import SESSION_ID, SESSION_LABEL, STEP_TIMEOUT, ControlPlane
from tests.support.olm_run import OlmOperator

INSTALLED = 20
QUIET = float(os.environ.get("OLM_RESTART_QUIET_SECONDS", "60"))
KILL_TRIALS = int(os.environ.get("OLM_KILL_TRIALS", "3"))
SEED = int(os.environ.get("OLM_FAULT_SEED", time.time()))
RUN = uuid.uuid4().hex[:5]
PREFIX = f"rs-{RUN}-"
# What a restart must leave untouched (issue 16), as `kubectl get` names them.
UNTOUCHED = (
    "clusterserviceversions.operators.coreos.com,subscriptions.operators.coreos.com,"
    "installplans.operators.coreos.com,deployments.apps,serviceaccounts,"
    "roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io,"
    "operatorgroups.operators.coreos.com"
)
LABELS = {SESSION_LABEL: SESSION_ID}


@pytest.fixture(scope="module")
def kube(control_plane: ControlPlane) -> Kube:
    return Kube(control_plane.bin_dir / "kubectl", control_plane.env())


@pytest.fixture(scope="module")
def observer(kube: Kube, olm_operator: OlmOperator) -> Iterator[Observer]:
    prepare_cluster(kube)
    watching = Observer(kube, KINDS, keep=lambda namespace: namespace.startswith(PREFIX)).start()
    yield watching
    watching.close()


@dataclass
class Installed:
    namespaces: dict[str, Story]  # installed without a fault: what the restarts are judged on
    failures: list[str]  # namespaces whose install went wrong, with what went wrong


@pytest.fixture(scope="module")
def installed(kube: Kube, observer: Observer, olm_operator: OlmOperator) -> Iterator[Installed]:
    """20 namespaces at 0.0.2, half by the kubectl story, half by an Automatic Subscription."""
    stories = [STORIES[0], STORIES[1]] * (INSTALLED // 2)
    namespaces = {f"{PREFIX}steady-{i}": story for i, story in enumerate(stories)}

    def install(item: tuple[str, Story]) -> tuple[str, str]:
        namespace, story = item
        result = run_trial(
            kube,
            observer,
            olm_operator,
            story,
            namespace,
            random.Random(),
            None,
            timeout=STEP_TIMEOUT,
            labels=LABELS,
            cleanup=False,
            grace=120,  # twenty operator processes start at once on two cores
        )
        return namespace, "" if result.ok else result.summary()

    with ThreadPoolExecutor(max_workers=INSTALLED // 2) as pool:
        failed = dict(f for f in pool.map(install, namespaces.items()) if f[1])
    try:
        yield Installed(
            {n: s for n, s in namespaces.items() if n not in failed}, list(failed.values())
        )
    finally:
        for namespace in namespaces:
            kube.run("delete", "namespace", namespace, "--wait=false", check=False)


def snapshot(kube: Kube, namespaces: dict[str, Story]) -> dict[tuple[str, str, str], Any]:
    items = kube.get_json(UNTOUCHED, "--all-namespaces", "--show-managed-fields")["items"]
    return {
        (i["kind"], i["metadata"]["namespace"], i["metadata"]["name"]): i
        for i in items
        if i["metadata"]["namespace"] in namespaces
    }


def settle(observer: Observer, namespaces: dict[str, Story], quiet: float = 5.0) -> float:
    """Wait until nothing changed in `namespaces` for `quiet` s (at most STEP_TIMEOUT s); the
    wait."""
    started = time.monotonic()
    while time.monotonic() - started < STEP_TIMEOUT:
        if time.monotonic() - observer.last_change(namespaces) >= quiet:
            break
        time.sleep(0.5)
    return time.monotonic() - started


@pytest.mark.parametrize("how", ["graceful", "kill-9"])
def test_restart_over_installed_namespaces_writes_nothing(
    kube: Kube,
    observer: Observer,
    olm_operator: OlmOperator,
    installed: Installed,
    how: str,
) -> None:
    namespaces = installed.namespaces
    settled_after = settle(observer, namespaces)
    before = snapshot(kube, namespaces)
    assert len([k for k in before if k[0] == "ClusterServiceVersion"]) == len(namespaces)

    restarted = time.monotonic()
    if how == "graceful":
        olm_operator.stop()
    else:
        olm_operator.kill()
    olm_operator.start()
    time.sleep(QUIET)
    after = snapshot(kube, namespaces)

    problems = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        if old is None or new is None:
            problems.append(f"{'/'.join(key)} was {'created' if old is None else 'deleted'}")
        elif old["metadata"]["resourceVersion"] != new["metadata"]["resourceVersion"]:
            changes = "; ".join(differences(old, new)) or "no field changed"
            problems.append(f"{'/'.join(key)} was written by {writers(old, new)}: {changes}")
    plans: dict[str, set[str]] = defaultdict(set)
    for namespace in namespaces:
        for seen in observer.history(namespace):
            status = seen.obj.get("status") or {}
            if seen.kind == "installplan":
                for csv in seen.obj["spec"].get("clusterServiceVersionNames") or []:
                    plans[f"{namespace}/{csv}"].add(seen.name)
            if seen.at < restarted:
                continue
            where = f"{seen.kind} {namespace}/{seen.name}"
            if seen.kind == "csv" and (
                status.get("phase") != "Succeeded" or seen.type == "DELETED"
            ):
                problems.append(
                    f"{where} left Succeeded: {seen.type} {status.get('phase')}/{status.get('reason')}"
                )
            if seen.kind == "subscription" and (
                (status.get("state"), status.get("installedCSV")) != ("AtLatestKnown", NEW)
            ):
                problems.append(
                    f"{where} lost its state: state={status.get('state')!r} "
                    f"installedCSV={status.get('installedCSV')!r}"
                )
            if seen.kind == "installplan" and not status.get("phase"):
                problems.append(f"{where} has an empty phase ({seen.type})")
    problems += [
        f"{csv}: {len(names)} InstallPlans {sorted(names)}"
        for csv, names in plans.items()
        if len(names) > 1
    ]
    problems += [
        f"{p['metadata']['namespace']}/{p['metadata']['name']}: empty phase at the end"
        for (kind, _, _), p in after.items()
        if kind == "InstallPlan" and not (p.get("status") or {}).get("phase")
    ]
    counts: dict[str, int] = {}
    for problem in problems:  # one line per distinct problem, with how often it was seen
        counts[problem] = counts.get(problem, 0) + 1
    problems = [f"{p} (seen {n} times)" if n > 1 else p for p, n in counts.items()]
    report = (
        f"{how} restart of olm run over {len(namespaces)} installed namespaces "
        f"({len(before)} objects; settled {settled_after:.0f} s before), within {QUIET:.0f} s:\n  "
        + ("\n  ".join(problems[:60]) or "nothing written, nothing lost")
        + (f"\n  ... and {len(problems) - 60} more" if len(problems) > 60 else "")
    )
    if installed.failures:
        report += (
            f"\n\nand {len(installed.failures)} of {INSTALLED} namespaces did not install without "
            "any fault (left out of the check above):\n" + "\n".join(installed.failures)
        )
    assert not problems and not installed.failures, report


@pytest.mark.parametrize("story", STORIES, ids=lambda s: s.name)
def test_olm_run_killed_at_a_random_moment_converges(
    kube: Kube, observer: Observer, olm_operator: OlmOperator, story: Story
) -> None:
    rng = random.Random(f"{SEED}-{story.name}")
    control = run_trial(
        kube,
        observer,
        olm_operator,
        story,
        f"{PREFIX}{story.name}-c",
        rng,
        None,
        STEP_TIMEOUT,
        LABELS,
    )
    assert control.ok, f"the story fails even without a fault:\n{control.summary()}"
    window = control.seconds or 5.0
    trials = [
        run_trial(
            kube,
            observer,
            olm_operator,
            story,
            f"{PREFIX}{story.name}-{index}",
            rng,
            window,
            timeout=STEP_TIMEOUT,
            labels=LABELS,
        )
        for index in range(KILL_TRIALS)
    ]
    failed = [t for t in trials if not t.ok]
    assert not failed, (
        f"{len(failed)} of {KILL_TRIALS} kill trials went wrong (seed {SEED}, kill moment drawn "
        f"from 0-{window:.1f} s, the story's time without a fault):\n"
        + "\n".join(t.summary() for t in failed)
    )
