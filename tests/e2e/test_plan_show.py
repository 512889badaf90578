"""Upgrade preview (issue 26 item 2; docs/plan-preview.md): before approving a Manual
InstallPlan, `olm plan show` says what it would change against what is installed.

1. The samples' memcached-operator 0.0.1, installed by a Manual Subscription: the first plan is
   a fresh install (every rule granted); the 0.0.2 plan grants and revokes no rule and swaps the
   operator's image; its `olm-py.io/preview-summary` annotation says so too.
2. A crafted 0.0.2 that asks for `secrets` cluster-wide and whose CRD drops v1alpha1, the
   version the stored Memcached uses: the rule is flagged (cluster-wide, sensitive, widens RBAC),
   and so is the CRD, with the InstallPlan's own upgrade safety verdict.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from olm.catalog.model import Bundle
from olm.catalog.registryv1 import bundle_properties
from olm.catalog.render import to_yaml
from olm.catalog.samples import build
from tests.support.catalog_server import Server, catalog_source
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, wait_phase
from tests.support.subscriptions import approve, memcached, plan_for, subscribe

pytestmark = pytest.mark.e2e

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
INSTALL_PLAN = "installplan.operators.coreos.com"
SUMMARY = "olm-py.io/preview-summary"
SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}


def plan_show(plane: ControlPlane, namespace: str, name: str, *args: str) -> str:
    """`olm plan show NAME -n NAMESPACE ARGS` with the test cluster's kubeconfig."""
    command = [sys.executable, "-m", "olm.cli", "plan", "show", name, "-n", namespace]
    result = subprocess.run(
        [*command, "--kubeconfig", str(plane.kubeconfig), *args],
        capture_output=True,
        text=True,
        env=plane.env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def waiting_plan(plane: ControlPlane, namespace: str, csv: str) -> dict[str, Any]:
    """The InstallPlan for `csv`, once it waits for approval."""
    name = plan_for(plane, namespace, csv)["metadata"]["name"]

    def waiting() -> dict[str, Any] | None:
        plan: dict[str, Any] = plane.get_json(INSTALL_PLAN, name, "-n", namespace)
        return plan if (plan.get("status") or {}).get("phase") == "RequiresApproval" else None

    found: dict[str, Any] = wait_for(waiting, timeout=STEP_TIMEOUT, what=f"{name} RequiresApproval")
    return found


def summary_annotation(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    """The plan's olm-py.io/preview-summary annotation, once olm-py has written it."""

    def written() -> str | None:
        plan = plane.get_json(INSTALL_PLAN, name, "-n", namespace)
        return (plan["metadata"].get("annotations") or {}).get(SUMMARY)

    found: dict[str, Any] = json.loads(
        wait_for(written, timeout=STEP_TIMEOUT, what=f"the {SUMMARY} annotation")
    )
    return found


def install_first(plane: ControlPlane, namespace: str, **source: str) -> dict[str, Any]:
    """0.0.1 by a Manual Subscription (its plan previewed and approved); returns the 0.0.2 plan."""
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD, **source)
    first = waiting_plan(plane, namespace, OLD)
    fresh = json.loads(plan_show(plane, namespace, first["metadata"]["name"], "-o", "json"))
    assert fresh["csvs"] == [{"name": OLD, "replaces": None}]
    assert [r["change"] for r in fresh["rbac"]["rules"]] == ["granted"] * 3
    assert "widensRBAC" in fresh["summary"]["flags"]
    assert "clusterWide" not in fresh["summary"]["flags"]
    approve(plane, namespace, first)
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")
    return waiting_plan(plane, namespace, NEW)


def test_the_upgrade_plan_lists_the_image_change_and_no_rbac_change(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    second = install_first(plane, namespace)
    name = second["metadata"]["name"]

    text = plan_show(plane, namespace, name)
    assert (
        f"InstallPlan {namespace}/{name}: RequiresApproval, approval Manual (not approved)" in text
    )
    assert "Summary: nothing flagged" in text
    assert f"  {NEW}: replaces {OLD}" in text
    assert "RBAC (0 granted, 0 revoked, 3 unchanged):" in text
    assert (
        "image: olm-py.local/memcached-operator:0.0.1 -> olm-py.local/memcached-operator:0.0.2"
        in text
    )
    assert f"delete ClusterServiceVersion {namespace}/{OLD}" in text
    assert "approve: kubectl patch installplan" in text

    shown = json.loads(plan_show(plane, namespace, name, "-o", "json"))
    assert shown["summary"]["flags"] == [] and shown["rbac"]["rules"] == []
    assert shown["rbac"]["unchanged"] == 3
    (deployment,) = shown["deployments"]
    assert deployment["name"] == "memcached-operator" and deployment["change"] == "changed"
    assert deployment["containers"][0]["fields"] == [
        {
            "field": "image",
            "from": "olm-py.local/memcached-operator:0.0.1",
            "to": "olm-py.local/memcached-operator:0.0.2",
        }
    ]
    (crd,) = shown["crds"]
    assert crd["safe"] and crd["versionsRemoved"] == []

    # The plan itself carries the summary (olm-py wrote it when it was made).
    # Created and updated are counted when the plan was made (the ServiceAccount 0.0.1's plan
    # was writing may not have existed yet); the rest is the same as the command's.
    annotated = summary_annotation(plane, namespace, name)
    for counts in (annotated, shown["summary"]):
        assert counts.pop("created") + counts.pop("updated") == 5
    assert annotated == shown["summary"]


def write_crafted_catalog(directory: Path) -> None:
    """The samples catalog whose 0.0.2 asks for secrets cluster-wide and whose CRD serves
    v1beta1 only (v1alpha1, the stored version, dropped)."""
    catalog = build()
    package = catalog.packages["memcached-operator"]
    objects = copy.deepcopy(package.bundles[NEW].objects)
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    csv["spec"]["install"]["spec"]["clusterPermissions"] = [
        {"serviceAccountName": "memcached-operator", "rules": [SECRETS]}
    ]
    crd = next(o for o in objects if o["kind"] == "CustomResourceDefinition")
    crd["spec"]["versions"][0]["name"] = "v1beta1"
    csv["spec"]["customresourcedefinitions"]["owned"][0]["version"] = "v1beta1"
    package.bundles[NEW] = Bundle(
        NEW, package.name, properties=bundle_properties(package.name, csv, objects, [])
    )
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


def test_a_cluster_wide_secrets_rule_and_a_dropped_stored_version_are_flagged(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane
    write_crafted_catalog(tmp_path)
    server = Server(tmp_path)
    server.start()
    try:
        catalog_source(plane, namespace, server.port)
        second = install_first(plane, namespace, source="updating", sourceNamespace=namespace)
        memcached(plane, namespace, "cache-a")  # stored as v1alpha1, the version 0.0.2 drops
        name = second["metadata"]["name"]

        shown = json.loads(plan_show(plane, namespace, name, "-o", "json"))
        flags = set(shown["summary"]["flags"])
        assert {"widensRBAC", "clusterWide", "sensitive", "crdVersionRemoved", "crdUnsafe"} <= flags
        (granted,) = [r for r in shown["rbac"]["rules"] if r["change"] == "granted"]
        assert granted["scope"] == "Cluster" and granted["rule"] == SECRETS
        assert granted["flags"] == ["cluster-wide", "sensitive", "widens"]
        (crd,) = shown["crds"]
        assert crd["versionsRemoved"] == crd["versionsRemovedInUse"] == ["v1alpha1"]
        assert crd["versionsAdded"] == ["v1beta1"] and crd["safe"] is False
        assert "removes version v1alpha1 that is listed as a stored version" in crd["problem"]
        assert crd["existingObjects"]["v1alpha1"] >= 1

        text = plan_show(plane, namespace, name)
        assert "Summary: widens RBAC; grants cluster-wide rights; grants sensitive rights" in text
        assert "! + granted  cluster-wide get, list, watch on secrets (core)" in text
        assert "!     version removed: v1alpha1 (in use: a stored version" in text
        assert "!     unsafe: risk of data loss" in text
        flagged = summary_annotation(plane, namespace, name)["flags"]
        assert {"widensRBAC", "clusterWide", "crdVersionRemoved", "crdUnsafe"} <= set(flagged)
    finally:
        server.stop()
