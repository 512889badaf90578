"""The gateway's one error hierarchy: everything a request to the API server can end in.

Invariants:
- Every error the gateway (or its fake) raises is a `GatewayError`, with the HTTP `status`
  (0 when no response came back).
- `NotFound` (404) and `Conflict` (409: stale resourceVersion, or the object exists already)
  are subclasses, so `except GatewayError` catches them too: a handler that means to treat
  them differently must name them first.
- A request that got no answer at all (refused, reset, timed out while the API server restarts
  or is stopped) ends in urllib3's own error, not a GatewayError, so that no handler mistakes
  it for a refusal; loops that retry catch `API_ERRORS` (both) and log one line.
"""

from __future__ import annotations

import urllib3


class GatewayError(RuntimeError):
    """A request the API server refused; `status` is the HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class NotFound(GatewayError):
    """404: the object, or its namespace, does not exist."""

    def __init__(self, message: str, status: int = 404) -> None:
        super().__init__(message, status)


class Conflict(GatewayError):
    """409: the write was decided on a stale resourceVersion, or the object exists already."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message, status)


class UnservedKind(GatewayError):
    """The API server does not serve this apiVersion/kind."""


# What a retrying loop catches around API requests: a refusal, or no answer at all.
API_ERRORS: tuple[type[Exception], ...] = (GatewayError, urllib3.exceptions.HTTPError)
