"""OLM's adoption controller as a decision: which objects get (or lose) the component label."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.operator import component
from olm.operator.adoption import (
    AdoptionPlan,
    AdoptionSnapshot,
    Candidate,
    LabelWrite,
    decide_adoption,
)
from tests.unit.operator.objects import (
    CSV_NAME,
    KEY,
    MANAGED,
    NS,
    csv,
    obj,
    owner,
    owner_labels,
    plan,
    subscription,
)

RBAC = "rbac.authorization.k8s.io/v1"


def candidates(*objs: dict[str, Any]) -> list[Candidate]:
    return [Candidate(component(o["kind"]), o) for o in objs]


def written(decision: AdoptionPlan) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    return {w.subject: (w.add, w.remove) for w in decision.writes}


def apply(snapshot: AdoptionSnapshot, decision: AdoptionPlan) -> AdoptionSnapshot:
    """The snapshot once the writes are done (for the "second pass writes nothing" checks)."""
    by_subject = {w.subject: w for w in decision.writes}

    def after(kind: str, o: dict[str, Any]) -> dict[str, Any]:
        meta = o["metadata"]
        where = f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]
        write = by_subject.get(f"{kind} {where}")
        return write.applied_to(o) if write else o

    return AdoptionSnapshot(
        snapshot.namespace,
        [after("Subscription", s) for s in snapshot.subscriptions],
        [after("ClusterServiceVersion", c) for c in snapshot.csvs],
        [after("InstallPlan", p) for p in snapshot.plans],
        [Candidate(c.kind, after(c.kind.kind, dict(c.obj))) for c in snapshot.others],
    )


def world(**more: Any) -> AdoptionSnapshot:
    return AdoptionSnapshot(
        NS,
        subscriptions=more.get("subscriptions", [subscription()]),
        csvs=more.get("csvs", [csv()]),
        plans=more.get("plans", [plan("install-1", {KEY: ""}), plan("install-2")]),
        others=more.get("others", []),
    )


def test_the_subscription_its_csv_and_latest_plan_are_labelled_older_plans_lose_it() -> None:
    decision = decide_adoption(world())
    assert written(decision) == {
        f"Subscription {NS}/memcached": ((KEY,), ()),
        f"ClusterServiceVersion {NS}/{CSV_NAME}": ((KEY,), ()),
        f"InstallPlan {NS}/install-2": ((KEY,), ()),
        f"InstallPlan {NS}/install-1": ((), (KEY,)),
    }
    assert decision.problems == ()


def test_the_second_pass_writes_nothing() -> None:
    snapshot = world(
        others=candidates(obj("apps/v1", "Deployment", "op", labels=MANAGED, owners=[owner()]))
    )
    decision = decide_adoption(snapshot)
    assert decision.writes
    assert decide_adoption(apply(snapshot, decision)).writes == ()


def test_the_patch_adds_and_removes_only_those_labels() -> None:
    write = LabelWrite(component("InstallPlan"), NS, "p", add=("a/x",), remove=("a/y",))
    assert write.patch() == {"metadata": {"labels": {"a/x": "", "a/y": None}}}


@pytest.mark.parametrize(
    ("kind", "api", "namespace", "labels", "owners", "adopted"),
    [
        # owned by uid, managed: labelled
        ("Deployment", "apps/v1", NS, MANAGED, [owner()], True),
        ("ServiceAccount", "v1", NS, MANAGED, [owner()], True),
        ("Role", RBAC, NS, MANAGED, [owner()], True),
        ("RoleBinding", RBAC, NS, MANAGED, [owner()], True),
        ("Service", "v1", NS, MANAGED, [owner()], True),
        ("ConfigMap", "v1", NS, MANAGED, [owner()], True),
        # cluster-scoped and cross-namespace objects by owner labels
        ("ClusterRole", RBAC, "", {**MANAGED, **owner_labels()}, None, True),
        ("ClusterRoleBinding", RBAC, "", {**MANAGED, **owner_labels()}, None, True),
        ("Role", RBAC, "target", {**MANAGED, **owner_labels()}, None, True),
        ("APIService", "apiregistration.k8s.io/v1", "", {**MANAGED, **owner_labels()}, None, True),
        # OLM's caches: kinds it keeps without olm.managed
        ("OperatorCondition", "operators.coreos.com/v2", NS, {}, [owner()], True),
        ("Secret", "v1", NS, {}, [owner()], True),
        # not olm.managed: OLM's cache never shows it
        ("ServiceAccount", "v1", NS, {}, [owner()], False),
        ("Deployment", "apps/v1", NS, {"olm.managed": "false"}, [owner()], False),
        # owned by something else: the OperatorCondition's Role, another CSV's Deployment
        ("Role", RBAC, NS, MANAGED, [{"kind": "OperatorCondition", "uid": "uid-oc"}], False),
        ("Deployment", "apps/v1", NS, MANAGED, [owner("other", "uid-other")], False),
        ("ClusterRole", RBAC, "", {**MANAGED, **owner_labels("other")}, None, False),
        ("Role", RBAC, "x", {**MANAGED, **owner_labels(namespace="x")}, None, False),
        # a CSV owner reference with the right name but another uid (an older CSV)
        ("Deployment", "apps/v1", NS, MANAGED, [owner(uid="uid-old")], False),
    ],
)
def test_what_the_installed_csv_owns_is_labelled(
    kind: str,
    api: str,
    namespace: str,
    labels: dict[str, str],
    owners: list[dict[str, Any]] | None,
    adopted: bool,
) -> None:
    target = obj(api, kind, "thing", namespace=namespace, labels=labels, owners=owners)
    decision = decide_adoption(world(others=candidates(target)))
    where = f"{namespace}/thing" if namespace else "thing"
    assert (f"{kind} {where}" in written(decision)) == adopted


def test_owned_crds_are_labelled_by_name_required_ones_are_not() -> None:
    owned = obj(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "memcacheds.cache.example.com",
        "",
        MANAGED,
    )
    other = obj(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", "others.example.com", "", MANAGED
    )
    kubectl = {**owned, "metadata": {**owned["metadata"], "labels": {}}}
    assert "CustomResourceDefinition memcacheds.cache.example.com" in written(
        decide_adoption(world(others=candidates(owned, other)))
    )
    assert "CustomResourceDefinition others.example.com" not in written(
        decide_adoption(world(others=candidates(owned, other)))
    )
    # a CRD applied with kubectl (no olm.managed) is not in OLM's cache
    assert not any(
        s.startswith("CustomResourceDefinition")
        for s in written(decide_adoption(world(others=candidates(kubectl))))
    )


def test_every_key_a_csv_carries_is_projected() -> None:
    other_key = "operators.coreos.com/hand-made"
    labelled = csv(labels={KEY: "", other_key: ""})
    dep = obj("apps/v1", "Deployment", "op", labels=MANAGED, owners=[owner()])
    decision = decide_adoption(world(subscriptions=[], csvs=[labelled], others=candidates(dep)))
    assert written(decision) == {f"Deployment {NS}/op": ((other_key, KEY), ())}


def test_a_csv_without_a_subscription_labels_nothing() -> None:
    dep = obj("apps/v1", "Deployment", "op", labels=MANAGED, owners=[owner()])
    assert decide_adoption(world(subscriptions=[], others=candidates(dep))).writes == ()


def test_a_subscription_without_a_package_is_skipped() -> None:
    sub = subscription(package="")
    assert decide_adoption(world(subscriptions=[sub], plans=[])).writes == ()


def test_a_missing_installed_csv_or_plan_is_skipped() -> None:
    sub = subscription(installed="gone.v1", plan="install-gone")
    decision = decide_adoption(world(subscriptions=[sub], plans=[plan("install-1")]))
    assert written(decision) == {f"Subscription {NS}/memcached": ((KEY,), ())}


def test_a_plan_another_subscription_of_the_package_points_at_keeps_the_label() -> None:
    first = subscription("a", plan="install-1")
    second = subscription("b", plan="install-2")
    plans = [plan("install-1", {KEY: ""}), plan("install-2", {KEY: ""})]
    decision = decide_adoption(world(subscriptions=[first, second], plans=plans))
    assert not any(remove for _, remove in written(decision).values())


def test_dependencies_in_one_plan_each_get_their_own_key() -> None:
    dash_key = f"operators.coreos.com/memcached-dashboard.{NS}"
    dash = subscription("dash", package="memcached-dashboard", installed="dash.v1")
    decision = decide_adoption(
        world(
            subscriptions=[dash, subscription()],
            csvs=[csv(), csv("dash.v1")],
            plans=[plan("install-2")],
        )
    )
    assert written(decision)[f"InstallPlan {NS}/install-2"] == ((dash_key, KEY), ())


@pytest.mark.parametrize(
    "package",
    ["mémcached", "a/b", "with space", "é" + "x" * 70],
)
def test_an_invalid_key_writes_nothing_and_says_why(package: str) -> None:
    decision = decide_adoption(world(subscriptions=[subscription(package=package)]))
    assert decision.writes == ()
    [problem] = decision.problems
    assert problem.subject == f"Subscription {NS}/memcached"
    assert "spec.name" in problem.message and "label key" in problem.message


def test_a_long_package_name_is_labelled_with_the_cut_key() -> None:
    package = "p" * 70
    decision = decide_adoption(world(subscriptions=[subscription(package=package)], plans=[]))
    [key] = {k for add, _ in written(decision).values() for k in add}
    assert key == "operators.coreos.com/" + "p" * 63
    assert decision.problems == ()
