"""An admin points a CatalogSource at an address where no catalog runs: the CatalogSource says
so in a sentence (which CatalogSource, which address, what to check), not in gRPC's words."""

from __future__ import annotations

import json
import socket
from typing import Any

from tests.support.cluster import ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import warning_events


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_catalog_address_with_nothing_listening_is_explained(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    address = f"127.0.0.1:{free_port()}"
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "nowhere"},
        "spec": {"sourceType": "grpc", "address": address},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(source))

    def status() -> dict[str, Any] | None:
        found = plane.get_json("catsrc", "nowhere", "-n", namespace).get("status") or {}
        return found if found.get("reason") else None

    said = wait_for(status, what="the CatalogSource's status")
    assert said["reason"] == "RegistryServerError"
    assert said["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    assert said["message"].startswith(
        f"CatalogSource {namespace}/nowhere cannot connect to the catalog at {address}: "
        "nothing is listening there."
    )
    assert "Rendezvous" not in said["message"] and "StatusCode" not in said["message"]
    events = wait_for(
        lambda: [
            m for r, m in warning_events(plane, namespace, "nowhere") if r == "RegistryServerError"
        ],
        what="the RegistryServerError event",
    )
    assert events[0] == said["message"]
