"""A plan per Subscription (olm-py's `olm-py.io/plan-per-subscription` opt-in, beyond OLM).

OLM puts every change resolved in a namespace at once into one InstallPlan, so approving one
Subscription's upgrade approves its neighbours' too (operator-lifecycle-manager#1355, #1859,
#2325, #3152). With the annotation `olm-py.io/plan-per-subscription: "true"` on the namespace
or on one of its OperatorGroups, the Subscriptions moved in one resolution are split by their
dependency closures: Subscriptions that share no bundle (a dependency, or one needs the
other's) each get a plan of their own, under their own approval (`installPlanApproval` of the plan's Subscriptions only) and
owned by them only. Subscriptions whose closures overlap keep OLM's joint plan, and the plan
says which Subscriptions share it and why (SHARED_PLAN_ANNOTATION, shown in their
InstallPlanPending condition).

Invariants: pure; without the opt-in there is exactly one group, holding every moved
Subscription and every dependency (OLM's behaviour, unchanged); with it every moved
Subscription and every dependency is in exactly one group; groups come sorted by their first
Subscription's name, so decisions repeat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.planpolicy import PLAN_PER_SUBSCRIPTION_ANNOTATION
from olm.resolution.model import Candidate

TRUE = "true"


@dataclass(frozen=True)
class PlanGroup:
    """The Subscriptions (names) one plan moves, the dependencies it installs, and, when
    split from a namespace's other Subscriptions (`own` is True), why they share it."""

    subscriptions: tuple[str, ...]
    dependencies: tuple[Candidate, ...]
    own: bool = False
    shared_because: str = ""


def enabled(namespace: Mapping[str, Any] | None, groups: Sequence[Mapping[str, Any]]) -> bool:
    """The opt-in: the annotation on the namespace or on any OperatorGroup in it."""
    for obj in [namespace or {}, *groups]:
        annotations = body.annotations(obj)
        if str(annotations.get(PLAN_PER_SUBSCRIPTION_ANNOTATION, "")).strip().lower() == TRUE:
            return True
    return False


def _needs(dependent: Candidate, provider: Candidate) -> bool:
    return any(gvk in provider.provides for gvk in dependent.requires_gvks) or any(
        package == provider.package for package, _ in dependent.requires_packages
    )


def _closure(start: Candidate, dependencies: Sequence[Candidate]) -> set[str]:
    """The dependency bundles `start` needs, directly or through another dependency."""
    seen: set[str] = set()
    frontier = [start]
    while frontier:
        current = frontier.pop()
        for dependency in dependencies:
            if dependency.bundle not in seen and _needs(current, dependency):
                seen.add(dependency.bundle)
                frontier.append(dependency)
    return seen


def groups(
    moved: Mapping[str, Candidate], dependencies: Sequence[Candidate], split: bool
) -> list[PlanGroup]:
    """The plans to make for `moved` (Subscription -> bundle) and `dependencies`."""
    if not moved:
        return []
    if not split:
        return [PlanGroup(tuple(moved), tuple(dependencies))]
    # What each Subscription's plan must hold: its bundle and what that needs, among the
    # dependencies and the other moved bundles (a dashboard needing the operator another
    # Subscription moves must be planned with it).
    pool = [*dependencies, *moved.values()]
    closures = {
        name: {candidate.bundle} | _closure(candidate, [c for c in pool if c != candidate])
        for name, candidate in moved.items()
    }
    # Union of Subscriptions whose closures overlap (a shared dependency bundle).
    parent = {name: name for name in moved}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    names = sorted(moved)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            if closures[first] & closures[second]:
                parent[root(second)] = root(first)
    members: dict[str, list[str]] = {}
    for name in names:
        members.setdefault(root(name), []).append(name)
    found = []
    claimed: set[str] = set()
    for subscriptions in sorted(members.values()):
        bundles: set[str] = set().union(*(closures[name] for name in subscriptions))
        claimed |= bundles
        found.append(
            PlanGroup(
                tuple(subscriptions),
                tuple(d for d in dependencies if d.bundle in bundles),
                own=True,
                shared_because=_why_shared(subscriptions, closures),
            )
        )
    # A dependency no moved bundle needs (the resolver keeps only needed ones): first plan.
    rest = tuple(d for d in dependencies if d.bundle not in claimed)
    if rest:
        head = found[0]
        found[0] = PlanGroup(
            head.subscriptions, head.dependencies + rest, head.own, head.shared_because
        )
    return found


def _why_shared(subscriptions: Sequence[str], closures: Mapping[str, set[str]]) -> str:
    if len(subscriptions) < 2:
        return ""
    shared = sorted(
        {
            bundle
            for i, first in enumerate(subscriptions)
            for second in subscriptions[i + 1 :]
            for bundle in closures[first] & closures[second]
        }
    )
    return (
        f"Subscriptions {', '.join(subscriptions)} share this InstallPlan: they need the same "
        f"bundles ({', '.join(shared)}), so one approval installs them together"
    )
