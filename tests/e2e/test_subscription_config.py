"""A Subscription's spec.config reaches the operator's Deployment, as OLM v0 merges it: set,
changed (the Deployment rolls), removed (it is gone again)."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import OLD, approve, plan_for, subscribe

CONFIG = {
    "env": [{"name": "LOG_LEVEL", "value": "debug"}],
    # Written as people do (numbers, non-canonical units): the API server rewrites them, which
    # must not look like drift (a reinstall loop).
    "resources": {
        "limits": {"cpu": 2, "memory": "1024Mi"},
        "requests": {"cpu": 0.5, "memory": "64Mi"},
    },
    "nodeSelector": {"disktype": "ssd"},
    "tolerations": [
        {"key": "dedicated", "operator": "Equal", "value": "ops", "effect": "NoSchedule"}
    ],
}


CANONICAL_RESOURCES = {
    "limits": {"cpu": "2", "memory": "1Gi"},
    "requests": {"cpu": "500m", "memory": "64Mi"},
}


def deployment(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    items: list[dict[str, Any]] = plane.get_json(
        "deployment", "-n", namespace, "-l", f"olm.owner={OLD}"
    )["items"]
    assert len(items) == 1, [i["metadata"]["name"] for i in items]
    return items[0]


def pod_spec(dep: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = dep["spec"]["template"]["spec"]
    return spec


def env_of(dep: dict[str, Any]) -> dict[str, str]:
    container = pod_spec(dep)["containers"][0]
    return {e["name"]: e.get("value", "") for e in container.get("env") or []}


def set_config(plane: ControlPlane, namespace: str, config: Any) -> None:
    plane.kubectl(
        "patch",
        "subscription.operators.coreos.com",
        "memcached",
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        json.dumps({"spec": {"config": config}}),
    )


def test_subscription_config_story(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD)
    approve(plane, namespace, plan_for(plane, namespace, OLD))
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded",
    )
    plain = deployment(plane, namespace)
    assert "LOG_LEVEL" not in env_of(plain)
    assert not pod_spec(plain).get("nodeSelector")

    # 1. The config reaches the Deployment. Its nodeSelector must find a node, or the new pod
    # never starts and the old one is never replaced: the CSV then waits (as under OLM, whose
    # rollout check counts the outdated replica) instead of reading Succeeded.
    plane.kubectl("label", "nodes", "--all", "disktype=ssd", "--overwrite")
    try:
        _configured_story(plane, namespace)
    finally:
        plane.kubectl("label", "nodes", "--all", "disktype-")


def _configured_story(plane: ControlPlane, namespace: str) -> None:
    set_config(plane, namespace, CONFIG)

    def configured() -> dict[str, Any] | None:
        dep = deployment(plane, namespace)
        return dep if env_of(dep).get("LOG_LEVEL") == "debug" else None

    dep = wait_for(configured, timeout=STEP_TIMEOUT, what="env from spec.config in the Deployment")
    spec = pod_spec(dep)
    assert spec["nodeSelector"] == {"disktype": "ssd"}
    assert CONFIG["tolerations"][0] in spec["tolerations"]
    for container in spec["containers"]:
        assert container["resources"] == CANONICAL_RESOURCES
    assert "OPERATOR_CONDITION_NAME" in env_of(dep), "OLM's own env stays"
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded with the config",
    )
    generation = deployment(plane, namespace)["metadata"]["generation"]
    time.sleep(3)  # the settled Deployment is not rewritten (no drift loop)
    assert deployment(plane, namespace)["metadata"]["generation"] == generation
    assert phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded"

    # 2. A change rolls the Deployment.
    set_config(plane, namespace, {**CONFIG, "env": [{"name": "LOG_LEVEL", "value": "info"}]})
    dep = wait_for(
        lambda: (d := deployment(plane, namespace)) and env_of(d).get("LOG_LEVEL") == "info" and d,
        timeout=STEP_TIMEOUT,
        what="the changed env in the Deployment",
    )
    assert dep["metadata"]["generation"] > generation

    # 3. Removed: the Deployment is as the CSV renders it again, and the CSV settles.
    set_config(plane, namespace, None)
    dep = wait_for(
        lambda: (d := deployment(plane, namespace)) and "LOG_LEVEL" not in env_of(d) and d,
        timeout=STEP_TIMEOUT,
        what="the config gone from the Deployment",
    )
    spec = pod_spec(dep)
    assert not spec.get("nodeSelector")
    assert CONFIG["tolerations"][0] not in (spec.get("tolerations") or [])
    assert all(c.get("resources") != CANONICAL_RESOURCES for c in spec["containers"])
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded again",
    )
