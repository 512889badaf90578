"""A plan per Subscription (beyond OLM): in a namespace annotated
`olm-py.io/plan-per-subscription=true`, two independent Manual Subscriptions get an
InstallPlan each, and approving one installs only that operator (OLM would put both into one
plan: operator-lifecycle-manager#1355)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import minimal_csv, operator_group, phase
from tests.support.subscriptions import plan_for, plans

pytestmark = pytest.mark.e2e

MEMCACHED, TINY = "memcached-operator.v0.0.1", "tiny-operator.v1.0.0"


def tiny_catalog(plane: ControlPlane, namespace: str) -> None:
    """A ConfigMap catalog `tiny` of one package with nothing in common with memcached."""
    package = {
        "packageName": "tiny-operator",
        "defaultChannelName": "stable",
        "channels": [{"name": "stable", "currentCSV": TINY}],
    }
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "tiny-catalog"},
        "data": {
            "customResourceDefinitions": "[]",
            "clusterServiceVersions": yaml.safe_dump([minimal_csv(TINY)]),
            "packages": yaml.safe_dump([package]),
        },
    }
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "tiny"},
        "spec": {"sourceType": "configmap", "configMap": "tiny-catalog"},
    }
    for obj in (configmap, source):
        plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(obj))


def manual_subscriptions(plane: ControlPlane, namespace: str) -> None:
    """Both Subscriptions in one `kubectl apply`."""
    common = {"installPlanApproval": "Manual"}
    items = [
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": name},
            "spec": {**spec, **common},
        }
        for name, spec in (
            (
                "memcached",
                {
                    "name": "memcached-operator",
                    "channel": "alpha",
                    "startingCSV": MEMCACHED,
                    "source": "samples",
                    "sourceNamespace": "olm",
                },
            ),
            ("tiny", {"name": "tiny-operator", "source": "tiny", "sourceNamespace": namespace}),
        )
    ]
    body = {"apiVersion": "v1", "kind": "List", "items": items}
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def test_two_independent_manual_subscriptions_get_a_plan_each_and_approve_separately(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    plane.kubectl("annotate", "namespace", namespace, "olm-py.io/plan-per-subscription=true")
    operator_group(plane, namespace)
    tiny_catalog(plane, namespace)
    manual_subscriptions(plane, namespace)

    # kubectl get installplan: one plan per operator, each owned by its own Subscription.
    memcached_plan, tiny_plan = (
        plan_for(plane, namespace, MEMCACHED),
        plan_for(plane, namespace, TINY),
    )
    assert memcached_plan["spec"]["clusterServiceVersionNames"] == [MEMCACHED]
    assert tiny_plan["spec"]["clusterServiceVersionNames"] == [TINY]
    owners = {
        p["metadata"]["name"]: [o["name"] for o in p["metadata"]["ownerReferences"]]
        for p in (memcached_plan, tiny_plan)
    }
    assert owners == {
        memcached_plan["metadata"]["name"]: ["memcached"],
        tiny_plan["metadata"]["name"]: ["tiny"],
    }

    # Approve memcached's plan only: memcached installs, tiny still waits for a person.
    plane.kubectl(
        "patch",
        "installplan.operators.coreos.com",
        memcached_plan["metadata"]["name"],
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        '{"spec":{"approved":true}}',
    )
    wait_for(
        lambda: phase(plane, namespace, MEMCACHED) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{MEMCACHED} Succeeded",
    )

    def tiny_waits() -> dict[str, Any] | None:
        found = next(
            p for p in plans(plane, namespace) if TINY in p["spec"]["clusterServiceVersionNames"]
        )
        return found if (found.get("status") or {}).get("phase") == "RequiresApproval" else None

    assert (
        wait_for(tiny_waits, timeout=STEP_TIMEOUT, what="tiny's plan waiting")["spec"]["approved"]
        is False
    )
    assert phase(plane, namespace, TINY) == "absent"
    # memcached's next upgrade (0.0.2) waits in a plan of its own too.
    assert all(len(p["spec"]["clusterServiceVersionNames"]) == 1 for p in plans(plane, namespace))


def test_subscriptions_that_need_each_other_keep_one_plan_that_says_why(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    plane.kubectl("annotate", "namespace", namespace, "olm-py.io/plan-per-subscription=true")
    operator_group(plane, namespace)
    items = [
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": name},
            "spec": {
                "name": package,
                "channel": "alpha",
                "source": "mine",
                "sourceNamespace": namespace,
                "installPlanApproval": "Manual",
                **extra,
            },
        }
        for name, package, extra in (
            ("memcached", "memcached-operator", {"startingCSV": MEMCACHED}),
            ("dashboard", "memcached-dashboard", {}),
        )
    ]
    body = {"apiVersion": "v1", "kind": "List", "items": items}
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))
    # Their catalog comes last, so one resolution sees both: the samples, served again here.
    address = plane.kubectl(
        "get", "catsrc", "samples", "-n", "olm", "-o", "jsonpath={.spec.address}"
    ).stdout.strip()
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "mine"},
        "spec": {"sourceType": "grpc", "address": address},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(source))

    # The dashboard needs the operator: one plan, and both Subscriptions say why.
    plan = plan_for(plane, namespace, "memcached-dashboard.v0.1.0")
    assert sorted(plan["spec"]["clusterServiceVersionNames"]) == [
        "memcached-dashboard.v0.1.0",
        MEMCACHED,
    ]
    why = plan["metadata"]["annotations"]["olm-py.io/shared-plan"]
    assert why.startswith("Subscriptions dashboard, memcached share this InstallPlan")

    def pending(name: str) -> Callable[[], str | None]:
        def said() -> str | None:
            status = plane.get_json("subscription.operators.coreos.com", name, "-n", namespace)
            for condition in (status.get("status") or {}).get("conditions") or []:
                if condition["type"] == "InstallPlanPending" and condition.get("message"):
                    return str(condition["message"])
            return None

        return said

    for name in ("memcached", "dashboard"):
        assert wait_for(pending(name), timeout=STEP_TIMEOUT, what=f"{name} pending") == why
