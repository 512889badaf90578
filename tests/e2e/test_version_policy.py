"""Version policies (beyond OLM): a Manual Subscription annotated `olm-py.io/auto-approve`
installs and upgrades unattended within its step size, and leaves a bigger step waiting for a
person; a Subscription annotated `olm-py.io/version-range` stays in its range and says what it
holds back. The samples catalog: alpha has 0.0.1 -> 0.0.2, beta 0.0.3 -> 0.1.0."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import plan_for, subscription

pytestmark = pytest.mark.e2e

PLAN = "installplan.operators.coreos.com"
V001, V002 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
V003, V010 = "memcached-operator.v0.0.3", "memcached-operator.v0.1.0"


def subscribe_annotated(
    plane: ControlPlane, namespace: str, annotations: dict[str, str], **spec: str
) -> None:
    """kubectl apply of a Subscription to memcached-operator carrying olm-py's annotations."""
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "memcached", "annotations": annotations},
        "spec": {
            "name": "memcached-operator",
            "source": "samples",
            "sourceNamespace": "olm",
            **spec,
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def subscribe_with_policy(plane: ControlPlane, namespace: str, policy: str, **spec: str) -> None:
    """A Manual Subscription carrying the auto-approve policy."""
    annotations = {"olm-py.io/auto-approve": policy}
    subscribe_annotated(plane, namespace, annotations, installPlanApproval="Manual", **spec)


def version_held(plane: ControlPlane, namespace: str, status: str) -> dict[str, Any]:
    """The Subscription's VersionHeld condition, once it has `status`."""

    def said() -> dict[str, Any] | None:
        found = subscription(plane, namespace).get("status", {}).get("conditions") or []
        held = next((c for c in found if c["type"] == "VersionHeld"), None)
        return held if held is not None and held["status"] == status else None

    found: dict[str, Any] = wait_for(said, timeout=STEP_TIMEOUT, what=f"VersionHeld {status}")
    return found


def succeeded(plane: ControlPlane, namespace: str, csv: str) -> None:
    wait_for(
        lambda: phase(plane, namespace, csv) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{csv} Succeeded",
    )


def waiting_plan(plane: ControlPlane, namespace: str, csv: str) -> dict[str, Any]:
    """The plan for `csv`, once it waits for approval."""
    name = plan_for(plane, namespace, csv)["metadata"]["name"]

    def waits() -> dict[str, Any] | None:
        plan: dict[str, Any] = plane.get_json(PLAN, name, "-n", namespace)
        return plan if (plan.get("status") or {}).get("phase") == "RequiresApproval" else None

    found: dict[str, Any] = wait_for(waits, timeout=STEP_TIMEOUT, what=f"{csv} waiting")
    return found


def approved_by_olm_py(plane: ControlPlane, namespace: str, csv: str) -> str:
    plan = plan_for(plane, namespace, csv)
    assert plan["spec"]["approval"] == "Manual" and plan["spec"]["approved"] is True
    said: str = plan["metadata"]["annotations"]["olm-py.io/auto-approved"]
    return said


def test_patch_installs_and_takes_a_patch_upgrade_unattended(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe_with_policy(plane, namespace, "patch", channel="alpha", startingCSV=V001)

    # kubectl get csv: 0.0.1, then 0.0.2, nobody approving anything.
    succeeded(plane, namespace, V002)
    assert approved_by_olm_py(plane, namespace, V001) == (
        f"memcached (patch): first install of {V001} 0.0.1"
    )
    assert approved_by_olm_py(plane, namespace, V002) == (
        f"memcached (patch): {V001} 0.0.1 -> {V002} 0.0.2"
    )
    # kubectl describe installplan: the Event says the same.
    plan = plan_for(plane, namespace, V002)["metadata"]["name"]

    def said() -> list[str]:
        events = plane.get_json("events", "-n", namespace)["items"]
        return [
            e["message"]
            for e in events
            if e["reason"] == "InstallPlanAutoApproved" and e["involvedObject"]["name"] == plan
        ]

    [message] = wait_for(said, timeout=STEP_TIMEOUT, what="the InstallPlanAutoApproved Event")
    assert (
        message
        == f"InstallPlan {plan} approved by olm-py: memcached (patch): {V001} 0.0.1 -> {V002} 0.0.2"
    )


def test_patch_leaves_a_minor_step_waiting_for_a_person(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe_with_policy(plane, namespace, "patch", channel="beta", startingCSV=V003)

    succeeded(plane, namespace, V003)
    plan = waiting_plan(plane, namespace, V010)
    assert plan["spec"]["approved"] is False
    assert "olm-py.io/auto-approved" not in (plan["metadata"].get("annotations") or {})
    assert subscription(plane, namespace)["status"]["state"] == "UpgradePending"
    assert phase(plane, namespace, V003) == "Succeeded/InstallSucceeded"


def test_first_installs_the_starting_csv_unattended_then_stays_manual(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe_with_policy(plane, namespace, "first", channel="alpha", startingCSV=V001)

    succeeded(plane, namespace, V001)
    plan = waiting_plan(plane, namespace, V002)
    assert plan["spec"]["approved"] is False
    assert phase(plane, namespace, V002) == "absent"


def test_a_value_that_is_not_a_policy_is_explained_and_the_plan_waits(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe_with_policy(plane, namespace, "weekly", channel="alpha", startingCSV=V001)

    plan = waiting_plan(plane, namespace, V001)
    assert plan["spec"]["approved"] is False

    def explained() -> str | None:
        for event in plane.get_json("events", "-n", namespace)["items"]:  # on the plan
            if event["reason"] == "InvalidAutoApprove":
                return str(event["message"])
        return None

    message = wait_for(explained, timeout=STEP_TIMEOUT, what="the InvalidAutoApprove Event")
    assert "olm-py.io/auto-approve='weekly' is not a policy" in message

    # kubectl describe subscription: the same, in a condition of its own.
    def on_subscription() -> dict[str, Any] | None:
        found = subscription(plane, namespace).get("status", {}).get("conditions") or []
        return next((c for c in found if c["type"] == "AutoApproveInvalid"), None)

    said = wait_for(on_subscription, timeout=STEP_TIMEOUT, what="AutoApproveInvalid")
    assert said["status"] == "True" and said["message"] == message


def test_a_range_holds_the_subscription_below_a_newer_version_and_says_so(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    # Manual, the first install approved by olm-py: the upgrade a wider range lets through
    # then waits (0.1.0's CRD, cluster-wide, is not for this story to change).
    annotations = {"olm-py.io/version-range": ">=0.0.1 <0.1.0", "olm-py.io/auto-approve": "first"}
    subscribe_annotated(plane, namespace, annotations, channel="beta", installPlanApproval="Manual")

    # kubectl get csv: 0.0.3, the newest of beta in range (the head, 0.1.0, is not).
    succeeded(plane, namespace, V003)
    held = version_held(plane, namespace, "True")
    assert held["reason"] == "OutsideVersionRange"
    assert "holds back 0.1.0 of package memcached-operator" in held["message"]
    assert subscription(plane, namespace)["status"]["state"] == "AtLatestKnown"
    assert phase(plane, namespace, V010) == "absent"

    # Widening the range lets the upgrade through (into a plan waiting for a person); the
    # condition then says nothing is held.
    plane.kubectl(
        "annotate",
        "subscription.operators.coreos.com",
        "memcached",
        "-n",
        namespace,
        "--overwrite",
        "olm-py.io/version-range=>=0.0.1 <0.2.0",
    )
    assert waiting_plan(plane, namespace, V010)["spec"]["approved"] is False
    assert version_held(plane, namespace, "False")["reason"] == "WithinVersionRange"
    assert subscription(plane, namespace)["status"]["currentCSV"] == V010


def test_a_value_that_is_not_a_range_keeps_the_subscription_where_it_is(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    annotations = {"olm-py.io/version-range": "<0.1.0"}
    subscribe_annotated(plane, namespace, annotations, channel="beta")
    succeeded(plane, namespace, V003)
    version_held(plane, namespace, "True")

    plane.kubectl(
        "annotate",
        "subscription.operators.coreos.com",
        "memcached",
        "-n",
        namespace,
        "--overwrite",
        "olm-py.io/version-range=until friday",
    )

    def invalid() -> dict[str, Any] | None:
        held = version_held(plane, namespace, "True")
        return held if held["reason"] == "InvalidVersionRange" else None

    held = wait_for(invalid, timeout=STEP_TIMEOUT, what="VersionHeld InvalidVersionRange")
    assert "'until friday' is not a version range" in held["message"]
    assert "kubectl annotate subscription memcached --overwrite" in held["message"]
    assert phase(plane, namespace, V010) == "absent"
    assert phase(plane, namespace, V003) == "Succeeded/InstallSucceeded"
