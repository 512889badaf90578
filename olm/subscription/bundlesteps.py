"""The InstallPlan steps of the bundles one resolution moves Subscriptions to (OLM v0 §5.4).

For each moved Subscription, its bundle's steps (from the catalog, replacing what it has
installed); then the steps of the dependencies the plan installs, with a Subscription step for
each dependency nobody subscribed to (OLM's resolver does the same). A Subscription whose bundle
cannot be planned yet (its image is being unpacked), cannot be planned at all, or whose
`olm rollback` is unsafe leaves the move for `failures` (its ResolutionFailed or unpacking
condition).

Invariants: pure; a Subscription is either planned or in `failures`, never both; a dependency
that cannot be planned fails every Subscription of the plan (they need it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olm.api.subscription import SubscriptionReason
from olm.installplan.steps import Step, subscription_step
from olm.resolution.model import Candidate
from olm.subscription.policies import is_rollback, rollback_problem
from olm.subscription.resolve import (
    Resolution,
    steps_for,
    unpack_failure,
    unpack_pending,
)
from olm.subscription.snapshot import Snapshot

Failures = dict[str, tuple[SubscriptionReason, str]]  # subscription -> ResolutionFailed


def plan_steps(
    snapshot: Snapshot,
    moved: dict[str, Candidate],
    needed: Sequence[Candidate],
    outcome: Resolution,
    failures: Failures,
) -> tuple[list[str], list[Step], list[tuple[str, list[Step]]]]:
    """(CSV names, their steps, (dependency, its steps)); Subscriptions whose bundle cannot
    be planned (yet: its image is being unpacked) leave `moved` for `failures`."""
    names, steps = [], []
    for name, candidate in list(moved.items()):
        pending = unpack_pending(snapshot, candidate)
        if pending:
            failures[name] = (SubscriptionReason.UNPACKING_IN_PROGRESS, pending)
            del moved[name]
            continue
        found, problem = steps_for(snapshot, candidate, outcome.installed.get(name, ""))
        if not problem and is_rollback(named(snapshot, name), candidate):
            unsafe = rollback_problem(snapshot, found)
            if unsafe:
                failures[name] = (
                    SubscriptionReason.ERROR_PREVENTED_RESOLUTION,
                    f"Subscription {name} cannot be rolled back: {unsafe}",
                )
                del moved[name]
                continue
        if problem:
            failures[name] = (
                (SubscriptionReason.BUNDLE_UNPACK_FAILED, problem)
                if unpack_failure(snapshot, candidate)
                else (
                    SubscriptionReason.ERROR_PREVENTED_RESOLUTION,
                    f"Subscription {name} cannot be resolved: {problem}",
                )
            )
            del moved[name]
            continue
        names.append(candidate.bundle)
        steps += found
    dependencies: list[tuple[str, list[Step]]] = []
    subscribed = {
        (
            str(spec.get("name") or ""),
            str(spec.get("source") or ""),
            str(spec.get("sourceNamespace") or ""),
        )
        for spec in ((s.get("spec") or {}) for s in snapshot.subscriptions)
    }
    for dependency in needed if moved else []:
        pending = unpack_pending(snapshot, dependency)
        if pending:
            for name in moved:
                failures[name] = (
                    SubscriptionReason.UNPACKING_IN_PROGRESS,
                    f"{pending}, a dependency",
                )
            moved.clear()
            return [], [], []
        found, problem = steps_for(snapshot, dependency)
        if problem:
            unpack = bool(unpack_failure(snapshot, dependency))
            for name in moved:
                failures[name] = (
                    (SubscriptionReason.BUNDLE_UNPACK_FAILED, f"its dependency's {problem}")
                    if unpack
                    else (
                        SubscriptionReason.ERROR_PREVENTED_RESOLUTION,
                        f"Subscription {name} cannot be resolved: its dependency {problem}",
                    )
                )
            moved.clear()
            return [], [], []
        if subscription_key(dependency) not in subscribed:
            # Nobody subscribed to it: the plan subscribes, as OLM's resolver does.
            source = (dependency.source.name, dependency.source.namespace)
            found = [
                *found,
                subscription_step(
                    snapshot.namespace,
                    dependency.package,
                    dependency.channel,
                    source,
                    dependency.bundle,
                ),
            ]
        dependencies.append((dependency.bundle, found))
    return names, steps, dependencies


def named(snapshot: Snapshot, name: str) -> Mapping[str, Any]:
    return next(s for s in snapshot.subscriptions if s["metadata"]["name"] == name)


def subscription_key(candidate: Candidate) -> tuple[str, str, str]:
    return (candidate.package, candidate.source.name, candidate.source.namespace)
