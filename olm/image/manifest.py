"""Image manifests and indexes (Docker v2 schema 2 and OCI), and the choice of one platform's
image from an index.

Invariants: pure; a document is either an `Index` or a `Manifest` (or an UNSUPPORTED
ImageError naming what it is); `select` picks linux/amd64 (no variant, or v1), skipping
attestation entries, and says which platforms there are when none fits.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from olm.image.errors import ImageError, ImageErrorKind

DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
DOCKER_SCHEMA1 = "application/vnd.docker.distribution.manifest.v1+json"
DOCKER_SCHEMA1_SIGNED = "application/vnd.docker.distribution.manifest.v1+prettyjws"
DOCKER_CONFIG = "application/vnd.docker.container.image.v1+json"
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
OCI_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
OCI_LAYER_TAR = "application/vnd.oci.image.layer.v1.tar"
OCI_LAYER_ZSTD = "application/vnd.oci.image.layer.v1.tar+zstd"

MANIFEST_TYPES = (OCI_MANIFEST, DOCKER_MANIFEST)
INDEX_TYPES = (OCI_INDEX, DOCKER_LIST)
ACCEPT = ", ".join((*MANIFEST_TYPES, *INDEX_TYPES))
LAYER_TYPES = (
    OCI_LAYER_GZIP,
    OCI_LAYER_TAR,
    DOCKER_LAYER,
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
)

WANTED_OS, WANTED_ARCH = "linux", "amd64"


@dataclass(frozen=True)
class Descriptor:
    media_type: str
    digest: str
    size: int
    platform: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, raw: Any) -> Descriptor:
        if not isinstance(raw, dict) or not isinstance(raw.get("digest"), str):
            raise ImageError(ImageErrorKind.CORRUPT, "a manifest entry has no digest")
        size = raw.get("size")
        platform = raw.get("platform")
        annotations = raw.get("annotations")
        return cls(
            media_type=str(raw.get("mediaType") or ""),
            digest=raw["digest"],
            size=size if isinstance(size, int) else -1,
            platform=platform if isinstance(platform, dict) else {},
            annotations=annotations if isinstance(annotations, dict) else {},
        )


@dataclass(frozen=True)
class Manifest:
    media_type: str
    config: Descriptor
    layers: tuple[Descriptor, ...]


@dataclass(frozen=True)
class Index:
    media_type: str
    manifests: tuple[Descriptor, ...]


def parse(body: bytes, content_type: str = "") -> Manifest | Index:
    try:
        document = json.loads(body)
    except ValueError as exc:
        raise ImageError(
            ImageErrorKind.CORRUPT, "the registry's manifest is not JSON", repr(exc)
        ) from exc
    if not isinstance(document, dict):
        raise ImageError(ImageErrorKind.CORRUPT, "the registry's manifest is not a JSON object")
    media = str(document.get("mediaType") or content_type.split(";")[0].strip())
    if media in (DOCKER_SCHEMA1, DOCKER_SCHEMA1_SIGNED) or document.get("schemaVersion") == 1:
        raise ImageError(
            ImageErrorKind.UNSUPPORTED,
            "the image uses Docker's old manifest schema 1; push it again with a current tool "
            "(schema 2 or OCI)",
        )
    if media in INDEX_TYPES or (media not in MANIFEST_TYPES and "manifests" in document):
        entries = document.get("manifests")
        if not isinstance(entries, list):
            raise ImageError(ImageErrorKind.CORRUPT, "the image index has no manifests list")
        return Index(media or OCI_INDEX, tuple(Descriptor.of(e) for e in entries))
    if media in MANIFEST_TYPES or "layers" in document:
        layers = document.get("layers")
        if not isinstance(layers, list) or "config" not in document:
            raise ImageError(ImageErrorKind.CORRUPT, "the image manifest has no config or layers")
        return Manifest(
            media or OCI_MANIFEST,
            Descriptor.of(document["config"]),
            tuple(Descriptor.of(layer) for layer in layers),
        )
    raise ImageError(
        ImageErrorKind.UNSUPPORTED,
        f"the registry answered with a {media or 'document'} where an image manifest or index "
        "was expected",
    )


def _platform(descriptor: Descriptor) -> str:
    p = descriptor.platform
    text = f"{p.get('os', '?')}/{p.get('architecture', '?')}"
    return text + (f"/{p['variant']}" if p.get("variant") else "")


def select(index: Index, os: str = WANTED_OS, architecture: str = WANTED_ARCH) -> Descriptor:
    """The index entry for os/architecture (an entry without platform counts when it is alone)."""
    images = [
        d
        for d in index.manifests
        if d.annotations.get("vnd.docker.reference.type") != "attestation-manifest"
        and d.platform.get("os") != "unknown"
    ]
    fits = [
        d
        for d in images
        if d.platform.get("os") == os
        and d.platform.get("architecture") == architecture
        and d.platform.get("variant") in (None, "", "v1")
    ]
    if fits:
        return fits[0]
    if len(images) == 1 and not images[0].platform:
        return images[0]
    shown = ", ".join(sorted({_platform(d) for d in images})) or "none"
    raise ImageError(
        ImageErrorKind.UNSUPPORTED,
        f"the image index has no {os}/{architecture} image (it has: {shown})",
    )


def layer_compression(descriptor: Descriptor) -> str:
    """'gzip', 'tar' or 'zstd' by media type ('' for an unknown one: sniff the bytes)."""
    media = descriptor.media_type
    if media.endswith("+zstd") or media.endswith(".zstd"):
        return "zstd"
    if media.endswith("gzip"):
        return "gzip"
    if media == OCI_LAYER_TAR or media.endswith(".tar"):
        return "tar"
    return ""
