"""The uninstall decision on plain dicts: what is deleted, what the garbage collector and
olm-py remove, what stays and why, and when a CRD may go."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.cleanup import CLEANUP_ANNOTATION, CLEANUP_OPERATORS_ANNOTATION, CleanupPolicy
from olm.uninstall.crds import Remaining, judge_crd, mark
from olm.uninstall.plan import Plan, Ref, Snapshot, candidate_crds, decide
from olm.uninstall.render import lines

NS = "team-a"
PKG = "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
CRD = "memcacheds.cache.example.com"
KEY = f"operators.coreos.com/{PKG}.{NS}"
ME = f"{PKG}.{NS}"


def meta(name: str, namespace: str = NS, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", **extra}


def sub(
    name: str = PKG,
    package: str = PKG,
    installed: str = OLD,
    cleanup: str | None = None,
    plan: str = "install-1",
) -> dict[str, Any]:
    annotations = {CLEANUP_ANNOTATION: cleanup} if cleanup is not None else {}
    return {
        "kind": "Subscription",
        "metadata": meta(name, annotations=annotations),
        "spec": {"name": package},
        "status": {
            "installedCSV": installed,
            "currentCSV": installed,
            "installPlanRef": {"name": plan},
        },
    }


def csv(
    name: str = OLD,
    namespace: str = NS,
    owns: tuple[str, ...] = (CRD,),
    requires: tuple[str, ...] = (),
    **extra: Any,
) -> dict[str, Any]:
    return {
        "kind": "ClusterServiceVersion",
        "metadata": meta(name, namespace, **extra),
        "spec": {
            "customresourcedefinitions": {
                "owned": [{"name": n} for n in owns],
                "required": [{"name": n} for n in requires],
            }
        },
    }


def copy_of(name: str, namespace: str) -> dict[str, Any]:
    return csv(name, namespace, labels={"olm.copiedFrom": NS})


def plan(name: str, *csvs: str, owners: tuple[str, ...] = (PKG,)) -> dict[str, Any]:
    return {
        "kind": "InstallPlan",
        "metadata": meta(
            name,
            ownerReferences=[
                {"kind": "Subscription", "name": o, "uid": f"uid-{NS}-{o}"} for o in owners
            ],
        ),
        "spec": {"clusterServiceVersionNames": list(csvs)},
    }


def crd(name: str = CRD, **annotations: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {"group": "cache.example.com", "names": {"kind": "Memcached"}},
    }


def owned(kind: str, name: str, owner_kind: str, owner: str, namespace: str = NS) -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": meta(
            name,
            namespace,
            ownerReferences=[
                {"kind": owner_kind, "name": owner, "uid": f"uid-{namespace}-{owner}"}
            ],
        ),
    }


def snapshot(**overrides: Any) -> Snapshot:
    base: dict[str, Any] = {
        "package": PKG,
        "namespace": NS,
        "subscriptions": [sub()],
        "csvs": [csv()],
        "install_plans": [plan("install-1", OLD)],
        "crds": [crd()],
        "cluster_csvs": [csv()],
    }
    base.update(overrides)
    return Snapshot(**base)


NONE_LEFT = {CRD: Remaining("Memcached")}
ONE_LEFT = {CRD: Remaining("Memcached", ("default/memcached-sample",))}


def verdict(plan_: Plan) -> Any:
    (only,) = plan_.crds
    return only


def test_deletes_the_subscription_csv_and_plan_and_keeps_the_crd_by_default() -> None:
    decided = decide(snapshot(), NONE_LEFT)
    assert decided.deletes == (
        Ref("Subscription", NS, PKG),
        Ref("ClusterServiceVersion", NS, OLD),
        Ref("InstallPlan", NS, "install-1"),
    )
    assert decided.policy is CleanupPolicy.KEEP
    assert not verdict(decided).delete
    assert "cleanup policy keep" in "\n".join(lines(decided))
    assert "--crds-when-unused" in lines(decided)[-1]


def test_crds_when_unused_deletes_an_unused_crd() -> None:
    decided = decide(snapshot(subscriptions=[sub(cleanup="crds-when-unused")]), NONE_LEFT)
    assert decided.policy is CleanupPolicy.CRDS_WHEN_UNUSED
    assert verdict(decided).delete and verdict(decided).patch is None


def test_a_remaining_custom_resource_blocks_and_is_named_and_the_crd_is_marked() -> None:
    decided = decide(snapshot(subscriptions=[sub(cleanup="crds-when-unused")]), ONE_LEFT)
    found = verdict(decided)
    assert not found.delete
    assert found.blockers == ("1 Memcached remains: default/memcached-sample",)
    assert found.patch == {
        "metadata": {
            "annotations": {
                CLEANUP_ANNOTATION: "crds-when-unused",
                CLEANUP_OPERATORS_ANNOTATION: ME,
            }
        }
    }
    text = "\n".join(lines(decided))
    assert f"{CRD}: 1 Memcached remains: default/memcached-sample" in text
    assert f"olm uninstall-operator {PKG} -n {NS}" in lines(decided)[-1]


def test_the_flag_overrides_the_annotation() -> None:
    decided = decide(
        snapshot(subscriptions=[sub(cleanup="keep")], flag=CleanupPolicy.CRDS_WHEN_UNUSED),
        NONE_LEFT,
    )
    assert verdict(decided).delete


def test_an_unknown_annotation_value_is_read_as_keep_and_said() -> None:
    decided = decide(snapshot(subscriptions=[sub(cleanup="delete-everything")]), NONE_LEFT)
    assert decided.policy is CleanupPolicy.KEEP and not verdict(decided).delete
    assert "delete-everything" in decided.notes[0]


@pytest.mark.parametrize(
    ("other", "blocker"),
    [
        (csv("other.v1", "team-b"), "owned by ClusterServiceVersion team-b/other.v1"),
        (
            csv("user.v1", "team-c", owns=(), requires=(CRD,)),
            "required by ClusterServiceVersion team-c/user.v1",
        ),
    ],
)
def test_another_installed_csv_that_owns_or_requires_it_blocks(
    other: dict[str, Any], blocker: str
) -> None:
    decided = decide(
        snapshot(subscriptions=[sub(cleanup="crds-when-unused")], cluster_csvs=[csv(), other]),
        NONE_LEFT,
    )
    assert verdict(decided).blockers == (blocker,)


def test_copies_and_csvs_being_deleted_do_not_block() -> None:
    going = csv("old.v1", "team-b", deletionTimestamp="2025-01-01T00:00:00Z")
    decided = decide(
        snapshot(
            subscriptions=[sub(cleanup="crds-when-unused")],
            cluster_csvs=[csv(), copy_of(OLD, "team-z"), going],
        ),
        NONE_LEFT,
    )
    assert verdict(decided).delete


@pytest.mark.parametrize(
    ("remaining", "cluster_csvs", "expected"),
    [
        (
            {CRD: Remaining("Memcached", error="403 forbidden")},
            [csv()],
            "cannot tell whether custom",
        ),
        ({}, [csv()], "they were not listed"),
        (NONE_LEFT, None, "cannot tell whether another operator needs it"),
    ],
)
def test_what_could_not_be_read_blocks(
    remaining: dict[str, Remaining], cluster_csvs: Any, expected: str
) -> None:
    decided = decide(
        snapshot(subscriptions=[sub(cleanup="crds-when-unused")], cluster_csvs=cluster_csvs),
        remaining,
    )
    assert not verdict(decided).delete
    assert expected in verdict(decided).blockers[0]


def test_many_custom_resources_are_counted_past_ten() -> None:
    keys = tuple(f"ns/m{i:02}" for i in range(12))
    found = judge_crd(
        CRD, crd(), CleanupPolicy.CRDS_WHEN_UNUSED, Remaining("Memcached", keys), [], "", []
    )
    assert found.blockers[0].startswith("12 Memcached remain: ns/m00, ")
    assert found.blockers[0].endswith("ns/m09 and 2 more")


def test_a_second_run_finds_the_crd_by_its_mark_and_deletes_it_once_unused() -> None:
    marked = crd(**{CLEANUP_ANNOTATION: "crds-when-unused", CLEANUP_OPERATORS_ANNOTATION: ME})
    later = snapshot(subscriptions=[], csvs=[], install_plans=[], crds=[marked], cluster_csvs=[])
    assert candidate_crds(later) == [CRD]
    decided = decide(later, NONE_LEFT)
    assert decided.deletes == ()
    assert decided.policy is CleanupPolicy.CRDS_WHEN_UNUSED
    assert verdict(decided).delete
    still = decide(later, ONE_LEFT)
    assert not verdict(still).delete and verdict(still).patch is None  # already says so


def test_a_second_run_after_keep_finds_the_crd_by_olms_component_label() -> None:
    labelled = crd()
    labelled["metadata"]["labels"] = {KEY: ""}
    later = snapshot(subscriptions=[], csvs=[], install_plans=[], crds=[labelled], cluster_csvs=[])
    assert verdict(decide(later, NONE_LEFT)).policy is CleanupPolicy.KEEP
    forced = decide(
        Snapshot(**{**later.__dict__, "flag": CleanupPolicy.CRDS_WHEN_UNUSED}), NONE_LEFT
    )
    assert verdict(forced).delete


def test_pending_finds_every_marked_crd_of_any_package() -> None:
    marked = crd(**{CLEANUP_ANNOTATION: "crds-when-unused", CLEANUP_OPERATORS_ANNOTATION: "x.y"})
    pending = Snapshot(
        "",
        "",
        crds=[marked, crd("others.example.com")],
        cluster_csvs=[],
        flag=CleanupPolicy.CRDS_WHEN_UNUSED,
    )
    assert candidate_crds(pending) == [CRD]
    assert verdict(decide(pending, NONE_LEFT)).delete


def test_keep_forgets_a_cleanup_an_earlier_uninstall_left_waiting() -> None:
    marked = crd(
        **{CLEANUP_ANNOTATION: "crds-when-unused", CLEANUP_OPERATORS_ANNOTATION: f"a.b,{ME}"}
    )
    decided = decide(snapshot(crds=[marked]), NONE_LEFT)
    assert verdict(decided).patch == {
        "metadata": {"annotations": {CLEANUP_OPERATORS_ANNOTATION: "a.b"}}
    }
    alone = crd(**{CLEANUP_ANNOTATION: "crds-when-unused", CLEANUP_OPERATORS_ANNOTATION: ME})
    assert verdict(decide(snapshot(crds=[alone]), NONE_LEFT)).patch == {
        "metadata": {"annotations": {CLEANUP_OPERATORS_ANNOTATION: None, CLEANUP_ANNOTATION: None}}
    }


def test_marks_merge_operators_sorted() -> None:
    marked = crd(**{CLEANUP_ANNOTATION: "crds-when-unused", CLEANUP_OPERATORS_ANNOTATION: "z.q"})
    assert mark(marked, ME) == {
        "metadata": {
            "annotations": {
                CLEANUP_ANNOTATION: "crds-when-unused",
                CLEANUP_OPERATORS_ANNOTATION: f"{ME},z.q",
            }
        }
    }


def test_a_crd_already_gone_or_going_is_said_not_deleted() -> None:
    going = crd()
    going["metadata"]["deletionTimestamp"] = "2025-01-01T00:00:00Z"
    for crds in ([], [going]):
        decided = decide(snapshot(subscriptions=[sub(cleanup="crds-when-unused")], crds=crds), {})
        assert verdict(decided).gone and not verdict(decided).delete
        assert not decided.blocked


def test_other_packages_are_untouched() -> None:
    other_sub = sub("redis", package="redis", installed="redis.v1", plan="install-2")
    decided = decide(
        snapshot(
            subscriptions=[sub(), other_sub],
            csvs=[csv(), csv("redis.v1", owns=("redis.example.com",))],
            install_plans=[
                plan("install-1", OLD, owners=(PKG, "redis")),
                plan("install-2", "redis.v1", owners=(PKG, "redis")),
                plan("install-3", OLD, "redis.v1", owners=(PKG, "redis")),
            ],
        ),
        NONE_LEFT,
    )
    assert decided.deletes == (
        Ref("Subscription", NS, PKG),
        Ref("ClusterServiceVersion", NS, OLD),
        Ref("InstallPlan", NS, "install-1"),
    )
    left = {left.ref.name: left.why for left in decided.left}
    assert left["install-2"] == "Subscription redis points at it"
    assert "also installs redis.v1" in left["install-3"]
    assert [v.name for v in decided.crds] == [CRD]


def test_copies_are_not_deleted_as_the_packages_csv() -> None:
    decided = decide(snapshot(csvs=[csv(), copy_of("x.v1", NS)]), NONE_LEFT)
    assert Ref("ClusterServiceVersion", NS, "x.v1") not in decided.deletes


def test_a_csv_without_subscription_is_found_by_the_component_label() -> None:
    labelled = csv(labels={KEY: ""})
    decided = decide(snapshot(subscriptions=[], csvs=[labelled, csv("unrelated.v1")]), NONE_LEFT)
    assert decided.deletes == (
        Ref("ClusterServiceVersion", NS, OLD),
        Ref("InstallPlan", NS, "install-1"),
    )


def test_what_the_garbage_collector_and_olm_py_remove_is_reported_not_deleted() -> None:
    condition = owned("OperatorCondition", OLD, "ClusterServiceVersion", OLD)
    decided = decide(
        snapshot(
            dependents=[
                owned("Deployment", "memcached-operator", "ClusterServiceVersion", OLD),
                condition,
                owned("Role", OLD, "OperatorCondition", OLD),
                owned("ServiceAccount", "shared", "ClusterServiceVersion", "someone-else.v1"),
            ],
            cluster_csvs=[csv(), copy_of(OLD, "team-z")],
            label_owned={OLD: [Ref("ClusterRole", "", "memcached-operator.v0.0.1-abc")]},
        ),
        NONE_LEFT,
    )
    removed = {(r.ref.kind, r.ref.namespace, r.ref.name): r.by for r in decided.removed}
    assert removed == {
        ("Deployment", NS, "memcached-operator"): "garbage collector",
        ("OperatorCondition", NS, OLD): "garbage collector",
        ("Role", NS, OLD): "garbage collector",
        ("ClusterServiceVersion", "team-z", OLD): "olm-py",
        ("ClusterRole", "", "memcached-operator.v0.0.1-abc"): "olm-py",
    }
    assert not any("Deployment" in str(ref) for ref in decided.deletes)


def test_nothing_found_is_said_and_deletes_nothing() -> None:
    decided = decide(
        snapshot(subscriptions=[], csvs=[], install_plans=[], cluster_csvs=[]), NONE_LEFT
    )
    assert not decided.found and decided.deletes == () and decided.crds == ()
    assert lines(decided)[-1].startswith("nothing to do")
    summary = {"metadata": {"name": ME}}
    left = lines(decide(snapshot(subscriptions=[], csvs=[], operator=summary), NONE_LEFT))[-1]
    assert left.startswith(f"left      Operator {ME}: ") and f"kubectl delete operator {ME}" in left


def test_a_dry_run_says_would() -> None:
    decided = decide(snapshot(subscriptions=[sub(cleanup="crds-when-unused")]), NONE_LEFT)
    text = lines(decided, dry_run=True)
    assert all(not line.startswith("deleted") for line in text)
    assert f"would delete CustomResourceDefinition {CRD}: unused" in text


def test_the_same_input_gives_the_same_plan() -> None:
    assert decide(snapshot(), ONE_LEFT) == decide(snapshot(), ONE_LEFT)
