"""What a CatalogSource's spec asks olm-py to read (OLM v0 §5.6 step 1, "Validate"), and how
often (`spec.updateStrategy.registryPoll.interval`, a Go duration).

Invariants: pure; every spec gets exactly one answer: read a registry at an address, pull a
catalog image (`spec.image`, read in-process: no registry pod), read a ConfigMap, or a
SpecInvalidError sentence naming the field and the fix. `spec.address` wins over
`spec.image`, as in OLM. `spec.grpcPodConfig` is accepted and has no effect (there is no pod).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.catalogsource import SourceType
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label

CATALOG_SOURCE_API_VERSION = KINDS[Kind.CATALOG_SOURCE].api_version
# olm-py polls address and ConfigMap catalogs this often unless the spec says otherwise.
DEFAULT_POLL_SECONDS = 30.0
MIN_POLL_SECONDS = 1.0
# The rule of the catalog Problem (a warning) left on a bundle whose image could not be
# unpacked: its message names the image and says why; its location is "package/bundle".
BUNDLE_UNPACK_RULE = "bundle-unpack"


@dataclass(frozen=True)
class ReadRegistry:
    """Read the catalog over operator-registry's gRPC API at `address` (host:port)."""

    address: str


@dataclass(frozen=True)
class ReadImage:
    """Pull the catalog image `image` (its file-based catalog at the label's path), with the
    pull secrets named in `spec.secrets` (in the CatalogSource's namespace)."""

    image: str
    secrets: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReadConfigMap:
    """Read the catalog from the ConfigMap `name` in the CatalogSource's namespace."""

    name: str


@dataclass(frozen=True)
class SpecInvalid:
    """Nothing to read: the spec is wrong (or asks for what olm-py does not do)."""

    message: str


Read = ReadRegistry | ReadImage | ReadConfigMap | SpecInvalid

SERVE_HINT = (
    "serve the catalog (olm catalog serve or opm serve) and set spec.address to its host:port"
)


def what_to_read(source: Mapping[str, Any]) -> Read:
    spec = source.get("spec") or {}
    kind = spec.get("sourceType")
    if kind == SourceType.GRPC:
        address = spec.get("address")
        if isinstance(address, str) and address.strip():
            return ReadRegistry(address.strip())
        image = spec.get("image")
        if isinstance(image, str) and image.strip():
            secrets = spec.get("secrets")
            names = (
                tuple(n.strip() for n in secrets if isinstance(n, str) and n.strip())
                if isinstance(secrets, list)
                else ()
            )
            return ReadImage(image.strip(), names)
        if image:
            return SpecInvalid(
                f"spec.image {image!r} is not a string: set it to a catalog image reference "
                "like registry.example.com/team/catalog:v1"
            )
        return SpecInvalid(
            "image and address unset: at least one must be set for sourcetype: grpc; " + SERVE_HINT
        )
    if kind in (SourceType.CONFIGMAP, SourceType.INTERNAL):
        name = spec.get("configMap")
        if isinstance(name, str) and name.strip():
            return ReadConfigMap(name.strip())
        return SpecInvalid(
            f"configmap name unset: must be set for sourcetype: {kind}; set spec.configMap to "
            "the name of the ConfigMap that holds the catalog"
        )
    shown = repr(kind) if kind else "(empty)"
    return SpecInvalid(
        f"spec.sourceType {shown} is not one of grpc, configmap, internal: use grpc with "
        "spec.address, or configmap with spec.configMap"
    )


_UNITS = {
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ns": 1e-9,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|μs|ns|h|m|s)")


def parse_duration(text: str) -> float | None:
    """A Go duration (`time.ParseDuration`: "30s", "1h30m", "1.5m", "0") in seconds, or None."""
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        return None
    total, position = 0.0, 0
    for match in _PART.finditer(body):
        if match.start() != position:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        position = match.end()
    if position != len(body):
        return None
    return -total if text.startswith("-") else total


def poll_seconds(spec: Mapping[str, Any]) -> tuple[float, str]:
    """How often to read the catalog, and a sentence when the interval is not usable."""
    raw = ((spec.get("updateStrategy") or {}).get("registryPoll") or {}).get("interval")
    if raw is None or raw == "":
        return DEFAULT_POLL_SECONDS, ""
    text = str(raw)
    seconds = parse_duration(text)
    if seconds is None:
        return (
            DEFAULT_POLL_SECONDS,
            f"spec.updateStrategy.registryPoll.interval {text!r} is not a duration like 30s or "
            f"10m; using {DEFAULT_POLL_SECONDS:.0f}s",
        )
    if seconds <= 0:
        return (
            DEFAULT_POLL_SECONDS,
            f"spec.updateStrategy.registryPoll.interval {text!r} must be longer than 0; using "
            f"{DEFAULT_POLL_SECONDS:.0f}s",
        )
    return max(MIN_POLL_SECONDS, seconds), ""


def configmap_ownership(
    source: Mapping[str, Any], configmap: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The merge patch that makes a ConfigMap catalog's ConfigMap owned by its CatalogSource,
    as OLM's catalog operator does (a non-controller ownerReference, so the ConfigMap goes with
    the CatalogSource, and `olm.managed: "false"` on a ConfigMap that has no `olm.managed`
    label); None when it already is. The patch carries every ownerReference the ConfigMap has
    and its resourceVersion, so it adds without taking anything away, and is refused (409)
    when the ConfigMap changed since it was read. (Not a server-side apply: olm-py's one field
    manager would drop what it applied before, e.g. another CatalogSource's owner.)"""
    meta = body.meta(source)
    uid = meta.get("uid")
    cm_meta = body.meta(configmap)
    owners = list(cm_meta.get("ownerReferences") or [])
    owned = any(o.get("uid") == uid for o in owners)
    labels = cm_meta.get("labels") or {}
    if not uid or (owned and Label.MANAGED in labels):
        return None
    patch_meta: dict[str, Any] = {"resourceVersion": cm_meta.get("resourceVersion")}
    if not owned:
        patch_meta["ownerReferences"] = [
            *owners,
            {
                "apiVersion": str(source.get("apiVersion") or CATALOG_SOURCE_API_VERSION),
                "kind": "CatalogSource",
                "name": meta.get("name"),
                "uid": uid,
                "controller": False,
                "blockOwnerDeletion": False,
            },
        ]
    if Label.MANAGED not in labels:
        patch_meta["labels"] = {Label.MANAGED: "false"}
    return {"metadata": patch_meta}
