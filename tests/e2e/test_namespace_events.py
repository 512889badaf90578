"""A user subscribes to a package no catalog has and looks for the Namespace's Events: the
ResolutionFailed Event about the Namespace is where Kubernetes keeps the Events of
cluster-scoped objects (namespace `default`, no involvedObject.namespace), as OLM's are."""

from __future__ import annotations

import json
from typing import Any

from tests.support.cluster import ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group


def test_a_namespaces_resolution_failure_is_described_on_the_namespace(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscription = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": "sub"},
        "spec": {
            "name": "no-such-operator",
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(subscription))

    def namespace_events() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = plane.get_json(
            "events",
            "-n",
            "default",
            "--field-selector",
            f"involvedObject.kind=Namespace,involvedObject.name={namespace}",
        )["items"]
        return [e for e in found if e.get("reason") == "ResolutionFailed"]

    [event, *_] = wait_for(namespace_events, what="the Namespace's ResolutionFailed event")
    assert event["type"] == "Warning"
    assert "no-such-operator" in event["message"]
    assert not event["involvedObject"].get("namespace")
    # Nothing about the Namespace is left in the namespace itself.
    inside = plane.get_json(
        "events", "-n", namespace, "--field-selector", "involvedObject.kind=Namespace"
    )["items"]
    assert inside == []
