"""olm-py's plan per Subscription (beyond OLM), over plain data: which moved Subscriptions
get a plan of their own, and what a shared plan says."""

from __future__ import annotations

from typing import Any

from olm.resolution.model import Candidate, Source
from olm.subscription.decide import decide
from olm.subscription.separate import enabled, groups
from tests.unit.subscription.world import (
    DASHBOARD,
    V1,
    namespace_object,
    subscription,
    world,
)

SOURCE = Source("samples", "olm")
API = ("example.com", "v1", "Thing")


def bundle(name: str, provides: tuple[Any, ...] = (), needs: tuple[Any, ...] = ()) -> Candidate:
    return Candidate(
        name, name.split(".")[0], "stable", SOURCE, "1.0.0", provides=provides, requires_gvks=needs
    )


def test_the_opt_in_is_an_annotation_on_the_namespace_or_a_group() -> None:
    annotated = {"metadata": {"annotations": {"olm-py.io/plan-per-subscription": "true"}}}
    assert enabled(annotated, [])
    assert enabled({"metadata": {}}, [annotated])
    assert not enabled({"metadata": {}}, [{"metadata": {}}])
    off = {"metadata": {"annotations": {"olm-py.io/plan-per-subscription": "false"}}}
    assert not enabled(off, [])


def test_without_the_opt_in_one_group_holds_everything_as_olm() -> None:
    moved = {"a": bundle("a.v1"), "b": bundle("b.v1")}
    dep = bundle("lib.v1")
    [only] = groups(moved, [dep], split=False)
    assert only.subscriptions == ("a", "b") and only.dependencies == (dep,) and not only.own


def test_independent_subscriptions_get_a_plan_each_with_their_own_dependencies() -> None:
    lib = bundle("lib.v1", provides=(API,))
    moved = {"b": bundle("b.v1", needs=(API,)), "a": bundle("a.v1")}
    found = groups(moved, [lib], split=True)
    assert [(g.subscriptions, g.dependencies, g.shared_because) for g in found] == [
        (("a",), (), ""),
        (("b",), (lib,), ""),
    ]
    assert all(g.own for g in found)


def test_subscriptions_sharing_a_dependency_share_a_plan_that_says_why() -> None:
    lib = bundle("lib.v1", provides=(API,))
    moved = {
        "a": bundle("a.v1", needs=(API,)),
        "b": bundle("b.v1", needs=(API,)),
        "c": bundle("c.v1"),
    }
    found = groups(moved, [lib], split=True)
    assert [g.subscriptions for g in found] == [("a", "b"), ("c",)]
    assert found[0].shared_because == (
        "Subscriptions a, b share this InstallPlan: they need the same bundles (lib.v1), "
        "so one approval installs them together"
    )


def test_a_subscription_needing_what_another_moves_shares_its_plan() -> None:
    moved = {"dash": bundle("dash.v1", needs=(API,)), "op": bundle("op.v1", provides=(API,))}
    [joint] = groups(moved, [], split=True)
    assert joint.subscriptions == ("dash", "op") and "op.v1" in joint.shared_because


def opted_in() -> dict[str, Any]:
    space = namespace_object()
    space["metadata"]["annotations"] = {"olm-py.io/plan-per-subscription": "true"}
    return space


def test_the_first_decision_plans_one_of_two_dependent_subscriptions_jointly() -> None:
    """The dashboard needs the operator the other Subscription installs: one plan for both,
    saying why."""
    subs = [
        subscription(installPlanApproval="Manual", startingCSV=V1),
        subscription("dashboard", package="memcached-dashboard", installPlanApproval="Manual"),
    ]
    decision = decide(world(subs, space=opted_in()))
    assert decision.create is not None
    body = decision.create.body
    assert set(body["spec"]["clusterServiceVersionNames"]) == {V1, DASHBOARD}
    assert (
        "dashboard, memcached share this InstallPlan"
        in body["metadata"]["annotations"]["olm-py.io/shared-plan"]
    )


def independent_catalog() -> Any:
    """The samples, with the dashboard needing nothing."""
    from tests.unit.subscription.world import samples

    catalog = samples()
    dashboard = catalog.packages["memcached-dashboard"].bundles[DASHBOARD]
    dashboard.properties = [p for p in dashboard.properties if not p["type"].endswith(".required")]
    return catalog


def test_independent_subscriptions_are_planned_one_at_a_time_each_owning_its_own() -> None:
    from tests.unit.subscription.world import GLOBAL, apply

    subs = [
        subscription(installPlanApproval="Manual", startingCSV=V1),
        subscription("dashboard", package="memcached-dashboard", installPlanApproval="Automatic"),
    ]
    snapshot = world(subs, space=opted_in(), loaded={(GLOBAL, "samples"): independent_catalog()})
    made = []
    for _ in range(6):
        decision = decide(snapshot)
        if decision.create is not None:
            made.append(decision.create.body)
        if decision.empty:
            break
        snapshot = apply(snapshot, decision)
    assert [(b["spec"]["clusterServiceVersionNames"], b["spec"]["approval"]) for b in made] == [
        ([DASHBOARD], "Automatic"),  # its own approval, not the namespace's Manual
        ([V1], "Manual"),
    ]
    assert [[o["name"] for o in b["metadata"]["ownerReferences"]] for b in made] == [
        ["dashboard"],
        ["memcached"],
    ]
    assert all("annotations" not in b["metadata"] for b in made)
