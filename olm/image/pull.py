"""Whole images: resolve a tag to a digest, pull (manifest or index -> linux/amd64 manifest ->
config -> layers, each digest checked, into the blob cache) and unpack; push a built image.

Invariants: the manifest digest returned is the one of what was read (the index's when the
reference names an index), so comparing it with the previous poll is enough to know whether
anything changed; a pull never leaves a half-unpacked directory behind (the caller's
`destination` holds the whole filesystem or the call raised).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from olm.image.auth import credentials_for, local_configs
from olm.image.build import Image
from olm.image.cache import BlobCache
from olm.image.client import DEFAULT_RETRIES, DEFAULT_TIMEOUT, RegistryClient
from olm.image.errors import ImageError, ImageErrorKind
from olm.image.layers import apply_layers
from olm.image.manifest import LAYER_TYPES, Index, Manifest, layer_compression, parse, select
from olm.image.reference import Reference, is_loopback

INSECURE_ENV = "OLM_INSECURE_REGISTRIES"
MIRRORS_ENV = "OLM_REGISTRY_MIRRORS"
EVERY_REGISTRY = "*"


def insecure_from_env(environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """Insecure registries (host[:port], comma-separated in $OLM_INSECURE_REGISTRIES): HTTPS
    without certificate checks, or plain HTTP when they do not speak TLS (olm/image/scheme.py)."""
    text = (environ if environ is not None else os.environ).get(INSECURE_ENV, "")
    return frozenset(part.strip() for part in text.split(",") if part.strip())


def mirrors_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Registry mirrors ($OLM_REGISTRY_MIRRORS: `registry=location` pairs, comma-separated; a
    location is host[:port] with an optional path prefix; registry `*` is every registry that is
    not loopback): images of `registry` are pulled from the location instead, as a container
    runtime's mirror configuration does."""
    text = (environ if environ is not None else os.environ).get(MIRRORS_ENV, "")
    pairs = (part.split("=", 1) for part in text.split(",") if "=" in part)
    return {registry.strip(): location.strip().rstrip("/") for registry, location in pairs}


def mirrored(reference: Reference, mirrors: Mapping[str, str]) -> Reference:
    """Where `reference` is pulled from: its mirror's host, the mirror's path prefix before the
    repository (`*`: the prefix and then the registry's name), else itself (pure)."""
    location = mirrors.get(reference.registry)
    every = location is None and not is_loopback(reference.registry)
    if every:
        location = mirrors.get(EVERY_REGISTRY)
    if not location:
        return reference
    host, _, prefix = location.partition("/")
    parts = [prefix] if prefix else []
    if every:
        parts.append(reference.registry)
    return replace(reference, registry=host, repository="/".join([*parts, reference.repository]))


@dataclass
class Options:
    configs: Sequence[Mapping[str, Any]] = field(default_factory=list)  # docker configs, first wins
    insecure: frozenset[str] = field(default_factory=insecure_from_env)
    cache: BlobCache = field(default_factory=BlobCache)
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    use_local_configs: bool = True
    mirrors: Mapping[str, str] = field(default_factory=mirrors_from_env)

    def client(self, reference: Reference) -> RegistryClient:
        configs = [*self.configs, *(local_configs() if self.use_local_configs else [])]
        return RegistryClient(
            reference.registry,
            api_host=reference.api_host,
            credentials=credentials_for(reference.registry, configs),
            insecure=self.insecure,
            timeout=self.timeout,
            retries=self.retries,
        )


@dataclass(frozen=True)
class Pulled:
    digest: str  # of the manifest (or index) the reference named
    config: dict[str, Any]

    @property
    def labels(self) -> dict[str, str]:
        labels = (self.config.get("config") or {}).get("Labels") or {}
        return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}


def resolve(reference: Reference, options: Options) -> str:
    """The digest the reference names now (a HEAD request when it is a tag)."""
    if reference.digest:
        return reference.digest
    reference = mirrored(reference, options.mirrors)
    digest, _ = options.client(reference).resolve(reference.repository, reference.reference)
    return digest


def _image_manifest(client: RegistryClient, reference: Reference) -> tuple[str, Manifest]:
    body, media, digest = client.manifest(reference.repository, reference.reference)
    document = parse(body, media)
    if isinstance(document, Index):
        chosen = select(document)
        inner, inner_media, _ = client.manifest(reference.repository, chosen.digest)
        document = parse(inner, inner_media or chosen.media_type)
        if isinstance(document, Index):
            raise ImageError(ImageErrorKind.UNSUPPORTED, "the image index names another index")
    return digest, document


def pull(
    reference: Reference, destination: Path, options: Options, only: str | None = None
) -> Pulled:
    """Pull and unpack the image into `destination` (only the `only` path prefix, if given)."""
    reference = mirrored(reference, options.mirrors)
    client = options.client(reference)
    digest, manifest = _image_manifest(client, reference)
    config_path = client.blob(reference.repository, manifest.config.digest, options.cache)
    try:
        config = json.loads(config_path.read_bytes())
    except ValueError as exc:
        raise ImageError(ImageErrorKind.CORRUPT, "the image config is not JSON", repr(exc)) from exc
    if not isinstance(config, dict):
        raise ImageError(ImageErrorKind.CORRUPT, "the image config is not a JSON object")
    layers = []
    for layer in manifest.layers:
        if (
            layer.media_type
            and layer.media_type not in LAYER_TYPES
            and not layer.media_type.endswith(("+gzip", ".tar", "+zstd"))
        ):
            raise ImageError(
                ImageErrorKind.UNSUPPORTED,
                f"the image has a layer of media type {layer.media_type}, which is not a "
                "filesystem layer (is this an OCI artifact rather than an image?)",
            )
        path = client.blob(reference.repository, layer.digest, options.cache)
        layers.append((path, layer_compression(layer)))
    apply_layers(layers, destination, only)
    keep = frozenset([manifest.config.digest, *(layer.digest for layer in manifest.layers)])
    options.cache.trim(keep)
    return Pulled(digest, config)


def label_of(reference: Reference, options: Options) -> Pulled:
    """The manifest digest and config of an image, without its layers."""
    reference = mirrored(reference, options.mirrors)
    client = options.client(reference)
    digest, manifest = _image_manifest(client, reference)
    config_path = client.blob(reference.repository, manifest.config.digest, options.cache)
    try:
        config = json.loads(config_path.read_bytes())
    except ValueError as exc:
        raise ImageError(ImageErrorKind.CORRUPT, "the image config is not JSON", repr(exc)) from exc
    return Pulled(digest, config if isinstance(config, dict) else {})


def push(reference: Reference, image: Image, options: Options) -> str:
    """Push the image's blobs and its manifest under the reference's tag; its digest."""
    client = options.client(reference)
    for blob in (*image.layers, image.config):
        client.push_blob(reference.repository, blob.digest, blob.data)
    tag = reference.tag if reference.digest is None else reference.digest
    return client.push_manifest(
        reference.repository, tag or "latest", image.manifest, image.media_type
    )
