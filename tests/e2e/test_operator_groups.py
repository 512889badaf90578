"""An admin's OperatorGroups: OLM v0.38's string upgradeStrategy is accepted, and a group whose
targetNamespaces names a namespace that does not exist says so until the namespace exists."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.support.cluster import ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import warning_events


def apply_group(plane: ControlPlane, namespace: str, spec: dict[str, Any]) -> None:
    group = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": "og"},
        "spec": spec,
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(group))


def test_the_string_upgrade_strategy_of_olm_is_accepted(
    control_plane: ControlPlane, namespace: str
) -> None:
    apply_group(control_plane, namespace, {"upgradeStrategy": "TechPreviewUnsafeFailForward"})
    group = control_plane.get_json("operatorgroup", "og", "-n", namespace)
    assert group["spec"]["upgradeStrategy"] == "TechPreviewUnsafeFailForward"
    refused = control_plane.kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": "og2"},
                "spec": {"upgradeStrategy": "Sometimes"},
            }
        ),
        check=False,
    )
    assert refused.returncode != 0 and "Unsupported value" in refused.stderr


def test_a_missing_target_namespace_is_explained_until_it_exists(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    missing = f"t-missing-{uuid.uuid4().hex[:6]}"
    apply_group(plane, namespace, {"targetNamespaces": [namespace, missing]})

    def condition() -> dict[str, Any] | None:
        status = plane.get_json("operatorgroup", "og", "-n", namespace).get("status") or {}
        return next(
            (c for c in status.get("conditions") or [] if c["type"] == "MissingTargetNamespaces"),
            None,
        )

    found = wait_for(condition, what="the MissingTargetNamespaces condition")
    assert found["status"] == "True" and found["reason"] == "TargetNamespaceNotFound"
    assert f'names namespace "{missing}", which does not exist' in found["message"]
    assert f"kubectl create namespace {missing}" in found["message"]
    group = plane.get_json("operatorgroup", "og", "-n", namespace)
    assert sorted(group["status"]["namespaces"]) == sorted([namespace, missing]), (
        "kept in status.namespaces, as OLM does"
    )
    events = wait_for(
        lambda: [
            m for r, m in warning_events(plane, namespace, "og") if r == "TargetNamespaceNotFound"
        ],
        what="the TargetNamespaceNotFound event",
    )
    assert missing in events[0]
    plane.kubectl("create", "namespace", missing)
    try:
        wait_for(
            lambda: condition() is None, what="the condition to clear once the namespace exists"
        )
    finally:
        plane.kubectl("delete", "namespace", missing, "--wait=false", check=False)
