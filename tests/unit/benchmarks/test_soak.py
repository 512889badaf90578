"""The soak's judges (benchmarks/soak/converge.py, invariants.py) on plain data: each sees the
damage it is there to catch, and nothing in a namespace that went as the user asked."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.soak import converge, invariants, report
from benchmarks.soak.actions import V1, choices
from benchmarks.soak.converge import Desired, Touch
from benchmarks.soak.sampling import Samples, rates, request_total
from benchmarks.watching import Seen

NS = "soak-000"
HEAD = "memcached-operator.v0.0.2"
HEADS = {"alpha": HEAD, "stable": HEAD}
VERSIONS = itertools.count(1)
ROOT = Path(__file__).resolve().parents[3]


def obj(kind: str, name: str, uid: str = "u1", **fields: Any) -> dict[str, Any]:
    metadata = {"name": name, "namespace": NS, "uid": uid, "resourceVersion": str(next(VERSIONS))}
    metadata.update(fields.pop("metadata", {}))
    return {"kind": kind, "metadata": metadata, **fields}


def seen(at: float, kind: str, body: dict[str, Any], event: str = "MODIFIED") -> Seen:
    return Seen(at, kind, event, body)


def group(target: str = NS) -> dict[str, Any]:
    return obj("OperatorGroup", "og", status={"namespaces": [target]})


def csv(name: str = HEAD, phase: str = "Succeeded", **fields: Any) -> dict[str, Any]:
    spec = {
        "install": {
            "spec": {
                "deployments": [
                    {
                        "name": "memcached-operator",
                        "spec": {
                            "template": {"spec": {"serviceAccountName": "memcached-operator"}}
                        },
                    }
                ]
            }
        }
    }
    return obj("ClusterServiceVersion", name, spec=spec, status={"phase": phase}, **fields)


def subscription(state: str = "AtLatestKnown", installed: str = HEAD, plan: str = "") -> Any:
    status: dict[str, Any] = {"state": state, "installedCSV": installed, "currentCSV": installed}
    if plan:
        status["installPlanRef"] = {"name": plan}
    return obj("Subscription", "memcached", status=status)


def operator(owner: str = HEAD, env: dict[str, str] | None = None) -> dict[str, Any]:
    container = {
        "name": "manager",
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
    }
    return obj(
        "Deployment",
        "memcached-operator",
        metadata={"labels": {"olm.owner": owner}},
        spec={"template": {"spec": {"containers": [container]}}},
    )


def installed(**extra: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    found = {
        ("operatorgroup", "og"): group(),
        ("csv", HEAD): csv(),
        ("subscription", "memcached"): subscription(),
        ("deployment", "memcached-operator"): operator(),
    }
    found.update({tuple(k.split("/")): v for k, v in extra.items()})  # type: ignore[misc]
    return found


SUBSCRIBED = Desired(mode="subscription")


# ----- converged ----------------------------------------------------------------------------


def test_a_subscription_at_the_head_is_converged() -> None:
    assert converge.missing(SUBSCRIBED, installed(), HEADS, NS) == []


def test_a_subscription_behind_a_new_head_is_not() -> None:
    newer = {"alpha": "memcached-operator.v0.0.2-soak.1", "stable": HEAD}
    assert converge.missing(SUBSCRIBED, installed(), newer, NS)
    stable = Desired(mode="subscription", channel="stable")
    assert converge.missing(stable, installed(), newer, NS) == []


def test_config_must_reach_the_operator_deployment() -> None:
    asked = Desired(mode="subscription", config="7")
    assert converge.missing(asked, installed(), HEADS, NS)
    applied = installed(**{"deployment/memcached-operator": operator(env={"SOAK_CONFIG": "7"})})
    assert converge.missing(asked, applied, HEADS, NS) == []


def test_an_instance_needs_its_deployment_and_a_deleted_one_must_go() -> None:
    with_instance = Desired(mode="subscription", operand=True)
    objects = installed(**{"memcached/cache-a": obj("Memcached", "cache-a")})
    assert converge.missing(with_instance, objects, HEADS, NS) == ["no operand Deployment cache-a"]
    objects[("deployment", "cache-a")] = obj("Deployment", "cache-a")
    assert converge.missing(with_instance, objects, HEADS, NS) == []
    assert converge.missing(SUBSCRIBED, objects, HEADS, NS)


def test_manual_waiting_for_the_user_is_a_resting_state_until_approved() -> None:
    manual = Desired(mode="subscription", approval="Manual")
    objects = {
        ("operatorgroup", "og"): group(),
        ("subscription", "memcached"): subscription("UpgradePending", "", plan="install-1"),
        ("installplan", "install-1"): obj(
            "InstallPlan", "install-1", status={"phase": "RequiresApproval"}
        ),
    }
    assert converge.missing(manual, objects, HEADS, NS) == []
    approved = Desired(mode="subscription", approval="Manual", approved=frozenset({"install-1"}))
    assert converge.missing(approved, objects, HEADS, NS)


def test_uninstalled_means_nothing_left_and_a_retarget_shows_in_the_group() -> None:
    assert converge.missing(Desired(), installed(), HEADS, NS)
    assert converge.missing(Desired(), {("operatorgroup", "og"): group()}, HEADS, NS) == []
    peer = Desired(target="peer")
    assert converge.missing(peer, {("operatorgroup", "og"): group()}, HEADS, NS)
    moved = {("operatorgroup", "og"): group(f"{NS}-t")}
    assert converge.missing(peer, moved, HEADS, NS) == []


def test_copied_csvs_do_not_count() -> None:
    copied = csv("other.v1", metadata={"labels": {"olm.copiedFrom": "elsewhere"}})
    objects = {("operatorgroup", "og"): group(), ("csv", "other.v1"): copied}
    assert converge.missing(Desired(), objects, HEADS, NS) == []


def test_kubectl_mode_wants_the_last_applied_csv_to_own_the_deployment() -> None:
    asked = Desired(mode="kubectl", csv=V1)
    objects = {
        ("operatorgroup", "og"): group(),
        ("csv", V1): csv(V1),
        ("deployment", "memcached-operator"): operator(V1),
    }
    assert converge.missing(asked, objects, HEADS, NS) == []
    objects[("csv", HEAD)] = csv(HEAD, phase="Pending")
    assert converge.missing(asked, objects, HEADS, NS)


def test_episodes_time_convergence_and_flag_only_undisturbed_misses() -> None:
    subscribed = Desired(mode="subscription")
    touches = [Touch(0.0, NS, "start", Desired()), Touch(10.0, NS, "action:subscribe", subscribed)]
    history = [seen(1.0, "operatorgroup", group(), "ADDED")]
    history += [seen(20.0 + i, kind, o) for i, ((kind, _), o) in enumerate(installed().items())]
    found = converge.episodes(NS, history, touches, [(0.0, HEADS)], end=100.0)
    assert [(e.cause, e.seconds) for e in found] == [("start", 1.0), ("action:subscribe", 12.0)]
    assert not any(e.violation for e in found)
    late = converge.episodes(NS, history[:1], touches, [(0.0, HEADS)], end=100.0)
    assert late[1].violation and late[1].missing
    cut = converge.episodes(NS, history[:1], touches, [(0.0, HEADS)], end=30.0)
    assert cut[1].superseded and not cut[1].violation


def test_nothing_is_owed_while_a_fault_lasts() -> None:
    touches = [
        Touch(0.0, NS, "action:subscribe", SUBSCRIBED),
        Touch(30.0, NS, "fault-start:restart-apiserver", SUBSCRIBED, judged=False),
        Touch(100.0, NS, "fault:restart-apiserver", SUBSCRIBED),
    ]
    history = [seen(110.0 + i, k, o) for i, ((k, _), o) in enumerate(installed().items())]
    found = converge.episodes(NS, history, touches, [(0.0, HEADS)], end=200.0)
    assert [(e.cause, e.seconds, e.violation) for e in found] == [
        ("action:subscribe", None, False),
        ("fault:restart-apiserver", 12.0, False),
    ]


def test_a_deleted_namespace_is_not_judged() -> None:
    touches = [Touch(0.0, NS, "action:delete-namespace", Desired(mode="deleted"))]
    assert converge.episodes(NS, [], touches, [(0.0, HEADS)], end=500.0) == []


# ----- invariants ---------------------------------------------------------------------------


def test_operand_deleted_or_recreated_without_the_user_is_a_violation() -> None:
    first = obj("Memcached", "cache-a", uid="a")
    again = obj("Memcached", "cache-a", uid="b")
    history = [seen(1.0, "memcached", first, "ADDED"), seen(50.0, "memcached", again, "ADDED")]
    assert [v.invariant for v in invariants.operand_identity(NS, history, [])] == [
        "operand-identity"
    ]
    assert invariants.operand_identity(NS, history, [30.0]) == []
    deleted = [seen(1.0, "deployment", obj("Deployment", "cache-a"), "ADDED")]
    deleted.append(seen(9.0, "deployment", obj("Deployment", "cache-a"), "DELETED"))
    assert invariants.operand_identity(NS, deleted, [])
    # The user's deletion is recorded when kubectl returns: up to SETTLE s after the event.
    assert invariants.operand_identity(NS, deleted, [11.0]) == []


def test_a_live_csv_losing_its_deployment_is_a_violation_not_after_its_own_deletion() -> None:
    live = csv()
    deployment = obj("Deployment", "memcached-operator")
    history = [
        seen(1.0, "csv", live, "ADDED"),
        seen(2.0, "deployment", deployment, "ADDED"),
        seen(20.0, "deployment", deployment, "DELETED"),
    ]
    assert [v.invariant for v in invariants.live_csv_objects(NS, history, [])] == [
        "live-csv-objects"
    ]
    uninstalled = [*history[:2], seen(19.5, "csv", live, "DELETED"), history[2]]
    assert invariants.live_csv_objects(NS, uninstalled, []) == []
    # The CSV's deletion may arrive a moment after the Deployment's (another watch stream).
    lagging = [*history, seen(21.0, "csv", live, "DELETED")]
    assert invariants.live_csv_objects(NS, lagging, []) == []
    assert invariants.live_csv_objects(NS, history, [(18.0, 60.0)]) == []


def test_roles_count_when_the_csv_owns_them() -> None:
    owned = obj(
        "Role",
        "r1",
        metadata={"ownerReferences": [{"kind": "ClusterServiceVersion", "name": HEAD}]},
    )
    other = obj("Role", "r2")
    history = [
        seen(1.0, "csv", csv(), "ADDED"),
        seen(5.0, "role", owned, "DELETED"),
        seen(5.0, "role", other, "DELETED"),
    ]
    found = invariants.live_csv_objects(NS, history, [])
    assert [v.detail.split()[0] for v in found] == ["role/r1"]


def test_two_installplans_for_one_subscription_and_csv_set() -> None:
    def plan(name: str, uid: str, owner: str) -> dict[str, Any]:
        return obj(
            "InstallPlan",
            name,
            uid=uid,
            metadata={"ownerReferences": [{"kind": "Subscription", "uid": owner}]},
            spec={"clusterServiceVersionNames": [HEAD]},
        )

    history = [seen(1.0, "installplan", plan("p1", "1", "s1"), "ADDED")]
    assert invariants.installplans(NS, history) == []
    resubscribed = [*history, seen(9.0, "installplan", plan("p2", "2", "s2"), "ADDED")]
    assert invariants.installplans(NS, resubscribed) == []
    duplicate = [*history, seen(9.0, "installplan", plan("p2", "2", "s1"), "ADDED")]
    assert len(invariants.installplans(NS, duplicate)) == 1


def test_tracebacks_are_found_with_their_last_lines() -> None:
    log = "ok\nTraceback (most recent call last):\n  File x\n    boom()\nValueError: no\nok\n"
    assert invariants.tracebacks(log) == [
        "Traceback (most recent call last):\n  File x\n    boom()\nValueError: no"
    ]
    assert invariants.tracebacks("all fine\n") == []


def test_slope_and_percentiles() -> None:
    assert invariants.slope([(0.0, 100.0), (1800.0, 101.0), (3600.0, 102.0)]) == 2.0
    assert invariants.slope([(0.0, 1.0)]) is None
    assert invariants.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert invariants.percentile(list(range(1, 101)), 0.99) == 99
    assert invariants.percentile([], 0.5) is None


def test_the_slope_common_to_many_lives_ignores_their_levels() -> None:
    """Replicas restarted every few minutes each start at their own RSS: the leak rate is the
    slope within each life, not the line through all of them."""
    flat_but_higher_each_life = [
        [(0.0, 100.0), (60.0, 100.0), (120.0, 100.0)],
        [(200.0, 140.0), (260.0, 140.0), (320.0, 140.0)],
    ]
    assert invariants.within_slope(flat_but_higher_each_life) == 0.0
    assert invariants.slope([p for life in flat_but_higher_each_life for p in life]) > 0
    leaking = [
        [(0.0, 100.0), (1800.0, 101.0), (3600.0, 102.0)],
        [(10.0, 50.0), (3610.0, 52.0), (1810.0, 51.0)],
    ]
    assert invariants.within_slope(leaking) == 2.0
    assert invariants.within_slope([[(0.0, 1.0)]]) is None


def test_request_rates_skip_a_counter_reset() -> None:
    text = 'apiserver_request_total{verb="GET"} 10\napiserver_request_total{verb="PUT"} 5\n'
    assert request_total(text + "# other 3\n") == 15.0
    assert rates([(0.0, 10.0), (10.0, 30.0), (20.0, 5.0), (30.0, 25.0)]) == [
        (10.0, 2.0),
        (30.0, 2.0),
    ]


# ----- the user and the report --------------------------------------------------------------


def test_choices_follow_what_was_asked() -> None:
    assert choices(Desired(mode="deleted")) == []
    assert "subscribe-manual" in choices(Desired())
    assert "approve" not in choices(SUBSCRIBED)
    assert "approve" in choices(Desired(mode="subscription", approval="Manual"))
    assert "apply-csv" in choices(Desired(mode="kubectl", csv=V1))
    assert "apply-csv" not in choices(Desired(mode="kubectl", csv=HEAD))


class FakeSoak:
    def __init__(self) -> None:
        self.origin = 100.0
        self.names = [NS]
        self.actions = [{"at": 1.0, "took": 0.5, "namespace": NS, "action": "config", "ok": True}]
        self.faults: list[Any] = []


def test_summary_and_plot(tmp_path: Path) -> None:
    episode = converge.Episode(NS, "action:config", 101.0, 200.0, seconds=3.0)
    samples = Samples(
        processes=[(5.0, 0, 42, 100.0, 30), (10.0, 0, 42, 101.0, 30), (15.0, 0, 42, 100.5, 31)],
        requests=[(5.0, 100.0), (10.0, 150.0)],
    )
    result = report.summary(
        FakeSoak(), [episode], [], samples, 160.0, seed=1, minutes=1, replicas=1, log=tmp_path
    )
    assert result["convergence"]["p50_seconds"] == 3.0
    assert result["olm_run"]["longest_life"]["pid"] == 42
    assert result["apiserver_requests_per_second"]["max"] == 10.0
    report.plot(tmp_path / "soak.svg", result)
    assert (tmp_path / "soak.svg").read_text().startswith("<svg")


def test_help_has_no_side_effects(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.soak", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m benchmarks.soak")
    assert list(tmp_path.iterdir()) == []


def test_leader_terms_come_from_the_olm_run_log_and_only_leading_samples_count() -> None:
    log = "\n".join(
        [
            "2026-11-27 20:00:00,000 INFO olm.leader: waiting to lead: Lease olm/olm-py as vm_7",
            "2026-11-27 20:00:00,000 INFO olm.leader: waiting to lead: Lease olm/olm-py as vm_8",
            "2026-11-27 20:01:40,000 INFO olm.leader: became leader: Lease olm/olm-py held by vm_7",
        ]
    )
    samples = Samples(
        processes=[
            *(
                (10.0 + t, 0, 7, 100.0 if t < 100 else 120.0 + (t - 100) / 3600, 40)
                for t in range(0, 400, 5)
            ),
            *((10.0 + t, 1, 8, 90.0 + t, 30) for t in range(0, 400, 5)),  # a standby: never counted
        ]
    )
    terms = report.leader_terms(log, samples)
    assert terms == {7: 110.0}
    leading = report.leading_slopes(samples, terms)
    assert leading["terms"] == 1 and leading["rss_mib_per_hour"] == 1.0
