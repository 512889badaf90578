"""The sample operator's webhooks, as pure decisions on plain dicts (no I/O).

From version 0.0.3 the memcached operator serves two webhooks (see `server.py`):

- a validating admission webhook for Memcached CREATE/UPDATE: a size above the operator's
  limit is refused with a message of its own. An UPDATE that leaves the size as it was is
  allowed, so an older object above the limit can still get its labels, finalizers or
  deletion written;
- a conversion webhook (ConversionReview v1) between the two versions of the Memcached API:
  v1alpha1 `spec.size` and v1beta1 `spec.replicas`, the only difference. Everything else is
  kept as it is, so a round trip gives back the same object.
"""

from __future__ import annotations

import copy
from typing import Any

GROUP = "cache.example.com"
V1ALPHA1, V1BETA1 = f"{GROUP}/v1alpha1", f"{GROUP}/v1beta1"
# The field that holds the number of memcached pods, per API version.
SIZE_FIELD = {V1ALPHA1: "size", V1BETA1: "replicas"}
DEFAULT_SIZE_LIMIT = 10
FIRST_WEBHOOK_VERSION = (0, 0, 3)


def serves_webhooks(version: str) -> bool:
    """Whether the operator of this version serves webhooks (0.0.3 and later; `latest` too)."""
    parts = version.removeprefix("v").split("-", 1)[0].split("+", 1)[0].split(".")
    if not all(part.isdigit() for part in parts):
        return version == "latest"
    numbers = tuple(int(part) for part in parts)
    return numbers >= FIRST_WEBHOOK_VERSION


def size_of(obj: dict[str, Any] | None) -> tuple[str, Any]:
    """(the field path, its value) of an object's size, in whichever version it is written."""
    obj = obj or {}
    field = SIZE_FIELD.get(str(obj.get("apiVersion", "")), "size")
    spec = obj.get("spec") or {}
    if not isinstance(spec, dict):
        return f"spec.{field}", None
    if field not in spec:  # an object of an unknown version: either name
        field = next((name for name in ("size", "replicas") if name in spec), field)
    return f"spec.{field}", spec.get(field)


def admission_denial(request: dict[str, Any], limit: int) -> str | None:
    """Why this Memcached CREATE/UPDATE is refused, or None when it is allowed."""
    if request.get("operation") not in ("CREATE", "UPDATE"):
        return None
    path, size = size_of(request.get("object"))
    if not isinstance(size, int) or isinstance(size, bool) or size <= limit:
        return None  # a missing or mistyped size is the schema's business, not ours
    if request.get("operation") == "UPDATE" and size_of(request.get("oldObject"))[1] == size:
        return None  # not a change of size: an older object keeps working
    return (
        f"{path} {size} is above this operator's limit of {limit}; "
        f"choose {limit} or fewer, or run several Memcached instances"
    )


def admission_response(review: dict[str, Any], limit: int) -> dict[str, Any]:
    """The AdmissionReview (admission.k8s.io/v1) that answers `review`."""
    request = review.get("request") or {}
    denial = admission_denial(request, limit)
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": denial is None}
    if denial is not None:
        response["status"] = {"code": 403, "reason": "Forbidden", "message": denial}
    return {
        "apiVersion": review.get("apiVersion") or "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": response,
    }


class ConversionError(ValueError):
    pass


def convert(obj: dict[str, Any], desired: str) -> dict[str, Any]:
    """`obj` written as `desired` (a copy): `spec.size` <-> `spec.replicas`."""
    source = str(obj.get("apiVersion", ""))
    if source not in SIZE_FIELD:
        raise ConversionError(f"cannot convert from {source or 'an unset apiVersion'}")
    if desired not in SIZE_FIELD:
        raise ConversionError(
            f"cannot convert to {desired}: this operator serves {', '.join(SIZE_FIELD)}"
        )
    converted = copy.deepcopy(obj)
    converted["apiVersion"] = desired
    spec = converted.get("spec")
    if source != desired and isinstance(spec, dict) and SIZE_FIELD[source] in spec:
        spec[SIZE_FIELD[desired]] = spec.pop(SIZE_FIELD[source])
    return converted


def conversion_response(review: dict[str, Any]) -> dict[str, Any]:
    """The ConversionReview (apiextensions.k8s.io/v1) that answers `review`."""
    request = review.get("request") or {}
    desired = str(request.get("desiredAPIVersion", ""))
    response: dict[str, Any] = {"uid": request.get("uid", "")}
    try:
        converted = [convert(obj, desired) for obj in request.get("objects") or []]
    except ConversionError as exc:
        response["convertedObjects"] = []
        response["result"] = {"status": "Failure", "message": str(exc)}
    else:
        response["convertedObjects"] = converted
        response["result"] = {"status": "Success"}
    return {
        "apiVersion": review.get("apiVersion") or "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": response,
    }
