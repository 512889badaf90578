"""Subscriptions to the samples catalog: InstallPlans with approval, the `replaces` upgrade one
hop at a time, operands untouched, dependencies installed, and failures explained."""

from __future__ import annotations

import json
from typing import Any

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import (
    NEW,
    OLD,
    approve,
    condition,
    plan_for,
    plans,
    subscribe,
    subscription,
)


def test_manual_approval_story(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD)

    # 1. An InstallPlan waits for approval, listing its steps.
    first = plan_for(plane, namespace, OLD)
    wait_for(
        lambda: (
            (
                plane.get_json(
                    "installplan.operators.coreos.com", first["metadata"]["name"], "-n", namespace
                ).get("status")
                or {}
            ).get("phase")
            == "RequiresApproval"
        ),
        what="RequiresApproval",
    )
    first = plane.get_json(
        "installplan.operators.coreos.com", first["metadata"]["name"], "-n", namespace
    )
    kinds = [step["resource"]["kind"] for step in first["status"]["plan"]]
    assert kinds == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ]
    assert first["spec"]["approval"] == "Manual" and first["spec"]["approved"] is False
    assert [o["name"] for o in first["metadata"]["ownerReferences"]] == ["memcached"]
    columns = plane.kubectl(
        "get", "installplan.operators.coreos.com", "-n", namespace
    ).stdout.splitlines()
    assert columns[0].split() == ["NAME", "CSV", "APPROVAL", "APPROVED"] and columns[1].split()[
        1:
    ] == [OLD, "Manual", "false"]
    assert phase(plane, namespace, OLD) == "absent", "nothing is installed before approval"

    # 2. Approved: 0.0.1 installs.
    approve(plane, namespace, first)
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded",
    )
    wait_for(
        lambda: (
            (
                plane.get_json(
                    "installplan.operators.coreos.com", first["metadata"]["name"], "-n", namespace
                )["status"]
            ).get("phase")
            == "Complete"
        ),
        what="plan Complete",
    )

    # 3. installedCSV and currentCSV; the next hop waits for approval (UpgradePending).
    second = plan_for(plane, namespace, NEW)
    status = wait_for(
        lambda: (s := subscription(plane, namespace)["status"]).get("currentCSV") == NEW and s,
        what="currentCSV 0.0.2",
    )
    assert status["installedCSV"] == OLD and status["state"] == "UpgradePending"
    assert status["installPlanRef"]["name"] == second["metadata"]["name"]
    assert second["spec"]["approved"] is False

    for name, size in (("cache-a", 2),):
        plane.kubectl(
            "apply",
            "-n",
            namespace,
            "-f",
            "-",
            stdin=json.dumps(
                {
                    "apiVersion": "cache.example.com/v1alpha1",
                    "kind": "Memcached",
                    "metadata": {"name": name},
                    "spec": {"size": size},
                }
            ),
        )
    wait_for(
        lambda: (
            len(
                (plane.get_json("memcached", "cache-a", "-n", namespace).get("status") or {}).get(
                    "nodes"
                )
                or []
            )
            == 2
        ),
        what="operand running",
    )
    before = {
        i["metadata"]["name"]: i["metadata"]["uid"]
        for kind in ("memcached", "deployment")
        for i in plane.get_json(kind, "-n", namespace, "-l", "app=memcached")["items"]
        if kind == "deployment"
    }
    before["cache-a"] = plane.get_json("memcached", "cache-a", "-n", namespace)["metadata"]["uid"]

    # 4. Approved: 0.0.2 installs, 0.0.1 goes away, operands untouched, AtLatestKnown.
    approve(plane, namespace, second)
    wait_for(
        lambda: (
            phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded"
            and phase(plane, namespace, OLD) == "absent"
        ),
        timeout=STEP_TIMEOUT,
        what="upgrade done",
    )
    final = wait_for(
        lambda: (
            (s := subscription(plane, namespace)["status"]).get("state") == "AtLatestKnown" and s
        ),
        what="AtLatestKnown",
    )
    assert final["installedCSV"] == NEW == final["currentCSV"]
    after = {
        i["metadata"]["name"]: i["metadata"]["uid"]
        for i in plane.get_json("deployment", "-n", namespace, "-l", "app=memcached")["items"]
    }
    after["cache-a"] = plane.get_json("memcached", "cache-a", "-n", namespace)["metadata"]["uid"]
    assert after == before
    labels = subscription(plane, namespace)["metadata"]["labels"]
    assert f"operators.coreos.com/memcached-operator.{namespace}" in labels
    health = {c["type"]: c for c in subscription(plane, namespace)["status"]["conditions"]}[
        "CatalogSourcesUnhealthy"
    ]
    assert (health["status"], health["reason"]) == ("False", "AllCatalogSourcesHealthy")
    wait_for(
        lambda: (
            plane.get_json("memcached", "cache-a", "-n", namespace)["status"].get("reconciledBy")
            == "0.0.2"
        ),
        what="0.0.2 reconciling",
    )
    assert len(plans(plane, namespace)) == 2, "no duplicate InstallPlans"


def test_automatic_approval_reaches_the_channel_head(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", startingCSV=OLD)
    wait_for(
        lambda: phase(control_plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{NEW} Succeeded",
    )
    final = wait_for(
        lambda: (
            (s := subscription(control_plane, namespace)["status"]).get("state") == "AtLatestKnown"
            and s
        ),
        what="AtLatestKnown",
    )
    assert final["installedCSV"] == NEW
    # The replaced CSV goes after its successor Succeeded, in its own time (its finalizer).
    wait_for(
        lambda: phase(control_plane, namespace, OLD) == "absent",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} deleted",
    )


def test_a_dependency_is_installed_too(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", name="memcached-dashboard", name_="dashboard")
    wait_for(
        lambda: (
            phase(control_plane, namespace, "memcached-dashboard.v0.1.0")
            == "Succeeded/InstallSucceeded"
        ),
        timeout=STEP_TIMEOUT,
        what="dashboard Succeeded",
    )
    # The package it depends on is installed too: by the same plan, but its own rollout may
    # end after the dashboard's.
    wait_for(
        lambda: phase(control_plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"the dependency {NEW} Succeeded",
    )
    plan = plan_for(control_plane, namespace, "memcached-dashboard.v0.1.0")
    assert set(plan["spec"]["clusterServiceVersionNames"]) == {"memcached-dashboard.v0.1.0", NEW}


def test_a_missing_package_is_explained(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", name="memcache-operator")

    def failed() -> dict[str, Any] | None:
        conditions = (subscription(control_plane, namespace).get("status") or {}).get(
            "conditions"
        ) or []
        return next((c for c in conditions if c["type"] == "ResolutionFailed"), None)

    condition = wait_for(failed, what="ResolutionFailed")
    assert condition["status"] == "True" and condition["reason"] == "ConstraintsNotSatisfiable"
    assert 'catalog "olm/samples" has no package "memcache-operator"' in condition["message"]
    assert "Fix spec.name" in condition["message"]
    assert plans(control_plane, namespace) == []


def test_a_pending_plan_deleted_before_approval_is_replaced(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Manual", startingCSV=OLD)
    first = plan_for(control_plane, namespace, OLD)
    control_plane.kubectl(
        "delete", "installplan.operators.coreos.com", first["metadata"]["name"], "-n", namespace
    )

    def replaced() -> dict[str, Any] | None:
        return next(
            (
                p
                for p in plans(control_plane, namespace)
                if p["metadata"]["name"] != first["metadata"]["name"]
            ),
            None,
        )

    second = wait_for(replaced, what="a new InstallPlan")
    assert second["spec"]["clusterServiceVersionNames"] == [OLD]
    status = wait_for(
        lambda: (
            (s := subscription(control_plane, namespace)["status"])
            .get("installPlanRef", {})
            .get("name")
            == second["metadata"]["name"]
            and s
        ),
        what="the Subscription to follow the new plan",
    )
    assert status["state"] == "UpgradePending"
    assert not [c for c in status.get("conditions") or [] if c["type"] == "InstallPlanMissing"]


def test_the_story_with_opm_serve_as_the_catalog(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Any
) -> None:
    """The samples catalog served by operator-registry's own `opm serve`, referenced by address."""
    import socket
    import subprocess

    from olm.catalog.samples import CATALOG
    from olm.devcluster.build import ensure_binaries

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        pprof = probe.getsockname()[1]
    opm = subprocess.Popen(
        [
            str(ensure_binaries(build=False).path("opm")),
            "serve",
            str(CATALOG.parent),
            "-p",
            str(port),
            f"--pprof-addr=127.0.0.1:{pprof}",
            f"--termination-log={tmp_path / 'term'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        source = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "opm-samples"},
            "spec": {
                "sourceType": "grpc",
                "address": f"127.0.0.1:{port}",
                "displayName": "samples via opm",
                "publisher": "test",
                "updateStrategy": {"registryPoll": {"interval": "5s"}},
            },
        }
        control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(source))
        wait_for(
            lambda: (
                (
                    (
                        control_plane.get_json("catsrc", "opm-samples", "-n", namespace).get(
                            "status"
                        )
                        or {}
                    ).get("connectionState")
                    or {}
                ).get("lastObservedState")
                == "READY"
            ),
            timeout=STEP_TIMEOUT,
            what="catalog READY",
        )
        operator_group(control_plane, namespace)
        subscribe(
            control_plane,
            namespace,
            "Automatic",
            startingCSV=OLD,
            source="opm-samples",
            sourceNamespace=namespace,
        )
        wait_for(
            lambda: phase(control_plane, namespace, NEW) == "Succeeded/InstallSucceeded",
            timeout=240,
            what=f"{NEW} Succeeded via opm serve",
        )
        final = wait_for(
            lambda: (
                (s := subscription(control_plane, namespace)["status"]).get("state")
                == "AtLatestKnown"
                and s
            ),
            what="AtLatestKnown",
        )
        assert final["installedCSV"] == NEW
        plan = plan_for(control_plane, namespace, OLD)
        assert plan["status"]["catalogSources"] == ["opm-samples"]
    finally:
        opm.terminate()
        opm.wait(10)


def test_a_subscription_to_a_catalog_that_does_not_exist_says_so(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", source="no-such-catalog")
    unhealthy = wait_for(
        lambda: (
            (c := condition(control_plane, namespace, "CatalogSourcesUnhealthy"))
            and c["status"] == "True"
            and c
        ),
        what="CatalogSourcesUnhealthy",
    )
    assert unhealthy["reason"] == "UnhealthyCatalogSourceFound"
    assert unhealthy["message"] == "targeted catalogsource olm/no-such-catalog missing"
    failed = wait_for(
        lambda: condition(control_plane, namespace, "ResolutionFailed"), what="ResolutionFailed"
    )
    assert "Fix spec.source" in failed["message"]
    assert plans(control_plane, namespace) == []


def test_a_plan_waiting_for_approval_shows_as_install_plan_pending(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD)
    first = plan_for(plane, namespace, OLD)
    pending = wait_for(
        lambda: (
            (c := condition(plane, namespace, "InstallPlanPending"))
            and c["reason"] == "RequiresApproval"
            and c
        ),
        what="InstallPlanPending/RequiresApproval",
    )
    # OLM's message: the plan's own, none while it waits (scripts match it exactly).
    assert pending["status"] == "True" and not pending.get("message")
    assert subscription(plane, namespace)["status"]["state"] == "UpgradePending"
    approve(plane, namespace, first)
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded",
    )
    # The next hop waits for approval again, and says so about its own plan.
    second = plan_for(plane, namespace, NEW)
    wait_for(
        lambda: (
            subscription(plane, namespace)["status"].get("installPlanRef", {}).get("name")
            == second["metadata"]["name"]
            and (condition(plane, namespace, "InstallPlanPending") or {}).get("reason")
            == "RequiresApproval"
        ),
        what="InstallPlanPending for the 0.0.2 plan",
    )
    assert [p["spec"]["clusterServiceVersionNames"] for p in plans(plane, namespace)].count(
        [OLD]
    ) == 1


def test_a_plan_created_just_before_olm_stopped_is_adopted_after_the_restart(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    """olm-py created an InstallPlan and stopped before writing its status (and before the
    Subscription pointed at it). After the restart that plan is used: it gets its steps and
    runs; no second plan is made for the same CSV."""
    plane = control_plane
    operator_group(plane, namespace)
    olm_operator.stop()
    try:
        subscribe(plane, namespace, "Automatic", startingCSV=OLD)
        uid = subscription(plane, namespace)["metadata"]["uid"]
        left = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "InstallPlan",
            "metadata": {
                "name": "install-left1",
                "ownerReferences": [
                    {
                        "apiVersion": "operators.coreos.com/v1alpha1",
                        "kind": "Subscription",
                        "name": "memcached",
                        "uid": uid,
                        "controller": False,
                        "blockOwnerDeletion": False,
                    }
                ],
            },
            "spec": {
                "clusterServiceVersionNames": [OLD],
                "approval": "Automatic",
                "approved": True,
                "generation": 1,
            },
        }
        plane.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(left))
    finally:
        olm_operator.start()
    wait_for(
        lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{NEW} Succeeded after the restart",
    )
    adopted = plane.get_json("installplan.operators.coreos.com", "install-left1", "-n", namespace)
    assert adopted["status"]["phase"] == "Complete"
    assert adopted["status"]["plan"][0]["resource"]["kind"] == "ClusterServiceVersion"
    names = [p["spec"]["clusterServiceVersionNames"] for p in plans(plane, namespace)]
    assert names.count([OLD]) == 1 and names.count([NEW]) == 1, names
    assert all(p.get("status", {}).get("phase") for p in plans(plane, namespace))
