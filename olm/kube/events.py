"""The core/v1 Events olm-py records, shaped as OLM's are (source component
`operator-lifecycle-manager`, one Event per occurrence, named `<object>.<random>`).
A cluster-scoped object's Events are stored in `default`, with no involvedObject.namespace."""

from __future__ import annotations

from typing import Any

from olm.api.labels import EVENT_SOURCE
from olm.kube.resources import RESOURCES

# The API server refuses longer messages in some versions; OLM cuts them too.
MAX_MESSAGE = 1024


def event_body(
    involved: dict[str, Any], event_type: str, reason: str, message: str, now: str
) -> dict[str, Any]:
    meta = involved["metadata"]
    # Kubernetes' recorder refers to a cluster-scoped object (a Namespace) with no namespace
    # and stores its Events in `default`, where `kubectl describe` looks for them.
    _, namespaced = RESOURCES.get((involved["apiVersion"], involved["kind"]), ("", True))
    namespace = meta.get("namespace") if namespaced else None
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": f"{meta['name']}.",
            "namespace": namespace or "default",
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": namespace,
            "uid": meta.get("uid"),
            "resourceVersion": meta.get("resourceVersion"),
        },
        "reason": reason,
        "message": message[:MAX_MESSAGE],
        "type": event_type,
        "source": {"component": EVENT_SOURCE},
        "reportingComponent": EVENT_SOURCE,
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
