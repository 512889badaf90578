"""Installed operators: CSV phase and reason in words, Subscriptions, plans, Events."""

from __future__ import annotations

from typing import Any

from olm.api.csv import CsvReason
from olm.console.operators import (
    REASON_WORDS,
    events_about,
    installed,
    plans,
    uninstall_view,
    words,
)


def csv(name: str, namespace: str = "shop", **status: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "labels": {}},
        "spec": {"displayName": name.title(), "version": "1.0.0"},
        "status": status,
    }


def test_rows_join_csvs_and_subscriptions_and_skip_copies() -> None:
    copied = csv("a.v1", namespace="other")
    copied["metadata"]["labels"]["olm.copiedFrom"] = "shop"
    sub = {
        "metadata": {"name": "a", "namespace": "shop"},
        "spec": {"name": "a", "channel": "stable", "installPlanApproval": "Manual"},
        "status": {"installedCSV": "a.v1"},
    }
    rows = installed(
        [
            csv("b.v1", phase="Failed", reason="NoOperatorGroup"),
            csv("a.v1", phase="Succeeded", reason="InstallSucceeded"),
            copied,
        ],
        [sub],
    )
    assert [(r.namespace, r.name) for r in rows] == [("shop", "a.v1"), ("shop", "b.v1")]
    a, b = rows
    assert a.succeeded and (a.subscription, a.package, a.channel, a.approval) == (
        "a",
        "a",
        "stable",
        "Manual",
    )
    assert a.words == "installed and running"
    assert (
        not b.succeeded and b.words == "its namespace has no OperatorGroup" and b.subscription == ""
    )


def test_unknown_reasons_are_shown_as_themselves() -> None:
    assert words("SomethingNew") == "SomethingNew"
    assert all(isinstance(k, CsvReason) for k in REASON_WORDS)


def test_plans_waiting_for_approval() -> None:
    items = [
        {
            "metadata": {"name": "p1", "namespace": "shop"},
            "spec": {
                "approval": "Manual",
                "approved": False,
                "clusterServiceVersionNames": ["a.v2"],
            },
            "status": {"phase": "RequiresApproval"},
        },
        {
            "metadata": {"name": "p0", "namespace": "shop"},
            "spec": {"approval": "Manual", "approved": True},
            "status": {"phase": "Complete"},
        },
    ]
    p0, p1 = plans(items)
    assert not p0.waiting and p1.waiting and p1.csvs == ("a.v2",)


def test_events_about_one_object_newest_first() -> None:
    events = [
        {
            "involvedObject": {"kind": "ClusterServiceVersion", "name": "a.v1"},
            "reason": "Old",
            "lastTimestamp": "2024-01-01T00:00:00Z",
        },
        {
            "involvedObject": {"kind": "ClusterServiceVersion", "name": "a.v1"},
            "reason": "New",
            "type": "Warning",
            "count": 3,
            "lastTimestamp": "2024-01-02T00:00:00Z",
        },
        {"involvedObject": {"kind": "ClusterServiceVersion", "name": "b.v1"}, "reason": "Other"},
    ]
    found = events_about(events, "ClusterServiceVersion", "a.v1")
    assert [(e.reason, e.count) for e in found] == [("New", 3), ("Old", 1)]


def test_the_uninstall_report_splits_into_what_goes_and_what_stays() -> None:
    report = uninstall_view(
        [
            "Uninstalling a from namespace shop; CRDs: keep (the default)",
            "would delete Subscription shop/a",
            "gc        Deployment shop/a (garbage collector would then remove it)",
            "kept      CustomResourceDefinition as.example.com: cleanup policy keep",
            "left      OperatorGroup shop/og: the namespace's",
            "note      something",
        ]
    )
    assert report.summary.startswith("Uninstalling a")
    assert [line.split()[0] for line in report.goes] == ["would", "gc"]
    assert [line.split()[0] for line in report.stays] == ["kept", "left"]
    assert report.other == ("note      something",)
    assert uninstall_view([]).summary == ""
