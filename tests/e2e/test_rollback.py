"""Rollback (beyond OLM; docs/beyond-olm.md): `olm rollback` takes a Subscription back to the
CSV its bad upgrade replaced, in one InstallPlan a person approves, with its operands untouched;
a rollback that would lose stored objects is refused and changes nothing.

1. memcached-operator 0.0.1, then a crafted 0.0.2 whose Deployment never becomes available (its
   pod fits no node); `olm rollback memcached` plans 0.0.1 again, Manual; once approved 0.0.1
   is Succeeded, 0.0.2 is gone, the Memcached keeps its uid, and the Subscription holds on 0.0.1.
2. A crafted 0.0.2 whose CRD stores Memcacheds as v1beta1: going back to 0.0.1 (v1alpha1 only)
   would lose them, so `olm rollback` is refused with that reason and nothing changes.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
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
from tests.support.stories import operator_group, phase, wait_phase
from tests.support.subscriptions import approve, memcached, plans, subscribe, subscription

pytestmark = pytest.mark.e2e

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
SUB = "subscription.operators.coreos.com"


# The refusal story's CRD: a group of its own, so the stored version it leaves behind cannot
# refuse the Memcached CRD updates of the stories after it (CRDs are cluster-wide).
OWN_GROUP = "rollback.example.com"


def write_catalog(
    directory: Path, change: Callable[[list[dict[str, Any]]], None], group: str = ""
) -> None:
    """The samples catalog with 0.0.2's objects changed by `change`; with `group`, every
    memcached bundle's CRD in that API group instead of cache.example.com."""
    catalog = build()
    package = catalog.packages["memcached-operator"]
    for name in list(package.bundles):
        objects = copy.deepcopy(package.bundles[name].objects)
        if name == NEW:
            change(objects)
        if group:
            in_group(objects, group)
        csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
        package.bundles[name] = Bundle(
            name, package.name, properties=bundle_properties(package.name, csv, objects, [])
        )
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


def in_group(objects: list[dict[str, Any]], group: str) -> None:
    crd = next(o for o in objects if o["kind"] == "CustomResourceDefinition")
    crd["spec"]["group"] = group
    crd["metadata"]["name"] = f"{crd['spec']['names']['plural']}.{group}"
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    for owned in csv["spec"]["customresourcedefinitions"]["owned"]:
        owned["name"] = crd["metadata"]["name"]


def never_available(objects: list[dict[str, Any]]) -> None:
    """0.0.2's operator pod fits no node, and its old pod goes first (Recreate)."""
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    deployment = csv["spec"]["install"]["spec"]["deployments"][0]["spec"]
    deployment["strategy"] = {"type": "Recreate"}
    deployment["template"]["spec"]["nodeSelector"] = {"olm-py.io/no-such-node": "true"}


def stores_v1beta1(objects: list[dict[str, Any]]) -> None:
    """0.0.2's CRD serves v1alpha1 and v1beta1, and stores v1beta1."""
    crd = next(o for o in objects if o["kind"] == "CustomResourceDefinition")
    old = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [
        {**copy.deepcopy(old), "storage": False},
        {**copy.deepcopy(old), "name": "v1beta1", "storage": True},
    ]


def olm_rollback(
    plane: ControlPlane, namespace: str, *args: str
) -> subprocess.CompletedProcess[str]:
    """`olm rollback memcached -n NAMESPACE ARGS`, as the admin types it."""
    command = [sys.executable, "-m", "olm.cli", "rollback", "memcached", "-n", namespace]
    return subprocess.run(
        [*command, "--kubeconfig", str(plane.kubeconfig), *args],
        capture_output=True,
        text=True,
        env=plane.env(),
        timeout=300,
    )


def upgraded_from_catalog(plane: ControlPlane, namespace: str, directory: Path) -> Server:
    """0.0.1 by an Automatic Subscription to the crafted catalog, which goes on to 0.0.2."""
    server = Server(directory)
    server.start()
    catalog_source(plane, namespace, server.port)
    operator_group(plane, namespace)
    subscribe(
        plane, namespace, "Automatic", startingCSV=OLD, source="updating", sourceNamespace=namespace
    )
    return server


def annotations(plane: ControlPlane, namespace: str) -> dict[str, str]:
    found: dict[str, str] = subscription(plane, namespace)["metadata"].get("annotations") or {}
    return {k: v for k, v in found.items() if k.startswith("olm-py.io/")}


def test_a_bad_upgrade_is_rolled_back_with_the_operands_untouched(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane
    write_catalog(tmp_path, never_available)
    server = upgraded_from_catalog(plane, namespace, tmp_path)
    try:
        # 0.0.2 installs by itself (Automatic) and never becomes ready.
        wait_for(
            lambda: subscription(plane, namespace)["status"].get("installedCSV") == NEW,
            timeout=STEP_TIMEOUT,
            what="0.0.2 installed",
        )
        memcached(plane, namespace, "cache-a")
        uid = plane.get_json("memcached", "cache-a", "-n", namespace)["metadata"]["uid"]
        assert phase(plane, namespace, NEW) != "Succeeded/InstallSucceeded"

        rolled = olm_rollback(plane, namespace)
        assert rolled.returncode == 0, rolled.stdout + rolled.stderr
        assert (
            f"rollback of Subscription memcached in {namespace}: {NEW} -> {OLD} (0.0.1)"
            in rolled.stdout
        )
        [plan] = [
            p
            for p in plans(plane, namespace)
            if "olm-py.io/rollback" in (p["metadata"].get("annotations") or {})
        ]
        name = plan["metadata"]["name"]
        assert plan["spec"]["clusterServiceVersionNames"] == [OLD]
        assert f"olm plan show {name} -n {namespace}" in rolled.stdout
        assert (plan["spec"]["approval"], plan["spec"]["approved"]) == ("Manual", False)
        assert plan["metadata"]["annotations"]["olm-py.io/rollback"] == f"memcached: {NEW} -> {OLD}"

        approve(plane, namespace, plan)
        wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")
        wait_for(
            lambda: phase(plane, namespace, NEW) == "absent",
            timeout=STEP_TIMEOUT,
            what="0.0.2 gone",
        )
        assert plane.get_json("memcached", "cache-a", "-n", namespace)["metadata"]["uid"] == uid

        def rolled_back() -> dict[str, Any] | None:
            status = subscription(plane, namespace)["status"]
            found = {c["type"]: c for c in status.get("conditions") or []}
            done = found.get("Rollback", {}).get("reason") == "RolledBack"
            return found if done and "VersionHeld" in found else None

        said = wait_for(rolled_back, timeout=STEP_TIMEOUT, what="the Subscription held on 0.0.1")
        assert said["VersionHeld"]["reason"] == "OutsideVersionRange"
        assert "holds back 0.0.2" in said["VersionHeld"]["message"]
        assert subscription(plane, namespace)["status"]["installedCSV"] == OLD
        # Carried out once: olm-py removes the request; the range holds it on 0.0.1.
        wait_for(
            lambda: annotations(plane, namespace) == {"olm-py.io/version-range": "0.0.1"},
            timeout=STEP_TIMEOUT,
            what="the rollback request removed",
        )
        # The plan that installed 0.0.2 went with it, so a later upgrade gets a plan of its own.
        assert all(
            NEW not in p["spec"]["clusterServiceVersionNames"] for p in plans(plane, namespace)
        )
    finally:
        server.stop()


def test_a_rollback_that_would_lose_stored_objects_is_refused_and_changes_nothing(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane
    write_catalog(tmp_path, stores_v1beta1, group=OWN_GROUP)
    server = upgraded_from_catalog(plane, namespace, tmp_path)
    try:
        wait_phase(plane, namespace, NEW, "Succeeded/InstallSucceeded")
        stored_as_v1beta1 = {
            "apiVersion": f"{OWN_GROUP}/v1beta1",
            "kind": "Memcached",
            "metadata": {"name": "cache-a"},
            "spec": {"size": 1},
        }
        plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(stored_as_v1beta1))
        stored = plane.get_json("crd", f"memcacheds.{OWN_GROUP}")["status"]["storedVersions"]
        assert "v1beta1" in stored

        refused = olm_rollback(plane, namespace)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert (
            "refused: Subscription memcached cannot be rolled back: rolling back to "
            in refused.stdout
        )
        assert "removes version v1beta1 that is listed as a stored version" in refused.stdout
        assert "nothing changed" in refused.stdout
        assert annotations(plane, namespace) == {}
        assert phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded"
        assert all(
            OLD not in p["spec"]["clusterServiceVersionNames"] or p["status"]["phase"] == "Complete"
            for p in plane.get_json("installplan.operators.coreos.com", "-n", namespace)["items"]
        )
    finally:
        server.stop()
