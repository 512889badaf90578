"""Why a catalog could not be read, in sentences a user can act on.

The controller turns library errors (gRPC status codes, YAML and decoding errors, a missing
ConfigMap) into a `Failure`; `failure_message` says what happened to which CatalogSource, at
which address or ConfigMap, and what to check. The raw library text stays in `Failure.detail`,
for the debug log only: it is never shown on status.

Invariants: pure; every failure gets one sentence; a sentence does not change while the failure
stays the same, so a failing catalog does not churn its status.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from olm.api.catalogsource import CatalogSourceReason

SERVER_MESSAGE_LIMIT = 200


class FailureKind(StrEnum):
    UNREACHABLE = "Unreachable"  # gRPC UNAVAILABLE: no connection
    TIMEOUT = "Timeout"  # gRPC DEADLINE_EXCEEDED
    NOT_A_REGISTRY = "NotARegistry"  # gRPC UNIMPLEMENTED: a server, not operator-registry's API
    SERVER_ERROR = "ServerError"  # any other gRPC status from the server
    UNREADABLE = "Unreadable"  # answered, but not with a catalog olm-py can read
    CONFIGMAP_MISSING = "ConfigMapMissing"
    CONFIGMAP_INVALID = "ConfigMapInvalid"


# gRPC status code names -> kinds; codes not listed are SERVER_ERROR.
GRPC_CODES = {
    "UNAVAILABLE": FailureKind.UNREACHABLE,
    "DEADLINE_EXCEEDED": FailureKind.TIMEOUT,
    "UNIMPLEMENTED": FailureKind.NOT_A_REGISTRY,
}


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    detail: str = ""  # the library's own text: for the debug log and classification only
    code: str = ""  # the gRPC status code name, when there is one
    summary: str = ""  # short enough to show: the gRPC details, a parse problem
    timeout: float = 0.0  # the deadline that passed, for TIMEOUT


def grpc_failure(code: str, details: str, detail: str, timeout: float = 0.0) -> Failure:
    """A Failure for a gRPC error with status `code` (its name) and `details`."""
    kind = GRPC_CODES.get(code, FailureKind.SERVER_ERROR)
    return Failure(kind, detail=detail, code=code, summary=details, timeout=timeout)


def reason_for(failure: Failure) -> CatalogSourceReason:
    if failure.kind in (FailureKind.CONFIGMAP_MISSING, FailureKind.CONFIGMAP_INVALID):
        return CatalogSourceReason.CONFIGMAP_ERROR
    return CatalogSourceReason.REGISTRY_SERVER_ERROR


def _unreachable_cause(detail: str) -> str:
    text = detail.lower()
    if "connection refused" in text:
        return ": nothing is listening there"
    if any(
        marker in text
        for marker in (
            "dns resolution failed",
            "errors resolving",
            "lookup failed",
            "name or service not known",
        )
    ):
        return ": its host name does not resolve"
    if "failed parsing http" in text or "http/1" in text:
        return ": the server there does not speak gRPC (is it an HTTP server?)"
    if "connection reset" in text or "socket closed" in text:
        return ": the server closed the connection (is it a gRPC server without TLS?)"
    return ""


def _short(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= SERVER_MESSAGE_LIMIT else line[: SERVER_MESSAGE_LIMIT - 3] + "..."


def failure_message(namespace: str, name: str, where: str, failure: Failure) -> str:
    """One sentence: the CatalogSource, the address or ConfigMap (`where`), what to check."""
    source = f"CatalogSource {namespace}/{name}"
    serve = "a registry server (olm catalog serve, opm serve)"
    kind = failure.kind
    if kind is FailureKind.UNREACHABLE:
        return (
            f"{source} cannot connect to the catalog at {where}"
            f"{_unreachable_cause(failure.detail)}. Check that {serve} is running there and "
            "reachable from olm-py, and that spec.address is right."
        )
    if kind is FailureKind.TIMEOUT:
        return (
            f"{source}: the catalog at {where} did not answer within {failure.timeout:g}s. Check that "
            f"the server there is {serve} and that it is not overloaded."
        )
    if kind is FailureKind.NOT_A_REGISTRY:
        return (
            f"{source}: the server at {where} does not serve the operator-registry API "
            "(api.Registry). Check that spec.address points at " + serve + ", not at another "
            "gRPC service."
        )
    if kind is FailureKind.SERVER_ERROR:
        said = f': "{_short(failure.summary)}"' if failure.summary.strip() else ""
        return (
            f"{source}: the catalog at {where} answered with an error "
            f"({failure.code or 'UNKNOWN'}{said}). Check the registry server's log and its "
            "catalog."
        )
    if kind is FailureKind.UNREADABLE:
        return (
            f"{source}: the server at {where} answered with data olm-py cannot read as a "
            f"catalog. Check that it is {serve} and that its catalog is valid (olm catalog "
            "validate, opm validate)."
        )
    if kind is FailureKind.CONFIGMAP_MISSING:
        return (
            f'{source}: ConfigMap "{where}" named by spec.configMap does not exist in namespace '
            f"{namespace}. Create it, or set spec.configMap to the ConfigMap that holds the "
            "catalog."
        )
    said = f" ({_short(failure.summary)})" if failure.summary.strip() else ""
    return (
        f'{source}: ConfigMap "{where}" named by spec.configMap does not hold a catalog olm-py '
        f"can read{said}. Check its data.packages, data.clusterServiceVersions and "
        "data.customResourceDefinitions: YAML lists in OLM's ConfigMap catalog format."
    )
