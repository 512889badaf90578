"""Subscription steps of the e2e stories: subscribe to the samples' memcached-operator, find
and approve its InstallPlans, read a Subscription and its conditions, create an operand."""

from __future__ import annotations

import json
from typing import Any

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"


def subscribe(plane: ControlPlane, namespace: str, approval: str, **spec: str) -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": spec.pop("name_", "memcached")},
        "spec": {
            "name": "memcached-operator",
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
            "installPlanApproval": approval,
            **spec,
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def plans(plane: ControlPlane, namespace: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = plane.get_json(
        "installplan.operators.coreos.com", "-n", namespace
    )["items"]
    return items


def plan_for(plane: ControlPlane, namespace: str, csv: str) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        return next(
            (p for p in plans(plane, namespace) if csv in p["spec"]["clusterServiceVersionNames"]),
            None,
        )

    found: dict[str, Any] = wait_for(find, timeout=STEP_TIMEOUT, what=f"an InstallPlan for {csv}")
    return found


def subscription(plane: ControlPlane, namespace: str, name: str = "memcached") -> dict[str, Any]:
    found: dict[str, Any] = plane.get_json(
        "subscription.operators.coreos.com", name, "-n", namespace
    )
    return found


def approve(plane: ControlPlane, namespace: str, plan: dict[str, Any]) -> None:
    plane.kubectl(
        "patch",
        "installplan.operators.coreos.com",
        plan["metadata"]["name"],
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"approved":true}}',
    )


def condition(plane: ControlPlane, namespace: str, kind: str) -> dict[str, Any] | None:
    conditions = (subscription(plane, namespace).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == kind), None)


def memcached(plane: ControlPlane, namespace: str, name: str) -> None:
    body = {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": name},
        "spec": {"size": 1},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))
