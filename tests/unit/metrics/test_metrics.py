"""OLM v0's metrics: gauges from cached objects (pure), counters, and the exposition text."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from olm.metrics.collector import OlmCollector, registry
from olm.metrics.counters import Counters
from olm.metrics.samples import Family, gauges


def csv(name: str, phase: str = "", reason: str = "", **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "metadata": {"name": name, "namespace": "ns", **extra.get("metadata", {})},
        "spec": {"version": extra.get("version", "1.0.0")},
    }
    if phase:
        obj["status"] = {"phase": phase, "reason": reason}
    return obj


def source(name: str, state: str | None) -> dict[str, Any]:
    obj: dict[str, Any] = {"metadata": {"name": name, "namespace": "olm"}}
    if state is not None:
        obj["status"] = {"connectionState": {"lastObservedState": state}}
    return obj


def by_name(families: list[Family]) -> dict[str, list[tuple[dict[str, str], float]]]:
    return {f.name: [(dict(s.labels), s.value) for s in f.samples] for f in families}


SUCCEEDED = csv("a.v1", "Succeeded", "InstallSucceeded")
PENDING = csv("b.v1", "Pending", "RequirementsNotMet", version="0.2.0")
COPIED = csv("c.v1", "Succeeded", "Copied", metadata={"labels": {"olm.copiedFrom": "other"}})
NO_STATUS = {"metadata": {"name": "d", "namespace": "ns"}}


@pytest.mark.parametrize(
    ("case", "csvs", "expected"),
    [
        ("none", [], {"csv_count": [({}, 0.0)], "csv_succeeded": [], "csv_abnormal": []}),
        (
            "succeeded",
            [SUCCEEDED],
            {
                "csv_count": [({}, 1.0)],
                "csv_succeeded": [({"namespace": "ns", "name": "a.v1", "version": "1.0.0"}, 1.0)],
                "csv_abnormal": [],
            },
        ),
        (
            "pending is abnormal, with phase and reason",
            [PENDING],
            {
                "csv_count": [({}, 1.0)],
                "csv_succeeded": [({"namespace": "ns", "name": "b.v1", "version": "0.2.0"}, 0.0)],
                "csv_abnormal": [
                    (
                        {
                            "namespace": "ns",
                            "name": "b.v1",
                            "version": "0.2.0",
                            "phase": "Pending",
                            "reason": "RequirementsNotMet",
                        },
                        1.0,
                    )
                ],
            },
        ),
        (
            "copies are not counted",
            [SUCCEEDED, COPIED],
            {
                "csv_count": [({}, 1.0)],
                "csv_succeeded": [({"namespace": "ns", "name": "a.v1", "version": "1.0.0"}, 1.0)],
                "csv_abnormal": [],
            },
        ),
        (
            "no status, no version",
            [NO_STATUS],
            {
                "csv_count": [({}, 1.0)],
                "csv_succeeded": [({"namespace": "ns", "name": "d", "version": "0.0.0"}, 0.0)],
                "csv_abnormal": [
                    (
                        {
                            "namespace": "ns",
                            "name": "d",
                            "version": "0.0.0",
                            "phase": "",
                            "reason": "",
                        },
                        1.0,
                    )
                ],
            },
        ),
    ],
)
def test_csv_gauges(case: str, csvs: list[dict[str, Any]], expected: dict[str, Any]) -> None:
    got = by_name(gauges(csvs, [], [], []))
    assert {k: got[k] for k in expected} == expected, case


@pytest.mark.parametrize(
    ("state", "ready"),
    [("READY", 1.0), ("TRANSIENT_FAILURE", 0.0), ("CONNECTING", 0.0), (None, 0.0)],
)
def test_catalogsource_ready(state: str | None, ready: float) -> None:
    got = by_name(gauges([], [], [], [source("s", state)]))
    assert got["catalogsource_ready"] == [({"namespace": "olm", "name": "s"}, ready)]
    assert got["catalog_source_count"] == [({}, 1.0)]


def test_counts() -> None:
    got = by_name(gauges([], [{}, {}], [{}, {}, {}], []))
    assert got["subscription_count"] == [({}, 2.0)]
    assert got["install_plan_count"] == [({}, 3.0)]
    assert got["catalog_source_count"] == [({}, 0.0)]


def sub(name: str, installed: str = "", channel: str = "alpha") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"name": "pkg", "channel": channel, "installPlanApproval": "Automatic"},
        "status": {"installedCSV": installed} if installed else {},
    }


def test_subscription_sync_total_replaces_its_label_set_and_goes_with_the_subscription() -> None:
    counters = Counters()
    counters.subscriptions_synced("ns", [sub("s")])
    counters.subscriptions_synced("ns", [sub("s")])
    assert counters.subscription_syncs == {("s", "", "alpha", "pkg", "Automatic"): 2.0}
    counters.subscriptions_synced("ns", [sub("s", installed="pkg.v1")])
    assert counters.subscription_syncs == {("s", "pkg.v1", "alpha", "pkg", "Automatic"): 1.0}
    counters.subscriptions_synced("other", [sub("t")])
    counters.subscriptions_synced("ns", [])  # s deleted
    assert counters.subscription_syncs == {("t", "", "alpha", "pkg", "Automatic"): 1.0}


def test_same_label_set_in_two_namespaces_survives_one_deletion() -> None:
    counters = Counters()
    counters.subscriptions_synced("ns1", [sub("s")])
    counters.subscriptions_synced("ns2", [sub("s")])
    counters.subscriptions_synced("ns1", [])
    assert counters.subscription_syncs == {("s", "", "alpha", "pkg", "Automatic"): 2.0}


def exposition(leading: bool, counters: Counters) -> dict[str, dict[str, Any]]:
    objects = {"csv": [SUCCEEDED, PENDING], "catalogsource": [source("s", "READY")]}
    reg = registry(OlmCollector(lambda: objects, counters, lambda: leading, lease_name="olm-py"))
    text = generate_latest(reg).decode()
    return {
        sample.name + str(sorted(sample.labels.items())): {"value": sample.value, "text": text}
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_exposition_uses_olm_names() -> None:
    counters = Counters()
    counters.csv_upgraded()
    counters.subscriptions_synced("ns", [sub("s", installed="pkg.v1")])
    counters.resolution(0.25, succeeded=True)
    counters.resolution(0.5, succeeded=False)
    counters.reconciled("csv", "success")
    samples = exposition(True, counters)
    text = next(iter(samples.values()))["text"]
    for line in (
        "csv_count 2.0",
        "csv_upgrade_count 1.0",
        'csv_succeeded{name="a.v1",namespace="ns",version="1.0.0"} 1.0',
        'csv_succeeded{name="b.v1",namespace="ns",version="0.2.0"} 0.0',
        'csv_abnormal{name="b.v1",namespace="ns",phase="Pending",reason="RequirementsNotMet",version="0.2.0"} 1.0',
        'catalogsource_ready{name="s",namespace="olm"} 1.0',
        'subscription_sync_total{approval="Automatic",channel="alpha",installed="pkg.v1",name="s",package="pkg"} 1.0',
        'olm_resolution_duration_seconds_count{outcome="succeeded"} 1.0',
        'olm_resolution_duration_seconds_sum{outcome="failed"} 0.5',
        "installplan_warnings_total 0.0",
        'controller_runtime_reconcile_total{controller="csv",result="success"} 1.0',
        'leader_election_master_status{name="olm-py"} 1.0',
        "install_plan_count 0.0",
        "subscription_count 0.0",
        "catalog_source_count 1.0",
    ):
        assert line in text.splitlines(), line
    assert "_created" not in text
    assert "csv_upgrade_count_total" not in text


def test_a_standby_reports_no_object_gauges() -> None:
    text = next(iter(exposition(False, Counters()).values()))["text"]
    assert "csv_count" not in text and "csv_succeeded" not in text
    assert 'leader_election_master_status{name="olm-py"} 0.0' in text.splitlines()
