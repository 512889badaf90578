"""The fault trials' judge (benchmarks/fault_stories.py, benchmarks/watching.py) on plain dicts:
it must see each kind of damage the restart tests and `make bench` are there to catch."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from benchmarks.fault_stories import KINDS, NEW, OLD, STORIES, Story, TrialResult, _judge
from benchmarks.faults import meets_goals, summarize
from benchmarks.watching import Kube, Observer, differences, writers

KUBECTL, AUTOMATIC, MANUAL = STORIES
NS = "ns"
VERSIONS = itertools.count(1)


class FakeKube(Kube):
    """`kubectl get` answering with `items` (what the cluster really holds)."""

    def __init__(self, items: list[dict[str, Any]] | None = None) -> None:
        super().__init__(Path("/nonexistent/kubectl"), {})
        self.items = items or []

    def get_json(self, *args: str) -> Any:
        return {"items": self.items}


def obj(kind: str, name: str, uid: str = "u1", **fields: Any) -> dict[str, Any]:
    """An object with a resourceVersion of its own, as every write gets."""
    metadata = {"name": name, "namespace": NS, "uid": uid, "resourceVersion": str(next(VERSIONS))}
    metadata.update(fields.pop("metadata", {}))
    return {"kind": kind, "metadata": metadata, **fields}


def csv(name: str, phase: str = "Succeeded", reason: str = "InstallSucceeded") -> dict[str, Any]:
    return obj("ClusterServiceVersion", name, status={"phase": phase, "reason": reason})


def owned(kind: str, name: str, owner: str = NEW, **fields: Any) -> dict[str, Any]:
    return obj(kind, name, metadata={"labels": {"olm.owner": owner}}, **fields)


def plan(name: str, csvs: list[str], phase: str | None = "Complete") -> dict[str, Any]:
    return obj(
        "InstallPlan",
        name,
        spec={"clusterServiceVersionNames": csvs},
        status={"phase": phase} if phase else {},
    )


def subscription(state: str = "AtLatestKnown", installed: str = NEW) -> dict[str, Any]:
    return obj(
        "Subscription",
        "memcached",
        status={
            "state": state,
            "installedCSV": installed,
            "currentCSV": NEW,
            "installPlanRef": {"name": "install-b"},
        },
    )


def account(owners: list[str]) -> dict[str, Any]:
    return obj(
        "ServiceAccount",
        "memcached-operator",
        metadata={"ownerReferences": [{"name": o} for o in owners]},
    )


def on_condition(kind: str, name: str) -> dict[str, Any]:
    """The Role or RoleBinding OLM makes on the OperatorCondition `name`."""
    return obj(
        kind, name, metadata={"ownerReferences": [{"kind": "OperatorCondition", "name": name}]}
    )


def converged(story: Story) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, event type, object) that make `story`'s namespace look finished and tidy."""
    events = [
        ("csv", "ADDED", csv(NEW)),
        ("deployment", "ADDED", owned("Deployment", "memcached-operator")),
        ("deployment", "ADDED", obj("Deployment", "cache-a")),
        ("memcached", "ADDED", obj("Memcached", "cache-a")),
        ("serviceaccount", "ADDED", obj("ServiceAccount", "default")),
        ("operatorcondition", "ADDED", obj("OperatorCondition", NEW)),
        ("role", "ADDED", on_condition("Role", NEW)),
        ("rolebinding", "ADDED", on_condition("RoleBinding", NEW)),
    ]
    if story.subscribes:
        return [
            *events,
            ("subscription", "ADDED", subscription()),
            ("installplan", "ADDED", plan("install-a", [OLD])),
            ("installplan", "ADDED", plan("install-b", [NEW])),
            ("serviceaccount", "ADDED", account([NEW])),
            ("role", "ADDED", owned("Role", "memcached-operator.v0.0.2-x")),
            ("rolebinding", "ADDED", owned("RoleBinding", "memcached-operator.v0.0.2-x")),
        ]
    return [
        *events,
        ("serviceaccount", "ADDED", account([])),
        ("role", "ADDED", obj("Role", "memcached-operator")),
        ("rolebinding", "ADDED", obj("RoleBinding", "memcached-operator")),
    ]


def observe(events: list[tuple[str, str, dict[str, Any]]]) -> Observer:
    observer = Observer(FakeKube(), KINDS)  # not started: fed by hand
    for kind, event_type, item in events:
        observer._record(kind, event_type, item)
    return observer


def judged(story: Story, events: list[tuple[str, str, dict[str, Any]]]) -> TrialResult:
    observer = observe(converged(story) + events)
    observer.kube = FakeKube([o for kind in KINDS for o in observer.items(kind, NS)])
    result = TrialResult(story.name, NS, 1.0, True, 1.0)
    _judge(observer.kube, observer, story, NS, result, settle=0.0)
    return result


@pytest.mark.parametrize("story", STORIES, ids=lambda s: s.name)
def test_a_finished_tidy_namespace_passes(story: Story) -> None:
    observer = observe(converged(story))
    assert story.missing(observer, NS) == []
    assert judged(story, []).problems == []


@pytest.mark.parametrize(
    ("story", "event", "expected"),
    [
        (KUBECTL, ("csv", "MODIFIED", csv(NEW, "Failed", "ComponentUnhealthy")), "is Failed"),
        (KUBECTL, ("csv", "ADDED", csv(OLD, "Replacing", "BeingReplaced")), "still there"),
        (
            KUBECTL,
            ("deployment", "MODIFIED", owned("Deployment", "memcached-operator", OLD)),
            "owned by",
        ),
        (AUTOMATIC, ("subscription", "MODIFIED", subscription("", "")), "Subscription state"),
        (
            MANUAL,
            ("subscription", "MODIFIED", subscription("UpgradePending", OLD)),
            "Subscription state",
        ),
        (AUTOMATIC, ("installplan", "MODIFIED", plan("install-b", [NEW], None)), "InstallPlan"),
    ],
)
def test_the_end_state_is_missing(
    story: Story, event: tuple[str, str, dict[str, Any]], expected: str
) -> None:
    observer = observe([*converged(story), event])
    missing = story.missing(observer, NS)
    assert any(expected in m for m in missing), missing


@pytest.mark.parametrize(
    ("story", "events", "expected"),
    [
        (
            AUTOMATIC,
            [("installplan", "ADDED", plan("install-c", [NEW]))],
            '"installplans for memcached-operator.v0.0.2": ["install-b", "install-c"]',
        ),
        (  # a duplicate plan that came and went still counts
            AUTOMATIC,
            [
                ("installplan", "ADDED", plan("install-c", [OLD], None)),
                ("installplan", "DELETED", plan("install-c", [OLD], None)),
            ],
            "installplans for memcached-operator.v0.0.1",
        ),
        (
            AUTOMATIC,
            [("installplan", "ADDED", plan("install-c", ["other.v1"], None))],
            "empty phase: ['install-c']",
        ),
        (AUTOMATIC, [("role", "ADDED", owned("Role", "memcached-operator.v0.0.1-x", OLD))], "role"),
        (
            AUTOMATIC,
            [("rolebinding", "ADDED", owned("RoleBinding", "memcached-operator.v0.0.2-y"))],
            "rolebinding",
        ),
        (KUBECTL, [("role", "ADDED", owned("Role", "extra"))], '"role": ["extra"]'),
        # the replaced CSV's OperatorCondition's Role, left behind
        (KUBECTL, [("role", "ADDED", on_condition("Role", OLD))], OLD),
        (AUTOMATIC, [("rolebinding", "ADDED", on_condition("RoleBinding", OLD))], OLD),
        (KUBECTL, [("deployment", "ADDED", obj("Deployment", "memcached-operator-2"))], "deploy"),
        (KUBECTL, [("serviceaccount", "ADDED", obj("ServiceAccount", "sa-2"))], "sa-2"),
        (KUBECTL, [("operatorcondition", "ADDED", obj("OperatorCondition", OLD))], OLD),
        (
            AUTOMATIC,
            [("serviceaccount", "DELETED", account([NEW]))],
            "ServiceAccount memcached-operator is missing",
        ),
        (AUTOMATIC, [("serviceaccount", "MODIFIED", account([OLD]))], "is owned by"),
        (KUBECTL, [("deployment", "ADDED", obj("Deployment", "cache-a", uid="u2"))], "operand"),
        (MANUAL, [("memcached", "DELETED", obj("Memcached", "cache-a"))], "operand"),
        (
            AUTOMATIC,
            [("deployment", "MODIFIED", owned("Deployment", "memcached-operator", uid="u9"))],
            "Deployments recreated",
        ),
    ],
)
def test_damage_is_reported(
    story: Story, events: list[tuple[str, str, dict[str, Any]]], expected: str
) -> None:
    result = judged(story, events)
    assert any(expected in p for p in result.problems), result.problems


def test_a_relist_is_not_a_new_state() -> None:
    listed = csv(NEW)
    observer = observe([("csv", "ADDED", listed), ("csv", "ADDED", listed)])
    assert len(observer.history(NS)) == 1
    observer._record("csv", "MODIFIED", csv(NEW))
    assert len(observer.history(NS)) == 2


def test_what_a_restarted_watch_missed_is_not_reported_as_a_leftover() -> None:
    events = [*converged(KUBECTL), ("operatorcondition", "ADDED", obj("OperatorCondition", OLD))]
    observer = observe(events)
    observer.kube = FakeKube(
        [o for kind in KINDS for o in observer.items(kind, NS) if o["metadata"]["name"] != OLD]
    )
    result = TrialResult(KUBECTL.name, NS, 1.0, True, 1.0)
    _judge(observer.kube, observer, KUBECTL, NS, result, settle=0.0)
    assert result.problems == []
    assert observer.get("operatorcondition", NS, OLD) is None


def test_differences_and_writers_explain_a_write() -> None:
    before = {
        "metadata": {
            "resourceVersion": "1",
            "managedFields": [
                {"manager": "olm-py", "operation": "Apply", "time": "t1"},
                {"manager": "olm-py", "operation": "Update", "subresource": "status", "time": "t1"},
            ],
        },
        "status": {
            "phase": "Succeeded",
            "lastUpdateTime": "t1",
            "conditions": [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}],
        },
    }
    after = {
        "metadata": {
            "resourceVersion": "2",
            "managedFields": [
                {"manager": "olm-py", "operation": "Apply", "time": "t1"},
                {"manager": "olm-py", "operation": "Update", "subresource": "status", "time": "t2"},
            ],
        },
        "status": {
            "phase": "Failed",
            "lastUpdateTime": "t2",
            "conditions": [{"type": "B", "status": "False"}],
        },
    }
    assert differences(before, after) == [
        'status.conditions[A]: {"type": "A", "status": "True"} -> absent',
        'status.conditions[B].status: "True" -> "False"',
        'status.phase: "Succeeded" -> "Failed"',
    ]
    assert writers(before, after) == ["olm-py (Update status)"]


def trial(converged: bool, seconds: float | None, **fields: Any) -> TrialResult:
    return TrialResult("s", NS, 1.0, converged, seconds, **fields)


@pytest.mark.parametrize(
    ("trials", "goals_met"),
    [
        ([trial(True, 1.0), trial(True, 2.0), trial(True, 9.0)], True),
        ([trial(True, 1.0), trial(False, None, problems=["not converged"])], False),
        ([trial(True, 6.0), trial(True, 6.0)], False),  # median over 5 s
        ([trial(True, 1.0), trial(True, 1.0), trial(True, 16.0)], False),  # max over 15 s
        ([trial(True, 1.0, problems=["duplicates"])], False),
    ],
)
def test_the_goals(trials: list[TrialResult], goals_met: bool) -> None:
    story = summarize([trial(True, 1.0)], trials)
    assert meets_goals(story) is goals_met
