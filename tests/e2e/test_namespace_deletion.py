"""Deleting a namespace with installed operators completes: olm-py's csv-cleanup finalizer is
removed even though nothing new may be written in a terminating namespace."""

from __future__ import annotations

import uuid

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import apply, minimal_csv, operator_group, wait_phase


def test_a_namespace_with_csvs_finishes_deleting(
    control_plane: ControlPlane, olm_operator: OlmOperator
) -> None:
    namespace = f"doomed-{uuid.uuid4().hex[:6]}"
    control_plane.kubectl("create", "namespace", namespace)
    operator_group(control_plane, namespace)
    for name in ("first", "second"):
        apply(control_plane, namespace, minimal_csv(name))
    for name in ("first", "second"):
        csv = wait_phase(control_plane, namespace, name, "Succeeded/InstallSucceeded")
        assert "operators.coreos.com/csv-cleanup" in csv["metadata"]["finalizers"]
    control_plane.kubectl("delete", "namespace", namespace, "--wait=false")
    wait_for(
        lambda: control_plane.kubectl("get", "namespace", namespace, check=False).returncode != 0,
        timeout=STEP_TIMEOUT,
        what=f"namespace {namespace} to be gone",
    )
