"""Who may install what (issue 25, opt-in): the cluster admin runs olm with
`--admin-namespaces` naming one admin namespace. A tenant subscribes to a bundle whose CSV asks
for cluster-wide `get,list` on `secrets`: the InstallPlan fails naming the rule and the fix,
nothing of it is created, and the Subscription says so. The same Subscription in the admin
namespace installs. A tenant namespace whose OperatorGroup installs as a ServiceAccount that
lacks rights the (unmodified) operator needs: the plan stays Installing and lists them; once
the admin grants them, it installs with no other nudge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.catalog_server import Server, catalog_source
from tests.support.cluster import (
    SESSION_ID,
    SESSION_LABEL,
    STEP_TIMEOUT,
    ControlPlane,
    namespace_report,
    wait_for,
)
from tests.support.olm_run import OlmOperator
from tests.support.stories import exists, operator_group, wait_phase, write_first_bundle_catalog
from tests.support.subscriptions import plan_for, subscribe, subscription

pytestmark = pytest.mark.e2e

V1 = "memcached-operator.v0.0.1"
INSTALL_PLAN = "installplan.operators.coreos.com"
SECRETS_RULE = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
RULE = (
    f"ClusterServiceVersion {V1} spec.install.spec.clusterPermissions[0].rules[0]: "
    "cluster-wide get,list on secrets"
)


def ask_for_secrets(csv: dict[str, Any]) -> None:
    install = csv["spec"]["install"]["spec"]
    install["clusterPermissions"] = [
        {"serviceAccountName": "memcached-operator", "rules": [SECRETS_RULE]}
    ]


@pytest.fixture
def more_namespaces(control_plane: ControlPlane) -> Iterator[list[str]]:
    """Fresh namespaces the story creates (an admin's, another tenant's), deleted after it."""
    made: list[str] = []
    yield made
    for name in made:
        control_plane.kubectl("delete", "namespace", name, "--wait=false", check=False)


def new_namespace(plane: ControlPlane, made: list[str], name: str) -> str:
    plane.kubectl("create", "namespace", name)
    plane.kubectl("label", "namespace", name, f"{SESSION_LABEL}={SESSION_ID}")
    made.append(name)
    return name


def apply(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> None:
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(obj))


def plan_status(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    status: dict[str, Any] = plane.get_json(INSTALL_PLAN, name, "-n", namespace).get("status") or {}
    return status


def test_tenants_may_not_install_what_only_an_admin_may_give(
    control_plane: ControlPlane,
    restore_olm: OlmOperator,
    namespace: str,
    more_namespaces: list[str],
    tmp_path: Path,
) -> None:
    plane = control_plane
    tenant = namespace
    admin = new_namespace(plane, more_namespaces, f"{namespace}-admin")
    restore_olm.restart(f"--admin-namespaces={admin}")
    write_first_bundle_catalog(tmp_path, change_csv=ask_for_secrets)
    server = Server(tmp_path)
    server.start()
    try:
        # A tenant subscribes to the bundle asking for cluster-wide secrets.
        for ns in (tenant, admin):
            catalog_source(plane, ns, server.port)
            operator_group(plane, ns)
        subscribe(
            plane, tenant, "Automatic", source="updating", sourceNamespace=tenant, startingCSV=V1
        )
        name = plan_for(plane, tenant, V1)["metadata"]["name"]
        status = wait_for(
            lambda: s if (s := plan_status(plane, tenant, name)).get("phase") == "Failed" else None,
            timeout=STEP_TIMEOUT,
            what="the tenant's plan to fail",
        )
        message = status["message"]
        assert RULE in message
        assert (
            f"namespace {tenant} is not an admin namespace (--admin-namespaces {admin})" in message
        )
        assert "Install the operator from an admin namespace" in message
        assert (
            f"add {tenant} to olm run --admin-namespaces (chart value adminNamespaces)" in message
        )
        installed = next(c for c in status["conditions"] if c["type"] == "Installed")
        assert (installed["status"], installed["reason"]) == ("False", "InstallComponentFailed")
        # Nothing of it exists: no CSV, no ServiceAccount, no ClusterRole of the bundle.
        assert not exists(plane, "csv", V1, "-n", tenant)
        assert not exists(plane, "serviceaccount", "memcached-operator", "-n", tenant)
        assert not plane.get_json(
            "clusterrole", "-l", f"olm.owner={V1},olm.owner.namespace={tenant}"
        )["items"]
        wait_for(
            lambda: any(
                c["type"] == "InstallPlanFailed" and RULE in c.get("message", "")
                for c in subscription(plane, tenant)["status"].get("conditions") or []
            ),
            timeout=STEP_TIMEOUT,
            what="InstallPlanFailed on the tenant's Subscription, naming the rule",
        )

        # The same from the admin namespace installs, cluster rule and all.
        subscribe(
            plane, admin, "Automatic", source="updating", sourceNamespace=admin, startingCSV=V1
        )
        try:
            wait_phase(plane, admin, V1, "Succeeded/InstallSucceeded")
        except AssertionError:
            print(namespace_report(plane, admin))  # the fixture reports the tenant's only
            raise
    finally:
        server.stop()

    # Another tenant's group installs as a ServiceAccount whose Role forgets the apps group:
    # the unmodified 0.0.1 (no cluster rules) waits, listing what the account lacks.
    scoped = new_namespace(plane, more_namespaces, f"{namespace}-scoped")
    plane.kubectl("create", "serviceaccount", "installer", "-n", scoped)
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": "installer"},
        "rules": [
            {
                "apiGroups": ["", "rbac.authorization.k8s.io", "cache.example.com"],
                "resources": ["*"],
                "verbs": ["*"],
            },
            {"apiGroups": ["operators.coreos.com"], "resources": ["*"], "verbs": ["*"]},
        ],
    }
    apply(plane, scoped, role)
    plane.kubectl(
        "create",
        "rolebinding",
        "installer",
        "--role=installer",
        f"--serviceaccount={scoped}:installer",
        "-n",
        scoped,
    )
    apply(
        plane,
        scoped,
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og"},
            "spec": {"targetNamespaces": [scoped], "serviceAccountName": "installer"},
        },
    )
    # Manual, approved at once: the story is about 0.0.1 (0.0.2 would wait for approval).
    subscribe(plane, scoped, "Manual", startingCSV=V1)
    name = plan_for(plane, scoped, V1)["metadata"]["name"]
    plane.kubectl(
        "patch",
        INSTALL_PLAN,
        name,
        "-n",
        scoped,
        "--type=merge",
        "-p",
        '{"spec":{"approved":true}}',
    )
    lacking = f"get,list,watch,create,update,patch on deployments.apps in namespace {scoped}"
    status = wait_for(
        lambda: (
            s if lacking in (s := plan_status(plane, scoped, name)).get("message", "") else None
        ),
        timeout=STEP_TIMEOUT,
        what="the scoped plan to list what its ServiceAccount lacks",
    )
    assert status["phase"] == "Installing"
    assert (
        f"ServiceAccount {scoped}/installer (spec.serviceAccountName of OperatorGroup og)"
        in (status["message"])
    )
    assert "pods" not in status["message"]  # it holds those
    assert not exists(plane, "csv", V1, "-n", scoped)

    # The admin grants them; the plan installs by itself.
    plane.kubectl(
        "create", "role", "installer-apps", "--verb=*", "--resource=deployments.apps", "-n", scoped
    )
    plane.kubectl(
        "create",
        "rolebinding",
        "installer-apps",
        "--role=installer-apps",
        f"--serviceaccount={scoped}:installer",
        "-n",
        scoped,
    )
    wait_phase(plane, scoped, V1, "Succeeded/InstallSucceeded")
    assert plan_status(plane, scoped, name)["phase"] == "Complete"
