"""Catalog changes reach Subscriptions: a new channel head is picked up on the next poll, and a
bundle whose `olm.skipRange` covers the installed version is reached in one hop."""

from __future__ import annotations

import json
from typing import Any

from tests.support.catalog_server import (
    V1,
    V2,
    V3,
    Server,
    catalog_source,
    write_catalog,
)
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import approve, plan_for, subscribe, subscription


def test_a_new_channel_head_upgrades_the_subscription(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, served: Server
) -> None:
    write_catalog(served.directory, with_v3=False)
    served.start()
    catalog_source(control_plane, namespace, served.port)
    operator_group(control_plane, namespace)
    subscribe(control_plane, namespace, "Automatic", source="updating", sourceNamespace=namespace)
    wait_for(
        lambda: (
            (subscription(control_plane, namespace).get("status") or {}).get("installedCSV") == V2
        ),
        timeout=STEP_TIMEOUT,
        what="0.0.2 installed",
    )
    served.stop()
    write_catalog(served.directory, with_v3=True)
    served.start()
    wait_for(
        lambda: phase(control_plane, namespace, V3) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what="0.0.3 from the updated catalog",
    )
    wait_for(
        lambda: (subscription(control_plane, namespace)["status"]).get("installedCSV") == V3,
        what="installedCSV 0.0.3",
    )
    # The replaced CSV goes after its successor Succeeded, in its own time (its finalizer).
    wait_for(
        lambda: phase(control_plane, namespace, V2) == "absent",
        timeout=STEP_TIMEOUT,
        what=f"{V2} deleted",
    )


def test_skip_range_is_taken_in_one_hop(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, served: Server
) -> None:
    write_catalog(served.directory, with_v3=True, skip_range=">=0.0.1 <0.0.3")
    served.start()
    catalog_source(control_plane, namespace, served.port)
    operator_group(control_plane, namespace)
    subscribe(
        control_plane,
        namespace,
        "Manual",
        startingCSV=V1,
        source="updating",
        sourceNamespace=namespace,
    )
    approve(control_plane, namespace, plan_for(control_plane, namespace, V1))
    wait_for(
        lambda: phase(control_plane, namespace, V1) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what="0.0.1 installed",
    )
    next_plan = wait_for(
        lambda: next(
            (
                p
                for p in control_plane.get_json(
                    "installplan.operators.coreos.com", "-n", namespace
                )["items"]
                if V1 not in p["spec"]["clusterServiceVersionNames"]
                # Created first, its steps written after: wait for them.
                and (p.get("status") or {}).get("plan")
            ),
            None,
        ),
        timeout=STEP_TIMEOUT,
        what="the next InstallPlan, with its steps",
    )
    assert next_plan["spec"]["clusterServiceVersionNames"] == [V3], (
        "0.0.3's skipRange covers 0.0.1: one hop, skipping 0.0.2"
    )
    step = json.loads(next_plan["status"]["plan"][0]["resource"]["manifest"])
    assert step["spec"]["replaces"] == V1, "the resolver's edge is written into the CSV step"
    approve(control_plane, namespace, next_plan)
    wait_for(
        lambda: (
            phase(control_plane, namespace, V3) == "Succeeded/InstallSucceeded"
            and phase(control_plane, namespace, V1) == "absent"
        ),
        timeout=STEP_TIMEOUT,
        what="0.0.3 replacing 0.0.1",
    )


def test_an_unknown_catalog_type_and_a_catalog_that_goes_away(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, served: Server
) -> None:
    plane = control_plane
    bogus = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "bogus"},
        "spec": {"sourceType": "helm-repo"},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(bogus))
    status = wait_for(
        lambda: (
            (plane.get_json("catsrc", "bogus", "-n", namespace).get("status") or {}).get("reason")
            and plane.get_json("catsrc", "bogus", "-n", namespace)["status"]
        ),
        what="the bogus source's status",
    )
    assert (
        status["reason"] == "SpecInvalidError"
        and "spec.sourceType 'helm-repo'" in status["message"]
    )

    write_catalog(served.directory, with_v3=False)
    served.start()
    catalog_source(plane, namespace, served.port)
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source="updating", sourceNamespace=namespace)
    wait_for(
        lambda: phase(plane, namespace, V2) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what="0.0.2 installed",
    )
    plane.kubectl("delete", "catsrc", "updating", "-n", namespace)

    def explained() -> str | None:
        conditions = (subscription(plane, namespace).get("status") or {}).get("conditions") or []
        return next((c["message"] for c in conditions if c["type"] == "ResolutionFailed"), None)

    message = wait_for(explained, what="ResolutionFailed after the catalog went away")
    assert 'catalog source "updating"' in message and "does not exist or is not serving" in message
    assert phase(plane, namespace, V2) == "Succeeded/InstallSucceeded", (
        "the installed operator keeps running"
    )


def test_a_crd_update_that_would_reject_existing_instances_fails_with_the_reason(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, served: Server
) -> None:
    plane = control_plane
    write_catalog(served.directory, with_v3=True, strict_crd=True)
    served.start()
    catalog_source(plane, namespace, served.port)
    operator_group(plane, namespace)
    subscribe(
        plane, namespace, "Manual", startingCSV=V2, source="updating", sourceNamespace=namespace
    )
    approve(plane, namespace, plan_for(plane, namespace, V2))
    wait_for(
        lambda: phase(plane, namespace, V2) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what="0.0.2 installed",
    )
    instance = {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "big"},
        "spec": {"size": 5},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(instance))
    upgrade = plan_for(plane, namespace, V3)
    approve(plane, namespace, upgrade)

    def failed() -> dict[str, Any] | None:
        status = (
            plane.get_json(
                "installplan.operators.coreos.com", upgrade["metadata"]["name"], "-n", namespace
            ).get("status")
            or {}
        )
        return status if status.get("phase") == "Failed" else None

    status = wait_for(failed, timeout=STEP_TIMEOUT, what="the InstallPlan to fail")
    assert (
        f'"{namespace}/big": updated validation is too restrictive: spec.size' in status["message"]
    )
    assert status["conditions"][0]["reason"] == "InstallComponentFailed"
    assert phase(plane, namespace, V2) == "Succeeded/InstallSucceeded", (
        "the running version is untouched"
    )
    crd = plane.get_json("crd", "memcacheds.cache.example.com")
    assert (
        "maximum"
        not in crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"
        ]["size"]
    )


def test_a_configmap_catalog_is_read_and_its_plans_explain_unserved_kinds(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    """The legacy ConfigMap catalog fixture: its packages resolve, and its v1beta1 CRDs, which
    Kubernetes no longer serves, fail the InstallPlan with a message that says so."""
    import yaml

    from tests.support.paths import SHARED

    configmap = yaml.safe_load(
        (SHARED / "fixtures" / "configmap-catalog" / "configmap.example.yaml").read_text()
    )
    configmap["metadata"] = {"name": "legacy-catalog", "namespace": namespace}
    control_plane.kubectl("create", "-f", "-", stdin=json.dumps(configmap))
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "legacy"},
        "spec": {"sourceType": "configmap", "configMap": "legacy-catalog"},
    }
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(source))
    operator_group(control_plane, namespace)
    subscribe(
        control_plane,
        namespace,
        "Automatic",
        name="etcd",
        name_="etcd",
        source="legacy",
        sourceNamespace=namespace,
    )
    plan = plan_for(control_plane, namespace, "etcdoperator.v0.9.2")

    def failed() -> dict[str, Any] | None:
        status = (
            control_plane.get_json(
                "installplan.operators.coreos.com", plan["metadata"]["name"], "-n", namespace
            ).get("status")
            or {}
        )
        return status if status.get("phase") == "Failed" else None

    status = wait_for(failed, timeout=STEP_TIMEOUT, what="the plan to fail on v1beta1 CRDs")
    assert (
        "the API server does not serve CustomResourceDefinition in apiextensions.k8s.io/v1beta1"
        in status["message"]
    )
    assert "removed in Kubernetes 1.22" in status["message"]
    wait_for(
        lambda: (
            "InstallPlanFailed"
            in {
                c["type"]
                for c in subscription(control_plane, namespace, "etcd")["status"]["conditions"]
            }
        ),
        what="InstallPlanFailed",
    )
    conditions = {
        c["type"]: c for c in subscription(control_plane, namespace, "etcd")["status"]["conditions"]
    }
    assert conditions["CatalogSourcesUnhealthy"]["status"] == "False"
