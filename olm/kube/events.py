"""The core/v1 Events olm-py records, shaped as OLM's are (source component
`operator-lifecycle-manager`, one Event per occurrence, named `<object>.<random>`)."""

from __future__ import annotations

import datetime
from typing import Any

from olm.api.labels import EVENT_SOURCE

# The API server refuses longer messages in some versions; OLM cuts them too.
MAX_MESSAGE = 1024


def event_body(
    involved: dict[str, Any], event_type: str, reason: str, message: str, now: str
) -> dict[str, Any]:
    meta = involved["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": f"{meta['name']}.",
            "namespace": meta.get("namespace") or "default",
        },
        "involvedObject": {
            "apiVersion": involved["apiVersion"],
            "kind": involved["kind"],
            "name": meta["name"],
            "namespace": meta.get("namespace"),
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


def utc_now() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
