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
    # spec.image catalogs (olm.image's error kinds, and what the image holds)
    IMAGE_REFERENCE = "ImageReferenceInvalid"
    REGISTRY_UNREACHABLE = "RegistryUnreachable"
    REGISTRY_TIMEOUT = "RegistryTimeout"
    REGISTRY_ERROR = "RegistryError"
    IMAGE_NOT_FOUND = "ImageNotFound"
    IMAGE_UNAUTHORIZED = "ImageUnauthorized"
    IMAGE_CORRUPT = "ImageCorrupt"
    IMAGE_UNSUPPORTED = "ImageUnsupported"
    NOT_A_CATALOG = "ImageNotACatalog"
    IMAGE_CATALOG_INVALID = "ImageCatalogInvalid"


IMAGE_KINDS = frozenset(
    {
        FailureKind.IMAGE_REFERENCE,
        FailureKind.REGISTRY_UNREACHABLE,
        FailureKind.REGISTRY_TIMEOUT,
        FailureKind.REGISTRY_ERROR,
        FailureKind.IMAGE_NOT_FOUND,
        FailureKind.IMAGE_UNAUTHORIZED,
        FailureKind.IMAGE_CORRUPT,
        FailureKind.IMAGE_UNSUPPORTED,
        FailureKind.NOT_A_CATALOG,
        FailureKind.IMAGE_CATALOG_INVALID,
    }
)

# What to check, per image failure (the sentence starts with what happened, from olm.image).
IMAGE_ADVICE = {
    FailureKind.IMAGE_REFERENCE: "Fix spec.image.",
    FailureKind.REGISTRY_UNREACHABLE: (
        "Check that the registry is running and reachable from olm-py; olm-py retries with backoff."
    ),
    FailureKind.REGISTRY_TIMEOUT: "Check the registry's health; olm-py retries with backoff.",
    FailureKind.REGISTRY_ERROR: "Check the registry's log; olm-py retries with backoff.",
    FailureKind.IMAGE_NOT_FOUND: (
        "Check spec.image: push the catalog image (olm catalog push, opm, podman) or fix its "
        "name or tag."
    ),
    FailureKind.IMAGE_UNAUTHORIZED: (
        "Name a pull secret (type kubernetes.io/dockerconfigjson) with credentials for this "
        "registry in spec.secrets, in the CatalogSource's namespace."
    ),
    FailureKind.IMAGE_CORRUPT: "Push the image again.",
    FailureKind.IMAGE_UNSUPPORTED: "Push the image again with a current tool (OCI or Docker schema 2, gzip layers, linux/amd64).",
    FailureKind.NOT_A_CATALOG: (
        "Point spec.image at a catalog image: one labelled "
        "operators.operatorframework.io.index.configs.v1 with a file-based catalog at that "
        "path (olm catalog push, opm generate dockerfile)."
    ),
    FailureKind.IMAGE_CATALOG_INVALID: (
        "Fix the catalog (olm catalog validate, opm validate) and push the image again."
    ),
}


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
    if failure.kind is FailureKind.IMAGE_REFERENCE:
        return CatalogSourceReason.SPEC_INVALID_ERROR
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
    if kind in IMAGE_KINDS:
        said = _short(failure.summary) if failure.summary.strip() else str(kind)
        return f"{source} cannot read the catalog image {where}: {said}. {IMAGE_ADVICE[kind]}"
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
