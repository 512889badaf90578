"""Sets of CSVs in one namespace settle in explained states and then stay quiet.

Each row is a namespace's CSVs (and what the API server does with their Deployments); the
simulator runs them round after round. A row passes when every CSV ends in the expected
phase/reason with a message naming the problem, nothing is written for the last minute of
simulated time (longer than the 30-second install retry), and no CSV would write, wake or
poll again (the old busy loop: two CSVs replacing each other woke each other forever).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from olm.install.deployments import render_deployment
from olm.install.strategy import parse_strategy
from tests.unit.csv.namespace import Namespace
from tests.unit.csv.world import csv, healthy

ROUNDS = 40  # 200 s of simulated time
QUIET_ROUNDS = 12  # the last minute


def born(body: dict[str, Any], second: int) -> dict[str, Any]:
    body = copy.deepcopy(body)
    body["metadata"]["creationTimestamp"] = f"2026-11-22T11:00:{second:02d}Z"
    return body


def installed(name: str, **spec: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Succeeded CSV and the healthy Deployment it owns."""
    body = csv(name, phase="Succeeded", reason="InstallSucceeded", **spec)
    return body, healthy(render_deployment(body, parse_strategy(body).deployments[0]))


OWNED_CRD = {"owned": [{"name": "things.example.com", "version": "v1", "kind": "Thing"}]}
ESTABLISHED = {
    "things.example.com": {
        "metadata": {"uid": "u"},
        "spec": {"versions": [{"name": "v1", "served": True}]},
        "status": {
            "conditions": [
                {"type": "Established", "status": "True"},
                {"type": "NamesAccepted", "status": "True"},
            ]
        },
    }
}


@dataclass
class Row:
    name: str
    csvs: list[dict[str, Any]]
    expect: dict[str, str]  # csv -> "Phase/Reason", or "deleted"
    says: dict[str, list[str]] = field(default_factory=dict)  # csv -> message fragments
    deployments: dict[str, dict[str, Any]] = field(default_factory=dict)
    refused: set[str] = field(default_factory=set)
    stuck: set[str] = field(default_factory=set)
    crds: dict[str, Any] | None = None
    owner: str | None = None  # who owns Deployment "op" at the end


A_SUCCEEDED, A_DEPLOYMENT = installed("a")
B_OVER_A, B_DEPLOYMENT = installed("b", replaces="a")
CYCLE = "spec.replaces forms a cycle"

ROWS = [
    Row(
        "a cycle of two",
        [csv("a", replaces="b"), csv("b", replaces="a")],
        {"a": "Failed/OwnerConflict", "b": "Failed/OwnerConflict"},
        {"a": [CYCLE, "a replaces b, b replaces a", "remove it from the oldest"], "b": [CYCLE]},
    ),
    Row(
        "a cycle of three",
        [csv("a", replaces="b"), csv("b", replaces="c"), csv("c", replaces="a")],
        {n: "Failed/OwnerConflict" for n in "abc"},
        {"c": ["c replaces a, a replaces b, b replaces c"]},
    ),
    Row(
        "a cycle closed over two installed CSVs",
        [{**A_SUCCEEDED, "spec": {**A_SUCCEEDED["spec"], "replaces": "b"}}, B_OVER_A],
        {"a": "Failed/OwnerConflict", "b": "Failed/OwnerConflict"},
        {"b": [CYCLE]},
        deployments={"op": B_DEPLOYMENT},
        owner="b",
    ),
    Row(
        "a CSV that leads into a cycle is a second replacer",
        [
            born(csv("a", replaces="b"), 1),
            born(csv("b", replaces="a"), 1),
            born(csv("d", replaces="a"), 2),
        ],
        {n: "Failed/OwnerConflict" for n in "abd"},
        {"d": ["spec.replaces names a, which ClusterServiceVersion b already replaces"]},
    ),
    Row(
        "two CSVs replace the same one, all applied together",
        [born(csv("a"), 1), born(csv("b", replaces="a"), 2), born(csv("c", replaces="a"), 2)],
        {"a": "deleted", "b": "Succeeded/InstallSucceeded", "c": "Failed/OwnerConflict"},
        {
            "c": [
                "spec.replaces names a, which ClusterServiceVersion b already replaces",
                "Delete c, or set its spec.replaces to b",
            ]
        },
        owner="b",
    ),
    Row(
        "two CSVs replace an installed one: the older wins, whatever the names",
        [A_SUCCEEDED, born(csv("c", replaces="a"), 1), born(csv("b", replaces="a"), 2)],
        {"a": "deleted", "c": "Succeeded/InstallSucceeded", "b": "Failed/OwnerConflict"},
        {"b": ["ClusterServiceVersion c already replaces"]},
        deployments={"op": A_DEPLOYMENT},
        owner="c",
    ),
    Row(
        "a second replacer after the first finished (the old CSV is gone)",
        [B_OVER_A, born(csv("c", replaces="a"), 59)],
        {"b": "Succeeded/InstallSucceeded", "c": "Failed/OwnerConflict"},
        {"c": ["ClusterServiceVersion b already replaces"]},
        deployments={"op": B_DEPLOYMENT},
        owner="b",
    ),
    Row(
        "two unrelated CSVs with the same Deployment",
        [csv("x"), csv("y")],
        {"x": "Succeeded/InstallSucceeded", "y": "Failed/OwnerConflict"},
        {"y": ["Deployment op", "belongs to ClusterServiceVersion x", "Rename the deployment"]},
        owner="x",
    ),
    Row(
        "a chain applied at once upgrades to its newest",
        [csv("a"), csv("b", replaces="a"), csv("c", replaces="b")],
        {"a": "deleted", "b": "deleted", "c": "Succeeded/InstallSucceeded"},
        owner="c",
    ),
    Row(
        "an upgrade hands the Deployment over",
        [A_SUCCEEDED, csv("b", replaces="a")],
        {"a": "deleted", "b": "Succeeded/InstallSucceeded"},
        deployments={"op": A_DEPLOYMENT},
        owner="b",
    ),
    Row(
        "a CSV that replaces itself installs",
        [csv("a", replaces="a")],
        {"a": "Succeeded/InstallSucceeded"},
        owner="a",
    ),
    Row(
        "two owners of one CRD",
        [
            csv("a", customresourcedefinitions=OWNED_CRD),
            csv("b", customresourcedefinitions=OWNED_CRD),
        ],
        {"a": "Failed/OwnerConflict", "b": "Failed/OwnerConflict"},
        {"a": ["things.example.com is also owned by ClusterServiceVersion b"]},
        crds=ESTABLISHED,
    ),
    Row(
        "a Deployment the API server refuses",
        [csv("a")],
        {"a": "Failed/InstallComponentFailed"},
        {"a": ["refused Deployment op (spec.install.spec.deployments[0])", "containerPort"]},
        refused={"op"},
    ),
    Row(
        "a Deployment past its progress deadline",
        [csv("a")],
        {"a": "Failed/InstallCheckFailed"},
        {"a": ["not ready before timeout"]},
        stuck={"op"},
        owner="a",
    ),
    Row(
        "the younger replacer got ahead before the older one was seen",
        [
            csv("a", phase="Replacing", reason="BeingReplaced"),
            born(csv("b", replaces="a"), 1),
            born(csv("c", phase="Succeeded", reason="InstallSucceeded", replaces="a"), 1),
        ],
        {"a": "deleted", "b": "Succeeded/InstallSucceeded", "c": "Failed/OwnerConflict"},
        {"c": ["ClusterServiceVersion b already replaces"]},
        deployments={"op": installed("c", replaces="a")[1]},
        owner="b",
    ),
    Row(
        "a phase OLM does not know (a hand-edited status) starts over",
        [csv("a", phase="Bogus", reason="Whatever")],
        {"a": "Succeeded/InstallSucceeded"},
        owner="a",
    ),
]


def settle(row: Row) -> Namespace:
    names = [c["metadata"]["name"] for c in row.csvs]
    assert len(set(names)) == len(names)
    return Namespace(
        csvs={c["metadata"]["name"]: c for c in copy.deepcopy(row.csvs)},
        deployments=copy.deepcopy(row.deployments),
        refused=set(row.refused),
        stuck=set(row.stuck),
        crds=row.crds,
    ).run(ROUNDS)


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_settles_explained_and_quiet(row: Row) -> None:
    namespace = settle(row)
    states = {
        name: "deleted" if name not in namespace.csvs else namespace.states()[name]
        for name in row.expect
    }
    assert states == row.expect, namespace.writes
    for name, fragments in row.says.items():
        for fragment in fragments:
            assert fragment in namespace.message(name)
    assert namespace.last_write() < ROUNDS - QUIET_ROUNDS, namespace.writes[-6:]
    assert namespace.restless() == {}
    if row.owner is not None:
        assert namespace.deployments["op"]["metadata"]["labels"]["olm.owner"] == row.owner


@pytest.mark.parametrize(
    ("row", "fix", "recovered"),
    [
        (ROWS[0], lambda ns: ns.delete("b"), {"a": "Succeeded/InstallSucceeded"}),
        (ROWS[4], lambda ns: ns.delete("b"), {"c": "Succeeded/InstallSucceeded"}),
        (ROWS[7], lambda ns: ns.delete("x"), {"y": "Succeeded/InstallSucceeded"}),
        (ROWS[11], lambda ns: ns.delete("a"), {"b": "Succeeded/InstallSucceeded"}),
        (ROWS[12], lambda ns: ns.refused.clear(), {"a": "Succeeded/InstallSucceeded"}),
    ],
    ids=["cycle", "second replacer", "shared deployment", "crd owner", "refused deployment"],
)
def test_fixing_the_cause_recovers(row: Row, fix: Any, recovered: dict[str, str]) -> None:
    namespace = settle(row)
    fix(namespace)
    namespace.run(ROUNDS)
    assert {n: namespace.states()[n] for n in recovered} == recovered
    assert namespace.restless() == {}


def test_a_refused_install_is_retried_without_writes() -> None:
    namespace = settle(ROWS[12])
    failures = [w for w in namespace.writes if w[2] == "Failed/InstallComponentFailed"]
    assert len(failures) == 1, namespace.writes
