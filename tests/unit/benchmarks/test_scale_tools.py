"""The scale benchmarks' pure parts (issue 28): the copy rate, the audit-log counting, the
10,000-namespace plan and its `--only` step. Nothing here starts a cluster."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from benchmarks import api_requests
from benchmarks.global_operators import copy_rate
from benchmarks.reference_olm import TEN_KEY, only_step
from benchmarks.ten_thousand import PHASES, plan

T0 = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)


def test_the_copy_rate_runs_from_the_first_copy_to_the_last() -> None:
    samples = [(0.0, 5), (1.0, 5), (2.0, 25), (4.0, 105), (5.0, 105)]
    assert copy_rate(samples, first=5, want=105) == 100 / 2.0
    assert copy_rate(samples, first=5, want=500) is None, "never reached"
    assert copy_rate([(0.0, 5)], first=5, want=5) is None


def _entry(agent: str, verb: str, resource: str, at: datetime, **extra: str) -> str:
    return json.dumps(
        {
            "stage": "ResponseComplete",
            "userAgent": agent,
            "verb": verb,
            "objectRef": {"resource": resource, **extra},
            "requestReceivedTimestamp": at.isoformat().replace("+00:00", "Z"),
        }
    )


def test_requests_are_counted_by_agent_verb_and_resource_inside_the_window() -> None:
    lines = [
        _entry("olm-py/0.1.0", "patch", "clusterserviceversions", T0),
        _entry("olm-py/0.1.0", "patch", "clusterserviceversions", T0, subresource="status"),
        _entry("kopf/1.37", "watch", "namespaces", T0),
        _entry(
            "olm/v0.0.0 (linux/amd64) kubernetes/$Format", "update", "clusterserviceversions", T0
        ),
        _entry("catalog/v0.0.0", "list", "subscriptions", T0),
        _entry("kubectl/v1.34", "get", "namespaces", T0),
        _entry("olm-py/0.1.0", "patch", "clusterserviceversions", T0 - timedelta(seconds=1)),
        _entry("olm-py/0.1.0", "patch", "clusterserviceversions", T0 + timedelta(seconds=60)),
        json.dumps({"stage": "RequestReceived", "userAgent": "olm-py/0.1.0"}),
        '{"half a line',
    ]
    counted = api_requests.count(lines, T0, T0 + timedelta(seconds=60))
    assert counted[("olm-py", "patch", "clusterserviceversions")] == 1
    assert counted[("olm-py", "patch", "clusterserviceversions/status")] == 1
    assert api_requests.by_side(counted) == {"olm-py": 3, "reference": 2}


def test_an_agent_is_its_name_without_version() -> None:
    assert api_requests.agent("olm-py/0.1.0") == "olm-py"
    assert api_requests.agent("olm/v0.0.0 (linux/amd64) kubernetes/$Format") == "olm"
    assert api_requests.agent("") == "?"


def test_the_ten_thousand_plan_counts_copies_and_checks_etcd() -> None:
    dry = plan(10_000, {"olm-py": 100.0, "reference": 20.0})
    copies = {step["phase"]: step["copies"] for step in dry["phases"]}
    assert copies == {
        "one_operator_copies_off": 0,
        "one_operator_copies_on": 10_000,
        "five_operators_copies_off": 0,
        "five_operators_copies_on": 50_000,
    }
    last = dry["phases"][-1]["minutes_at_rate"]
    assert last == {"olm-py": round(50_000 / 100 / 60, 1), "reference": round(50_000 / 20 / 60, 1)}
    assert dry["etcd_fits"] is True
    assert [name for name, _, _ in PHASES] == list(copies)


def test_the_ten_thousand_step_is_an_only_step() -> None:
    assert only_step(["--only", "ten-thousand"]) == TEN_KEY
