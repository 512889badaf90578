"""Why an image could not be read or written, as a closed set of kinds callers can branch on.

Invariant: `str(error)` is one plain sentence about the image (never a traceback or an HTTP
body); the raw library text, when there is one, stays in `detail`.
"""

from __future__ import annotations

from enum import StrEnum


class ImageErrorKind(StrEnum):
    INVALID_REFERENCE = "InvalidReference"  # the reference cannot be parsed
    UNREACHABLE = "Unreachable"  # no connection to the registry (refused, DNS, TLS)
    TIMEOUT = "Timeout"  # the registry did not answer in time
    NOT_FOUND = "NotFound"  # repository, tag, digest or blob unknown
    UNAUTHORIZED = "Unauthorized"  # 401/403: credentials missing or wrong
    CORRUPT = "Corrupt"  # a digest mismatch, a layer that is not a (gzip) tar
    UNSUPPORTED = "Unsupported"  # schema 1, no linux/amd64 image, an unknown media type
    SERVER_ERROR = "ServerError"  # 5xx or another unexpected answer, after retries


# Kinds worth retrying soon: the same request may work a moment later.
TRANSIENT = frozenset(
    {ImageErrorKind.UNREACHABLE, ImageErrorKind.TIMEOUT, ImageErrorKind.SERVER_ERROR}
)


class ImageError(Exception):
    def __init__(self, kind: ImageErrorKind, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail
