"""Two OperatorGroups whose targets overlap cannot both provide the same API (OLM v0's
provided-API check): the second operator is refused with InterOperatorGroupOwnerConflict, each
group's `olm.providedAPIs` says what it provides, and the refused operator starts over by
itself once the other one is removed."""

from __future__ import annotations

import json
import uuid

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.widgets import API, provided, widget_operator


def test_overlapping_groups_cannot_provide_the_same_api(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    other = f"t-other-{uuid.uuid4().hex[:6]}"
    plane.kubectl("create", "namespace", other)
    try:
        # Group "og" in `namespace` targets both namespaces; group "og" in `other` its own.
        operator_group(plane, namespace, targets=[namespace, other])
        operator_group(plane, other, targets=[other])
        first = widget_operator("widgets-a.v1")
        plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(first))
        wait_for(lambda: provided(plane, namespace) == API, what="the first group's API")

        second = widget_operator("widgets-b.v1")
        plane.kubectl("apply", "-n", other, "-f", "-", stdin=json.dumps(second))
        wait_for(
            lambda: phase(plane, other, "widgets-b.v1") == "Failed/InterOperatorGroupOwnerConflict",
            timeout=STEP_TIMEOUT,
            what="the second operator refused",
        )
        assert provided(plane, other) == ""
        assert phase(plane, namespace, "widgets-a.v1").startswith("Pending/"), "untouched"

        # The first operator goes: the second one starts over by itself.
        plane.kubectl("delete", "csv", "widgets-a.v1", "-n", namespace, "--timeout=60s")
        wait_for(lambda: provided(plane, namespace) == "", timeout=STEP_TIMEOUT, what="pruned")
        wait_for(
            lambda: phase(plane, other, "widgets-b.v1").startswith("Pending/"),
            timeout=STEP_TIMEOUT,
            what="the second operator out of its conflict",
        )
        wait_for(lambda: provided(plane, other) == API, what="the second group's API")
    finally:
        plane.kubectl("delete", "namespace", other, "--wait=false", "--ignore-not-found")
