"""Subscription spec.config merged into Deployments as OLM v0 merges it (olm.install.overrides),
and the CSV phase machine's use of it: the hash rolls, a second pass writes nothing, bad input
is explained."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from olm.api.labels import Label
from olm.controllers.store import Store
from olm.controllers.watch import related_keys
from olm.csv.phase import World, decide, desired_deployments
from olm.install.overrides import apply_config, config_problem
from olm.install.strategy import parse_strategy
from tests.unit.csv.world import csv, healthy, moved, world

UNCHANGED = object()
TOL = {"key": "k", "operator": "Exists", "effect": "NoSchedule"}


def dep(**pod: Any) -> dict[str, Any]:
    containers = pod.pop(
        "containers",
        [
            {
                "name": "a",
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                "volumeMounts": [{"name": "v", "mountPath": "/old"}],
            },
            {"name": "b"},
        ],
    )
    return {
        "metadata": {"name": "d", "annotations": {"keep": "dep"}},
        "spec": {
            "template": {
                "metadata": {"annotations": {"keep": "pod"}},
                "spec": {"containers": containers, **pod},
            }
        },
    }


def pod(d: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = d["spec"]["template"]["spec"]
    return spec


CASES: list[tuple[str, dict[str, Any] | None, Any, Any]] = [
    # (case, config, selector of the result, expected)
    ("no config", None, lambda d: d, UNCHANGED),
    ("empty config", {}, lambda d: d, UNCHANGED),
    (
        "env overrides in place and appends new names in config order",
        {"env": [{"name": "C", "value": "3"}, {"name": "A", "value": "x"}]},
        lambda d: [pod(d)["containers"][0]["env"], pod(d)["containers"][1]["env"]],
        [
            [{"name": "A", "value": "x"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
            [{"name": "C", "value": "3"}, {"name": "A", "value": "x"}],
        ],
    ),
    (
        "env not into init containers",
        {"env": [{"name": "C", "value": "3"}]},
        lambda d: pod(d)["initContainers"],
        [{"name": "i"}],
    ),
    (
        "envFrom appended unless equal",
        {"envFrom": [{"configMapRef": {"name": "cm"}}, {"secretRef": {"name": "s"}}]},
        lambda d: pod(d)["containers"][0]["envFrom"],
        [{"configMapRef": {"name": "cm"}}, {"secretRef": {"name": "s"}}],
    ),
    (
        "volumes by name",
        {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]},
        lambda d: pod(d)["volumes"],
        [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}],
    ),
    (
        "volumeMounts by name in every container",
        {"volumeMounts": [{"name": "v", "mountPath": "/new"}, {"name": "w", "mountPath": "/w"}]},
        lambda d: [c["volumeMounts"] for c in pod(d)["containers"]],
        [[{"name": "v", "mountPath": "/new"}, {"name": "w", "mountPath": "/w"}]] * 2,
    ),
    (
        "tolerations appended de-duplicated",
        {"tolerations": [TOL, {"key": "n", "operator": "Exists"}]},
        lambda d: pod(d)["tolerations"],
        [TOL, {"key": "n", "operator": "Exists"}],
    ),
    (
        "resources replace every container's",
        {"resources": {"limits": {"cpu": "1"}}},
        lambda d: [c["resources"] for c in pod(d)["containers"]],
        [{"limits": {"cpu": "1"}}] * 2,
    ),
    (
        "nodeSelector replaces",
        {"nodeSelector": {"disk": "ssd"}},
        lambda d: pod(d)["nodeSelector"],
        {"disk": "ssd"},
    ),
    (
        "affinity: a non-null part replaces, others stay",
        {"affinity": {"podAffinity": {"x": 2}}},
        lambda d: pod(d)["affinity"],
        {"nodeAffinity": {"n": 1}, "podAffinity": {"x": 2}},
    ),
    (
        "affinity: an empty part removes it",
        {"affinity": {"nodeAffinity": {}}},
        lambda d: pod(d).get("affinity"),
        None,
    ),
    (
        "affinity: empty removes all",
        {"affinity": {}},
        lambda d: "affinity" in pod(d),
        False,
    ),
    (
        "annotations added, existing keys kept",
        {"annotations": {"keep": "config", "new": "n"}},
        lambda d: [d["metadata"]["annotations"], d["spec"]["template"]["metadata"]["annotations"]],
        [{"keep": "dep", "new": "n"}, {"keep": "pod", "new": "n"}],
    ),
    (
        "selector merges nothing (as OLM)",
        {"selector": {"matchLabels": {"a": "b"}}},
        lambda d: d,
        UNCHANGED,
    ),
]


@pytest.mark.parametrize(
    ("config", "select", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_apply_config(config: dict[str, Any] | None, select: Any, expected: Any) -> None:
    base = dep(affinity={"nodeAffinity": {"n": 1}}, initContainers=[{"name": "i"}])
    before = copy.deepcopy(base)
    merged = apply_config(base, config)
    assert base == before, "the input is never modified"
    if expected is UNCHANGED:
        assert merged == base
    else:
        assert select(merged) == expected


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        (None, None),
        ({"env": [{"name": "A", "value": "1"}], "resources": {}}, None),
        ("x", "spec.config must be an object"),
        ({"env": {"A": "1"}}, "spec.config.env must be a list"),
        ({"env": [{"value": "1"}]}, "spec.config.env[0].name must be a non-empty string"),
        ({"tolerations": ["x"]}, "spec.config.tolerations[0] must be an object"),
        ({"nodeSelector": {"a": 1}}, "spec.config.nodeSelector.a must be a string"),
        ({"resources": []}, "spec.config.resources must be an object"),
        ({"affinity": {"podAffinity": []}}, "spec.config.affinity.podAffinity must be an object"),
    ],
)
def test_config_problem(config: Any, problem: str | None) -> None:
    assert config_problem(config) == problem


CONFIG = {"env": [{"name": "LOG", "value": "debug"}], "nodeSelector": {"disk": "ssd"}}


def configured(subject: dict[str, Any], config: Any, **kw: Any) -> World:
    return dataclasses.replace(world(subject, **kw), subscription="sub", subscription_config=config)


def test_config_changes_the_hash_and_rolls_a_succeeded_csv() -> None:
    subject = csv(phase="Succeeded", reason="InstallSucceeded")
    strategy = parse_strategy(subject)
    plain = desired_deployments(world(subject), strategy)[0]
    merged = desired_deployments(configured(subject, CONFIG), strategy)[0]
    assert (
        merged["metadata"]["labels"][Label.DEPLOYMENT_SPEC_HASH]
        != plain["metadata"]["labels"][Label.DEPLOYMENT_SPEC_HASH]
    )
    assert merged["spec"]["template"]["spec"]["nodeSelector"] == {"disk": "ssd"}
    # The config arrives: the Deployment drifted from what is wanted -> reinstall.
    plan = decide(configured(subject, CONFIG, deployments={"op": healthy(plain)}))
    assert moved(plan) == "InstallReady/ComponentUnhealthy"
    # Applied: a second pass writes nothing.
    plan = decide(configured(subject, CONFIG, deployments={"op": healthy(merged)}))
    assert plan.status is None and not plan.apply
    # Removed: the merged Deployment drifted from the plain one -> reinstall.
    plan = decide(configured(subject, None, deployments={"op": healthy(merged)}))
    assert moved(plan) == "InstallReady/ComponentUnhealthy"


def test_install_ready_applies_the_merged_deployment() -> None:
    subject = csv(phase="InstallReady", reason="AllRequirementsMet")
    plan = decide(configured(subject, CONFIG))
    env = plan.apply[0]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "LOG", "value": "debug"} in env


def test_invalid_config_is_explained_on_the_csv() -> None:
    subject = csv(phase="Succeeded", reason="InstallSucceeded")
    plan = decide(configured(subject, {"env": [{"value": "x"}]}))
    assert moved(plan) == "Failed/InvalidInstallStrategy"
    assert plan.status is not None
    assert plan.status["message"] == (
        "Subscription sub: spec.config.env[0].name must be a non-empty string. "
        "Fix spec.config in Subscription sub."
    )


@pytest.mark.parametrize(
    ("written", "served"),
    [
        ("0.5", "500m"),
        (0.5, "500m"),
        (1, "1"),
        ("1000m", "1"),
        ("2000", "2k"),
        ("1500", "1500"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("64Mi", "64Mi"),
        ("512", "512"),
        ("0", "0"),
        ("1e3", "1e3"),
        ("lots", "lots"),
    ],
)
def test_resources_are_written_as_the_api_server_serves_them(written: Any, served: str) -> None:
    merged = apply_config(dep(), {"resources": {"limits": {"cpu": written}}})
    assert pod(merged)["containers"][0]["resources"] == {"limits": {"cpu": served}}


def test_a_subscription_change_wakes_the_csvs_it_names() -> None:
    sub = {
        "metadata": {"name": "sub", "namespace": "ns1"},
        "spec": {"config": {}},
        "status": {"installedCSV": "op.v1", "currentCSV": "op.v2"},
    }
    keys = related_keys("subscription", sub, Store())
    assert ("csv", "ns1", "op.v1") in keys and ("csv", "ns1", "op.v2") in keys
