"""The getting-started story: `kubectl apply` a CSV, satisfy its requirements, watch it
install, create memcached instances, then upgrade along `replaces` with the operands untouched.

Told twice: with olm-py's sample CSVs, and with the upstream guide's own CSVs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.paths import REPO, SHARED
from tests.support.recorder import Recorder
from tests.support.stories import phase

SAMPLE = REPO / "manifests" / "samples" / "memcached-operator"
GUIDE = SHARED / "fixtures" / "getting-started"


@dataclass(frozen=True)
class Flavour:
    name: str
    csv_files: tuple[Path, Path]
    csv_names: tuple[str, str]
    crd: Path
    rbac: tuple[Path, ...]
    operator_deployment: str
    writes_reconciled_by: bool


FLAVOURS = [
    Flavour(
        "sample",
        (
            SAMPLE / "memcached-operator.v0.0.1.csv.yaml",
            SAMPLE / "memcached-operator.v0.0.2.csv.yaml",
        ),
        ("memcached-operator.v0.0.1", "memcached-operator.v0.0.2"),
        SAMPLE / "crd.yaml",
        (SAMPLE / "rbac.yaml",),
        "memcached-operator",
        True,
    ),
    Flavour(
        "upstream-guide",
        (GUIDE / "memcachedoperator.0.0.1.csv.yaml", GUIDE / "memcachedoperator.0.0.2.csv.yaml"),
        ("memcachedoperator.v0.0.1", "memcachedoperator.v0.0.2"),
        REPO / "tests" / "e2e" / "data" / "upstream-memcached-crd.v1.yaml",
        tuple(
            GUIDE / "deploy-2019-05" / f
            for f in ("service_account.yaml", "role.yaml", "role_binding.yaml")
        ),
        "memcached-app-operator",
        False,
    ),
]

# Every state OLM v0 may show on the way, and the ones it must show, in order.
INSTALL_ALLOWED = {
    "Pending/RequirementsUnknown",
    "Pending/RequirementsNotMet",
    "InstallReady/AllRequirementsMet",
    "Installing/InstallSucceeded",
    "Installing/InstallWaiting",
    "Succeeded/InstallSucceeded",
}
OLD_REQUIRED = [
    "Pending/RequirementsUnknown",
    "Pending/RequirementsNotMet",
    "InstallReady/AllRequirementsMet",
    "Installing/InstallSucceeded",
    "Succeeded/InstallSucceeded",
    "Replacing/BeingReplaced",
    "Deleting/Replaced",
    "DELETED",
]
NEW_REQUIRED = [
    "Pending/RequirementsUnknown",
    "InstallReady/AllRequirementsMet",
    "Installing/InstallSucceeded",
    "Succeeded/InstallSucceeded",
]


def in_order(required: list[str], seen: list[str]) -> bool:
    position = 0
    for state in seen:
        if position < len(required) and state == required[position]:
            position += 1
    return position == len(required)


def csv_manifest(path: Path, namespace: str) -> str:
    csv = yaml.safe_load(path.read_text())
    csv["metadata"]["namespace"] = namespace
    return json.dumps(csv)


def operands(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    """UIDs and generations of everything the operator manages, and the CRD's UID."""
    found: dict[str, Any] = {
        "crd": plane.get_json("crd", "memcacheds.cache.example.com")["metadata"]["uid"]
    }
    for kind, selector in (
        ("memcached", ""),
        ("deployment", "app=memcached"),
        ("pod", "app=memcached"),
    ):
        args = [kind, "-n", namespace] + (["-l", selector] if selector else [])
        for item in plane.get_json(*args)["items"]:
            found[f"{kind}/{item['metadata']['name']}"] = (
                item["metadata"]["uid"],
                item["metadata"].get("generation"),
            )
    return found


def operator_log(plane: ControlPlane, namespace: str) -> str:
    pods = plane.cluster.state_dir / "pods"
    return "".join(p.read_text() for p in pods.glob(f"{namespace}_*/*.log"))


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: f.name)
def test_getting_started_story(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, flavour: Flavour
) -> None:
    plane, ns = control_plane, namespace
    old, new = flavour.csv_names
    plane.kubectl(
        "apply",
        "-n",
        ns,
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": "og"},
                "spec": {"targetNamespaces": [ns]},
            }
        ),
    )
    # Watching before the CRD goes: the watch's first listing must come before the CSV exists,
    # or its first states are missed (a later `kubectl delete` gives it that head start).
    recorder = Recorder(plane, ns)
    try:
        plane.kubectl(
            "delete",
            "crd",
            "memcacheds.cache.example.com",
            "--ignore-not-found",
            "--wait=true",
            timeout=STEP_TIMEOUT,
        )
        # 1. The CSV alone: nothing installs; the missing CRD and service account are named.
        plane.kubectl("apply", "-f", "-", stdin=csv_manifest(flavour.csv_files[0], ns))
        wait_for(
            lambda: phase(plane, ns, old) == "Pending/RequirementsNotMet",
            timeout=STEP_TIMEOUT,
            what=f"{old} RequirementsNotMet",
        )
        status = plane.get_json("csv", old, "-n", ns)["status"]
        missing = {(r["kind"], r["name"]): r["status"] for r in status["requirementStatus"]}
        assert missing[("CustomResourceDefinition", "memcacheds.cache.example.com")] == "NotPresent"
        assert missing[("ServiceAccount", "memcached-operator")] == "NotPresent"
        assert (
            "memcacheds.cache.example.com" in status["message"]
            and "memcached-operator" in status["message"]
        )
        assert plane.get_json("deployments", "-n", ns)["items"] == []
        columns = plane.kubectl("get", "csv", "-n", ns).stdout.splitlines()
        assert columns[0].split() == ["NAME", "DISPLAY", "VERSION", "RELEASE", "REPLACES", "PHASE"]
        assert columns[1].split()[-1] == "Pending"

        # 2. The admin adds the CRD and the RBAC: the operator installs and runs.
        plane.kubectl("apply", "-f", str(flavour.crd))
        for path in flavour.rbac:
            plane.kubectl("apply", "-n", ns, "-f", str(path))
        wait_for(
            lambda: phase(plane, ns, old) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what=f"{old} Succeeded",
        )
        deployment = plane.get_json("deployment", flavour.operator_deployment, "-n", ns)
        labels = deployment["metadata"]["labels"]
        assert labels["olm.owner"] == old and labels["olm.owner.kind"] == "ClusterServiceVersion"
        assert labels["olm.owner.namespace"] == ns and labels["olm.managed"] == "true"
        assert "olm.deployment-spec-hash" in labels
        [owner] = deployment["metadata"]["ownerReferences"]
        assert (owner["kind"], owner["name"], owner["controller"], owner["blockOwnerDeletion"]) == (
            "ClusterServiceVersion",
            old,
            False,
            False,
        )
        template = deployment["spec"]["template"]
        assert template["metadata"]["annotations"]["olm.operatorGroup"] == "og"
        assert template["metadata"]["annotations"]["olm.targetNamespaces"] == ns
        env = {e["name"]: e.get("value") for e in template["spec"]["containers"][0]["env"]}
        assert env["OPERATOR_CONDITION_NAME"] == old
        assert deployment["spec"]["revisionHistoryLimit"] == 1
        assert plane.get_json("operatorcondition", old, "-n", ns)["spec"]["deployments"] == [
            flavour.operator_deployment
        ]
        # The operator may read and update its own OperatorCondition, and no other
        # (OLM's Role and RoleBinding named after the CSV).
        condition = plane.get_json("operatorcondition", old, "-n", ns)
        assert "labels" not in condition["metadata"]
        for account in set(condition["spec"]["serviceAccounts"]):
            as_account = f"--as=system:serviceaccount:{ns}:{account}"
            for verb, target, allowed in (
                ("update", f"operatorconditions/{old}", "yes"),
                ("get", f"operatorconditions/{old}", "yes"),
                ("update", "operatorconditions/someone-else", "no"),
            ):
                wait_for(
                    lambda verb=verb, target=target, allowed=allowed, who=as_account: (
                        plane.kubectl(
                            "auth", "can-i", verb, target, "-n", ns, who, check=False
                        ).stdout.strip()
                        == allowed
                    ),
                    what=f"{account} may {verb} {target}: {allowed}",
                )
        group = plane.get_json("operatorgroup", "og", "-n", ns)
        assert (
            group["metadata"]["annotations"]["olm.providedAPIs"]
            == "Memcached.v1alpha1.cache.example.com"
        )
        assert group["status"]["namespaces"] == [ns]

        # 3. Two memcached instances; the operator makes their Deployments.
        for name, size in (("cache-a", 3), ("cache-b", 2)):
            plane.kubectl(
                "apply",
                "-n",
                ns,
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
        for name, size in (("cache-a", 3), ("cache-b", 2)):
            wait_for(
                lambda n=name: (
                    plane.kubectl("get", "deployment", n, "-n", ns, check=False).returncode == 0
                ),
                what=f"deployment {name}",
            )
            plane.kubectl(
                "wait",
                "-n",
                ns,
                "--for=condition=Available",
                f"deployment/{name}",
                f"--timeout={STEP_TIMEOUT:.0f}s",
                timeout=STEP_TIMEOUT + 30,
            )
            wait_for(
                lambda n=name, s=size: (
                    len(
                        (plane.get_json("memcached", n, "-n", ns).get("status") or {}).get("nodes")
                        or []
                    )
                    == s
                ),
                what=f"{name} status.nodes",
            )
        if flavour.writes_reconciled_by:
            assert (
                plane.get_json("memcached", "cache-a", "-n", ns)["status"]["reconciledBy"]
                == "0.0.1"
            )
        before = operands(plane, ns)
        operator_uid = deployment["metadata"]["uid"]

        # 4. The upgrade: 0.0.2 replaces 0.0.1.
        plane.kubectl("apply", "-f", "-", stdin=csv_manifest(flavour.csv_files[1], ns))
        wait_for(
            lambda: phase(plane, ns, new) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what=f"{new} Succeeded",
        )
        wait_for(
            lambda: phase(plane, ns, old) == "absent", timeout=STEP_TIMEOUT, what=f"{old} deleted"
        )
        taken_over = plane.get_json("deployment", flavour.operator_deployment, "-n", ns)
        assert taken_over["metadata"]["uid"] == operator_uid, (
            "the operator Deployment is taken over, not recreated"
        )
        assert taken_over["metadata"]["labels"]["olm.owner"] == new
        assert [o["name"] for o in taken_over["metadata"]["ownerReferences"]] == [new]
        plane.kubectl(
            "rollout",
            "status",
            "-n",
            ns,
            f"deployment/{flavour.operator_deployment}",
            f"--timeout={STEP_TIMEOUT:.0f}s",
            timeout=STEP_TIMEOUT + 30,
        )
        if flavour.writes_reconciled_by:
            wait_for(
                lambda: all(
                    plane.get_json("memcached", n, "-n", ns)["status"].get("reconciledBy")
                    == "0.0.2"
                    for n in ("cache-a", "cache-b")
                ),
                what="0.0.2 reconciling",
            )
        wait_for(
            lambda: "memcached-operator 0.0.2 starting" in operator_log(plane, ns),
            what="the 0.0.2 operator process",
        )
        wait_for(
            lambda: f"reconciled {ns}/cache-a as 0.0.2" in operator_log(plane, ns),
            what="0.0.2 reconciling cache-a",
        )
        after = operands(plane, ns)
        assert after == before, (
            "memcached instances, their Deployments, pods and the CRD are untouched"
        )
    finally:
        recorder.close()

    old_states, new_states = recorder.phases(old), recorder.phases(new)
    assert in_order(OLD_REQUIRED, old_states), old_states
    assert set(old_states) <= INSTALL_ALLOWED | {
        "Replacing/BeingReplaced",
        "Deleting/Replaced",
        "DELETED",
    }, old_states
    assert in_order(NEW_REQUIRED, new_states), new_states
    assert set(new_states) <= INSTALL_ALLOWED, new_states
    events = plane.get_json("events", "-n", ns, "--field-selector", f"involvedObject.name={old}")[
        "items"
    ]
    reasons = [
        e["reason"] for e in sorted(events, key=lambda e: e["metadata"]["creationTimestamp"])
    ]
    assert (
        "RequirementsNotMet" in reasons
        and "AllRequirementsMet" in reasons
        and "BeingReplaced" in reasons
    )
    assert all(e["source"]["component"] == "operator-lifecycle-manager" for e in events)


def test_kopf_writes_nothing_on_users_objects(
    control_plane: ControlPlane, olm_operator: OlmOperator
) -> None:
    """After the stories, no OLM object carries a kopf annotation, finalizer or status key."""
    for kind in (
        "csv",
        "og",
        "operatorcondition",
        "deployment",
        "subscription.operators.coreos.com",
        "installplan.operators.coreos.com",
        "catsrc",
    ):
        for item in control_plane.get_json(kind, "-A")["items"]:
            meta = item["metadata"]
            assert not [k for k in meta.get("annotations") or {} if "kopf" in k], (
                kind,
                meta["name"],
            )
            assert not [f for f in meta.get("finalizers") or [] if "kopf" in f], (
                kind,
                meta["name"],
            )
            assert "kopf" not in (item.get("status") or {}), (kind, meta["name"])
