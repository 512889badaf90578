"""At most one InstallPlan per set of CSVs: which existing plan is reused, how a new one is
named and numbered, and the invariant held over whole stories (including restarts)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from olm.subscription import plans as ip
from olm.subscription.decide import decide
from tests.unit.subscription.world import (
    DASHBOARD,
    V1,
    V2,
    apply,
    converge,
    csv,
    install_plan,
    reference,
    status_of,
    subscription,
    uid,
    with_csvs,
    with_plan_phase,
    world,
)

OURS = [uid("memcached")]


def deleting(plan: dict[str, Any]) -> dict[str, Any]:
    return {**plan, "metadata": {**plan["metadata"], "deletionTimestamp": "2030-01-01T00:00:00Z"}}


@pytest.mark.parametrize(
    ("plan", "names", "reused"),
    [
        (install_plan("p", [V1], "Installing"), [V1], True),
        (install_plan("p", [V1], "RequiresApproval"), [V1], True),
        (install_plan("p", [V1], "Complete"), [V1], True),
        (install_plan("p", [V1], None), [V1], True),
        (install_plan("p", [DASHBOARD, V2], "Installing"), [V2, DASHBOARD], True),
        (install_plan("p", [V1], "Failed"), [V1], False),
        (deleting(install_plan("p", [V1], "Installing")), [V1], False),
        (install_plan("p", [V1], "Installing", owners=("someone-else",)), [V1], False),
        (install_plan("p", [V1], "Installing", owners=()), [V1], False),
        (install_plan("p", [DASHBOARD, V2], "Installing"), [V2], False),
        (install_plan("p", [V2], "Installing"), [DASHBOARD, V2], False),
    ],
)
def test_which_plan_is_reused(plan: dict[str, Any], names: list[str], reused: bool) -> None:
    found = ip.reusable({"p": plan}, names, OURS)
    assert (found is plan) if reused else found is None


def test_among_several_the_referenced_then_the_one_with_a_phase_then_the_newest_wins() -> None:
    a = install_plan("a", [V1], None, generation=3)
    b = install_plan("b", [V1], "Installing", generation=1)
    c = install_plan("c", [V1], "Installing", generation=2)
    plans = {"a": a, "b": b, "c": c}
    assert ip.reusable(plans, [V1], OURS) is c
    assert ip.reusable(plans, [V1], OURS, referenced=["b"]) is b
    assert ip.reusable(plans, [V1], OURS, referenced=["a"]) is a


def test_a_new_plan_name_is_stable_and_looks_generated() -> None:
    name = ip.plan_name("ns", 2, [V1, V2])
    assert name == ip.plan_name("ns", 2, [V2, V1])
    assert name.startswith("install-") and len(name) == len("install-") + 5
    assert set(name.removeprefix("install-")) <= set(ip.NAME_ALPHABET)
    others = {
        ip.plan_name("ns", 3, [V1, V2]),
        ip.plan_name("ns", 2, [V1]),
        ip.plan_name("xx", 2, [V1, V2]),
    }
    assert name not in others


@pytest.mark.parametrize(
    ("generations", "sub_generations", "expected"),
    [([], [], 1), ([1, 4], [2], 5), ([1], [7], 8), ([], [3], 4)],
)
def test_the_next_generation_is_one_more_than_any_seen(
    generations: list[int], sub_generations: list[int], expected: int
) -> None:
    plans = {f"p{g}": install_plan(f"p{g}", [V1], "Complete", generation=g) for g in generations}
    subscriptions = [
        subscription(f"s{i}", status={"installPlanGeneration": g})
        for i, g in enumerate(sub_generations)
    ]
    assert ip.next_generation(plans, subscriptions) == expected


def test_pending_csvs_are_those_of_waiting_and_running_plans() -> None:
    plans = {
        "a": install_plan("a", [V1], "RequiresApproval"),
        "b": install_plan("b", [DASHBOARD], "Installing"),
        "c": install_plan("c", [V2], "Complete"),
        "d": install_plan("d", ["x"], "Failed"),
        "e": install_plan("e", ["y"], None),
    }
    assert ip.pending_csvs(plans, OURS) == {V1, DASHBOARD}


# ----- the invariant over whole stories -------------------------------------------------------


def one_plan_per_csv_set(plans: dict[str, Any]) -> None:
    live = [
        frozenset(p["spec"]["clusterServiceVersionNames"])
        for p in plans.values()
        if (p.get("status") or {}).get("phase") != "Failed"
    ]
    assert len(live) == len(set(live)), f"duplicate InstallPlans: {sorted(map(sorted, live))}"
    assert all((p.get("status") or {}).get("phase") for p in plans.values()), "a plan with no phase"


def story_states() -> list[tuple[str, Any]]:
    """Every state of the Automatic story, then each with its Subscription status lost."""
    start = world([subscription(startingCSV=V1)])
    at_v1, _ = converge(start)
    [first] = at_v1.plans
    installed = with_plan_phase(with_csvs(at_v1, csv(V1)), first, "Complete")
    at_v2, _ = converge(installed)
    [second] = [n for n in at_v2.plans if n != first]
    upgraded = with_plan_phase(with_csvs(at_v2, csv(V2, replaces=V1)), second, "Complete")
    states = [
        ("fresh", start),
        ("planned", at_v1),
        ("0.0.1 installed", installed),
        ("0.0.2 planned", at_v2),
        ("0.0.2 installed", upgraded),
    ]
    lost = []
    for label, state in states:
        import dataclasses

        blank = tuple({**s, "status": {}} for s in state.subscriptions)
        lost.append((f"{label}, status lost", dataclasses.replace(state, subscriptions=blank)))
        unwritten = {
            name: {k: v for k, v in p.items() if k != "status"} for name, p in state.plans.items()
        }
        lost.append((f"{label}, plan status lost", dataclasses.replace(state, plans=unwritten)))
    return states + lost


@pytest.mark.parametrize(("label", "state"), story_states(), ids=[s[0] for s in story_states()])
def test_no_state_of_the_story_leads_to_a_second_plan_for_the_same_csvs(
    label: str, state: Any
) -> None:
    settled, _ = converge(state)
    one_plan_per_csv_set(dict(settled.plans))
    assert decide(settled).empty, "and a second pass writes nothing"


def test_a_complete_plan_whose_csv_exists_means_no_new_plan() -> None:
    done = install_plan("install-aaaaa", [V2], "Complete")
    for status in ({}, {"currentCSV": V2}, {"installedCSV": V2, **reference(done)}):
        settled, decisions = converge(
            world([subscription(status=status)], csvs=[csv(V2)], plans=[done])
        )
        assert all(d.create is None for d in decisions), status
        assert status_of(settled)["installedCSV"] == V2


def test_repeated_decisions_over_the_same_cache_create_one_plan() -> None:
    """Deciding again before the cache shows the new plan would create it again; the name
    makes that create collide instead (the executor then uses the existing plan)."""
    snapshot = world([subscription(startingCSV=V1)])
    names = {decide(snapshot).create.body["metadata"]["name"] for _ in range(3)}  # type: ignore[union-attr]
    assert len(names) == 1
    after = apply(snapshot, decide(snapshot))
    assert decide(after).create is None


def test_many_subscriptions_each_restart_point() -> None:
    """Two Subscriptions (one with a dependency) from every prefix of their story: one plan
    per CSV set, whatever point olm-py restarted from."""
    start = world(
        [subscription(startingCSV=V1), subscription("dashboard", package="memcached-dashboard")]
    )
    states = [start]
    for _ in range(4):
        plan = decide(states[-1])
        if plan.empty:
            break
        states.append(apply(states[-1], plan))
    for state, drop_plan_status in itertools.product(states, (False, True)):
        if drop_plan_status:
            import dataclasses

            state = dataclasses.replace(
                state,
                plans={
                    n: {k: v for k, v in p.items() if k != "status"} for n, p in state.plans.items()
                },
            )
        settled, _ = converge(state)
        one_plan_per_csv_set(dict(settled.plans))
