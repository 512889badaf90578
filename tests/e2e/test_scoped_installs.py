"""Scoped installs: an admin lets a namespace's operators be installed only with the rights of
a ServiceAccount (OperatorGroup `spec.serviceAccountName`), as with OLM v0.

The story: the group names a ServiceAccount that does not exist yet (the group and the
InstallPlan say so); the admin creates it with a Role that forgets ClusterServiceVersions; the
InstallPlan says exactly which verb, resource and namespace are missing and how to grant them;
the admin runs the suggested kubectl commands, and the operator installs with no other nudge."""

from __future__ import annotations

import json
from typing import Any

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import wait_phase

CSV = "memcached-operator.v0.0.1"
INSTALLER = "installer"


def apply(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> None:
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(obj))


def group_status(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    status: dict[str, Any] = (
        plane.get_json("operatorgroup", "og", "-n", namespace).get("status") or {}
    )
    return status


def the_plan(plane: ControlPlane, namespace: str) -> dict[str, Any] | None:
    items = plane.get_json("installplan.operators.coreos.com", "-n", namespace)["items"]
    return next((p for p in items if CSV in p["spec"]["clusterServiceVersionNames"]), None)


def test_a_scoped_group_installs_with_its_service_account_s_rights_only(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    apply(
        plane,
        namespace,
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og"},
            "spec": {"targetNamespaces": [namespace], "serviceAccountName": INSTALLER},
        },
    )
    # The ServiceAccount does not exist: the group says so, and how to fix it.
    condition = wait_for(
        lambda: next(
            (
                c
                for c in group_status(plane, namespace).get("conditions") or []
                if c["type"] == "OperatorGroupServiceAccount"
            ),
            None,
        ),
        what="the OperatorGroupServiceAccount condition",
    )
    assert (condition["status"], condition["reason"]) == ("True", "ServiceAccountNotFound")
    assert condition["message"].startswith(f"ServiceAccount {INSTALLER} not found")
    assert f"kubectl create serviceaccount {INSTALLER} -n {namespace}" in condition["message"]

    apply(
        plane,
        namespace,
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": "memcached"},
            "spec": {
                "name": "memcached-operator",
                "channel": "alpha",
                "source": "samples",
                "sourceNamespace": "olm",
                "startingCSV": CSV,
                # Manual: the story is about 0.0.1; the upgrade to 0.0.2 waits for approval.
                "installPlanApproval": "Manual",
            },
        },
    )
    plan = wait_for(
        lambda: the_plan(plane, namespace), timeout=STEP_TIMEOUT, what="the InstallPlan"
    )
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

    # The InstallPlan waits, and says why.
    def check_failed() -> dict[str, Any] | None:
        plan = the_plan(plane, namespace)
        conditions = ((plan or {}).get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c.get("reason") == "InstallCheckFailed"), None)

    waiting = wait_for(
        check_failed, timeout=STEP_TIMEOUT, what="the InstallPlan's InstallCheckFailed"
    )
    assert waiting["message"].startswith(
        f"please make sure the service account exists. sa={INSTALLER} operatorgroup={namespace}/og"
    )
    assert plane.kubectl("get", "csv", CSV, "-n", namespace, check=False).returncode != 0

    # The admin creates it, with a Role that forgets ClusterServiceVersions.
    plane.kubectl("create", "serviceaccount", INSTALLER, "-n", namespace)
    apply(
        plane,
        namespace,
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "installer"},
            "rules": [
                {
                    "apiGroups": ["", "apps", "rbac.authorization.k8s.io", "cache.example.com"],
                    "resources": ["*"],
                    "verbs": ["*"],
                }
            ],
        },
    )
    plane.kubectl(
        "create",
        "rolebinding",
        "installer",
        "--role=installer",
        f"--serviceaccount={namespace}:{INSTALLER}",
        "-n",
        namespace,
    )
    ref = wait_for(
        lambda: group_status(plane, namespace).get("serviceAccountRef"),
        what="status.serviceAccountRef",
    )
    sa_uid = plane.get_json("serviceaccount", INSTALLER, "-n", namespace)["metadata"]["uid"]
    assert ref == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "namespace": namespace,
        "name": INSTALLER,
        "uid": sa_uid,
    }
    assert not [
        c
        for c in group_status(plane, namespace).get("conditions") or []
        if c["type"] == "OperatorGroupServiceAccount"
    ]

    # The plan now acts as the ServiceAccount, and says exactly what it may not do.
    def refused() -> str | None:
        status = (the_plan(plane, namespace) or {}).get("status") or {}
        message = str(status.get("message") or "")
        return message if "may not" in message else None

    message = wait_for(refused, timeout=STEP_TIMEOUT, what="the InstallPlan's Forbidden message")
    plan = the_plan(plane, namespace)
    assert plan is not None
    assert plan["status"]["phase"] == "Installing"
    assert plan["status"]["attenuatedServiceAccountRef"]["name"] == INSTALLER
    assert not any(
        c.get("reason") == "InstallCheckFailed" for c in plan["status"].get("conditions") or []
    )
    who = f"ServiceAccount {namespace}/{INSTALLER} (spec.serviceAccountName of OperatorGroup og)"
    assert message.startswith("retrying execution due to error: step ClusterServiceVersion")
    assert (
        f"{who} may not create clusterserviceversions.operators.coreos.com in namespace "
        f"{namespace}: " in message
    )
    # The API server's own words are there too (OLM's e2e suite looks for them).
    assert (
        'cannot create resource "clusterserviceversions" in API group "operators.coreos.com" '
        f'in the namespace "{namespace}". Grant it, e.g.: kubectl create role' in message
    )
    assert plane.kubectl("get", "csv", CSV, "-n", namespace, check=False).returncode != 0

    # The admin runs the suggested commands; nothing else.
    fix = message.split("Grant it, e.g.: ", 1)[1].split(". The InstallPlan", 1)[0]
    for command in fix.split(" && "):
        words = command.split()
        assert words[0] == "kubectl"
        plane.kubectl(*words[1:])

    wait_for(
        lambda: ((the_plan(plane, namespace) or {}).get("status") or {}).get("phase") == "Complete",
        timeout=STEP_TIMEOUT,
        what="the InstallPlan Complete",
    )
    wait_phase(plane, namespace, CSV, "Succeeded/InstallSucceeded")
    done = the_plan(plane, namespace)
    assert done is not None and "message" not in done["status"]
    # olm-py granted nothing beyond what the CSV asks for: the operator's ServiceAccount has
    # its Role only.
    operator_sa = f"system:serviceaccount:{namespace}:memcached-operator"
    for who_, verb, resource, expected in (
        (operator_sa, "list", "pods", True),
        (operator_sa, "create", "pods", False),
        (operator_sa, "list", "secrets", False),
    ):
        result = plane.kubectl(
            "auth", "can-i", f"--as={who_}", verb, resource, "-n", namespace, check=False
        )
        assert (result.stdout.strip() == "yes") is expected, (who_, verb, resource)
