"""Recording an Event is best effort: a refused Event must never stop a reconcile.

Invariant: every controller records Events through `record_event`, which swallows the API
server's refusals and logs them (quietly when the object or its namespace is going away).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway

log = logging.getLogger("olm.events")


def refused_as_terminating(exc: GatewayError) -> bool:
    """The namespace is being deleted: the API server's NamespaceLifecycle admission refuses
    every new object there (403). The cache may not know yet; the namespace's own watch
    event will stop further work, so this is no failure of the object's."""
    return exc.status == 403 and "because it is being terminated" in str(exc)


def record_event(
    gateway: KubeGateway, involved: Mapping[str, Any], event_type: str, reason: str, message: str
) -> None:
    meta = body.meta(involved)
    try:
        gateway.event(dict(involved), event_type, reason, message)
    except GatewayError as exc:
        # Gone, changed, or its namespace is terminating: nothing worth a warning.
        quiet = isinstance(exc, NotFound | Conflict) or refused_as_terminating(exc)
        log.log(
            logging.DEBUG if quiet else logging.WARNING,
            "could not record event %s on %s %s/%s: %s",
            reason,
            involved.get("kind", "object"),
            meta.get("namespace"),
            meta.get("name"),
            exc,
        )
