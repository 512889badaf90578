"""`olm explain` on six stuck states (issue 26): an operator waiting for Manual approval, a CSV
missing a CRD, a Subscription to a catalog that does not exist, a dependency no catalog
provides, two OperatorGroups providing the same API, and a failed InstallPlan. Each time the
user runs `olm explain` as they would, it names the cause and the command that fixes it; where
the fix is a plain command, the story runs it and the operator moves on."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import (
    apply,
    minimal_csv,
    operator_group,
    phase,
    subscribed_to_first_bundle,
    wait_phase,
)
from tests.support.subscriptions import condition, plan_for, subscribe, subscription
from tests.support.widgets import API, admission_policy, provided, widget_operator

pytestmark = pytest.mark.e2e

OLD = "memcached-operator.v0.0.1"
INSTALL_PLAN = "installplan.operators.coreos.com"


def olm_explain(
    plane: ControlPlane, namespace: str, target: str
) -> tuple[int, str, dict[str, Any]]:
    """`olm explain TARGET -n NAMESPACE` as text, and again with `-o json`: (exit status, text,
    the JSON)."""

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "olm.cli", "explain", target, "-n", namespace, *extra],
            capture_output=True,
            text=True,
            env=plane.env(),
            timeout=120,
        )

    text, as_json = run(), run("-o", "json")
    # Shown with the failure (and with -s): what the user read.
    print(f"$ olm explain {target} -n {namespace}  (exit {text.returncode})\n{text.stdout}")
    assert text.returncode == as_json.returncode, (text.stderr, as_json.stderr)
    return text.returncode, text.stdout, json.loads(as_json.stdout)


def commands(explained: dict[str, Any]) -> list[str]:
    return [fix["command"] for fix in explained["fixes"] if fix["command"]]


def run_fix(plane: ControlPlane, command: str) -> None:
    """Run a fix `olm explain` printed, in a shell, as the user would paste it."""
    result = subprocess.run(
        command, shell=True, capture_output=True, text=True, env=plane.env(), timeout=120
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}{result.stderr}"


def plan_phase(plane: ControlPlane, namespace: str, name: str) -> str:
    return str(
        (plane.get_json(INSTALL_PLAN, name, "-n", namespace).get("status") or {}).get("phase")
    )


def test_manual_approval_pending_is_explained_and_the_fix_approves_it(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD)
    name = plan_for(plane, namespace, OLD)["metadata"]["name"]
    wait_for(lambda: plan_phase(plane, namespace, name) == "RequiresApproval", what="approval")

    status, text, explained = olm_explain(plane, namespace, "sub/memcached")
    assert status == 1, text
    assert text.splitlines()[0].startswith("Subscription memcached [UpgradePending]")
    assert f"-> InstallPlan {name} [RequiresApproval]: waits for approval (Manual)" in text
    assert explained["verdict"] == "problem"
    assert [(c["kind"], c["name"]) for c in explained["chain"]] == [
        ("Subscription", "memcached"),
        ("InstallPlan", name),
    ]
    approve = (
        f"kubectl patch installplan {name} -n {namespace} --type=merge "
        """-p '{"spec":{"approved":true}}'"""
    )
    assert commands(explained) == [approve]
    assert f"fix: approve it: {approve}" in text

    run_fix(plane, approve)
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")
    status, text, explained = olm_explain(plane, namespace, "csv/" + OLD)
    assert (status, explained["healthy"]) == (0, True), text
    assert text == f"healthy: CSV {OLD} Succeeded: its operator is installed and running\n"
    assert olm_explain(plane, namespace, "operatorgroup/og")[0] == 0


def test_a_csv_missing_a_crd_no_installed_csv_owns(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    crd = "widgets.explain.example.com"
    operator_group(plane, namespace)
    needs = minimal_csv(
        "needs-widgets.v1",
        customresourcedefinitions={"required": [{"name": crd, "version": "v1", "kind": "Widget"}]},
    )
    apply(plane, namespace, needs)
    wait_phase(plane, namespace, "needs-widgets.v1", "Pending/RequirementsNotMet")

    status, text, explained = olm_explain(
        plane, namespace, "clusterserviceversion/needs-widgets.v1"
    )
    assert status == 1, text
    assert f"-> CustomResourceDefinition {crd} [missing]" in text
    assert (
        explained["cause"]
        == f"CSV needs-widgets.v1 requires CRD {crd}, which no installed CSV owns"
    )
    assert f"kubectl apply -f <file with CustomResourceDefinition {crd}>" in commands(explained)


def test_a_subscription_to_a_missing_catalog_is_pointed_at_one_that_exists(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source="no-such-catalog", startingCSV=OLD)
    wait_for(
        lambda: (
            (condition(plane, namespace, "CatalogSourcesUnhealthy") or {}).get("status") == "True"
        ),
        what="CatalogSourcesUnhealthy",
    )

    status, text, explained = olm_explain(plane, namespace, "subscriptions/memcached")
    assert status == 1, text
    assert "-> CatalogSource no-such-catalog (namespace olm) [missing]" in text
    assert explained["cause"].startswith(
        "CatalogSource no-such-catalog does not exist in namespace olm"
    )
    repoint = (
        f"kubectl patch subscription memcached -n {namespace} --type=merge "
        """-p '{"spec":{"source":"samples","sourceNamespace":"olm"}}'"""
    )
    assert repoint in commands(explained)

    run_fix(plane, repoint)
    # Resolved now: it installs 0.0.1, then (Automatic) upgrades along the channel.
    wait_for(
        lambda: (subscription(plane, namespace).get("status") or {}).get("installedCSV"),
        timeout=STEP_TIMEOUT,
        what="an installed CSV",
    )


def test_a_dependency_no_catalog_provides(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane

    def require_gizmos(csv: dict[str, Any]) -> None:
        definitions = csv["spec"].setdefault("customresourcedefinitions", {})
        definitions["required"] = [
            {"name": "gizmos.explain.example.com", "version": "v1", "kind": "Gizmo"}
        ]

    with subscribed_to_first_bundle(plane, namespace, tmp_path, change_csv=require_gizmos):
        wait_for(
            lambda: condition(plane, namespace, "ResolutionFailed"),
            timeout=STEP_TIMEOUT,
            what="ResolutionFailed",
        )
        status, text, explained = olm_explain(plane, namespace, "sub/memcached")
    assert status == 1, text
    assert "cannot be resolved (ResolutionFailed: ConstraintsNotSatisfiable)" in text
    assert "requires API Gizmo.v1.explain.example.com" in explained["cause"]
    first = explained["fixes"][0]
    assert "providing API Gizmo.v1.explain.example.com" in first["what"]
    assert '"kind":"CatalogSource"' in first["command"]
    assert first["command"].endswith(f"kubectl apply -n {namespace} -f -")


def test_overlapping_operator_groups_providing_the_same_api(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    other = f"t-other-{uuid.uuid4().hex[:6]}"
    plane.kubectl("create", "namespace", other)
    try:
        operator_group(plane, namespace, targets=[namespace, other])
        operator_group(plane, other, targets=[other])
        apply(plane, namespace, widget_operator("widgets-a.v1"))
        wait_for(lambda: provided(plane, namespace) == API, what="the first group's API")
        apply(plane, other, widget_operator("widgets-b.v1"))
        wait_phase(plane, other, "widgets-b.v1", "Failed/InterOperatorGroupOwnerConflict")

        status, text, explained = olm_explain(plane, other, "csv/widgets-b.v1")
        assert status == 1, text
        assert f"-> OperatorGroup og (namespace {namespace}) [provides {API}]" in text
        assert explained["cause"].startswith(f"OperatorGroup {namespace}/og already provides {API}")
        narrow = (
            f"kubectl patch operatorgroup og -n {namespace} --type=merge "
            f"""-p '{{"spec":{{"targetNamespaces":["{namespace}"]}}}}'"""
        )
        remove = f"kubectl delete clusterserviceversion widgets-a.v1 -n {namespace}"
        assert commands(explained) == [narrow, remove]
        assert olm_explain(plane, other, "og/og")[2]["cause"] == explained["cause"]

        run_fix(plane, remove)
        wait_for(
            lambda: phase(plane, other, "widgets-b.v1").startswith("Pending/"),
            timeout=STEP_TIMEOUT,
            what="the second operator out of its conflict",
        )
    finally:
        plane.kubectl("delete", "namespace", other, "--wait=false", "--ignore-not-found")


def test_a_failed_install_plan_names_its_cause_and_how_to_retry(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane
    policy = f"olm-py-explain-{namespace}"
    try:
        with subscribed_to_first_bundle(plane, namespace, tmp_path, (admission_policy(policy),)):
            name = plan_for(plane, namespace, OLD)["metadata"]["name"]
            wait_for(
                lambda: plan_phase(plane, namespace, name) == "Failed",
                timeout=STEP_TIMEOUT,
                what="the plan to fail",
            )
            status, text, explained = olm_explain(plane, namespace, "sub/memcached")
            by_plan = olm_explain(plane, namespace, f"ip/{name}")[2]
    finally:
        plane.kubectl("delete", "validatingadmissionpolicies", policy, "--ignore-not-found")
    assert status == 1, text
    assert f"-> InstallPlan {name} [Failed/InstallComponentFailed]" in text
    assert f"ValidatingAdmissionPolicy {policy} (UnsupportedResource)" in text
    assert "--allow-bundle-kind ValidatingAdmissionPolicy" in explained["cause"]
    assert commands(explained) == [f"kubectl delete installplan {name} -n {namespace}"]
    assert by_plan["cause"] == explained["cause"] and by_plan["chain"][0]["kind"] == "InstallPlan"


def test_what_is_not_there_is_a_usage_error(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "olm.cli", "explain", "sub/nothing", "-n", namespace],
        capture_output=True,
        text=True,
        env=control_plane.env(),
        timeout=120,
    )
    assert result.returncode == 2
    assert f"Subscription nothing not found in namespace {namespace}" in result.stderr
    assert f"kubectl get subscription -n {namespace}" in result.stderr
