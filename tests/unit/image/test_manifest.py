"""Manifests and indexes (Docker v2, OCI) and the choice of linux/amd64."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm.image.errors import ImageError, ImageErrorKind
from olm.image.manifest import (
    DOCKER_LIST,
    DOCKER_MANIFEST,
    OCI_INDEX,
    OCI_MANIFEST,
    Descriptor,
    Index,
    Manifest,
    layer_compression,
    parse,
    select,
)


def digest(c: str) -> str:
    return "sha256:" + c * 64


def entry(arch: str | None, os: str = "linux", variant: str = "", **extra: Any) -> dict[str, Any]:
    found: dict[str, Any] = {
        "mediaType": OCI_MANIFEST,
        "digest": digest(arch[0] if arch else "f"),
        "size": 10,
    }
    if arch:
        found["platform"] = {
            "os": os,
            "architecture": arch,
            **({"variant": variant} if variant else {}),
        }
    found.update(extra)
    return found


MANIFEST_BODY = {
    "config": {
        "mediaType": "application/vnd.oci.image.config.v1+json",
        "digest": digest("c"),
        "size": 2,
    },
    "layers": [
        {
            "mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
            "digest": digest("d"),
            "size": 3,
        }
    ],
}


@pytest.mark.parametrize(
    ("body", "content_type", "expected_type", "media"),
    [
        (
            {"schemaVersion": 2, "mediaType": OCI_MANIFEST, **MANIFEST_BODY},
            "",
            Manifest,
            OCI_MANIFEST,
        ),
        ({"schemaVersion": 2, **MANIFEST_BODY}, OCI_MANIFEST, Manifest, OCI_MANIFEST),
        ({"schemaVersion": 2, **MANIFEST_BODY}, "", Manifest, OCI_MANIFEST),
        (
            {"schemaVersion": 2, "mediaType": DOCKER_MANIFEST, **MANIFEST_BODY},
            "",
            Manifest,
            DOCKER_MANIFEST,
        ),
        (
            {"schemaVersion": 2, "mediaType": DOCKER_LIST, "manifests": [entry("amd64")]},
            "",
            Index,
            DOCKER_LIST,
        ),
        ({"schemaVersion": 2, "manifests": [entry("amd64")]}, "", Index, OCI_INDEX),
        ({"schemaVersion": 2, "manifests": []}, OCI_INDEX + "; charset=utf-8", Index, OCI_INDEX),
    ],
)
def test_parse(body: dict[str, Any], content_type: str, expected_type: type, media: str) -> None:
    found = parse(json.dumps(body).encode(), content_type)
    assert isinstance(found, expected_type)
    assert found.media_type == media


@pytest.mark.parametrize(
    ("body", "kind", "fragment"),
    [
        (b"not json", ImageErrorKind.CORRUPT, "not JSON"),
        (b"[1]", ImageErrorKind.CORRUPT, "not a JSON object"),
        (
            json.dumps({"schemaVersion": 1, "fsLayers": []}).encode(),
            ImageErrorKind.UNSUPPORTED,
            "schema 1",
        ),
        (
            json.dumps({"mediaType": OCI_MANIFEST, "layers": []}).encode(),
            ImageErrorKind.CORRUPT,
            "no config",
        ),
        (
            json.dumps({"mediaType": OCI_INDEX, "manifests": {}}).encode(),
            ImageErrorKind.CORRUPT,
            "no manifests",
        ),
        (
            json.dumps({"mediaType": "application/vnd.foo"}).encode(),
            ImageErrorKind.UNSUPPORTED,
            "vnd.foo",
        ),
        (
            json.dumps({"layers": [{"size": 1}], "config": {}}).encode(),
            ImageErrorKind.CORRUPT,
            "no digest",
        ),
    ],
)
def test_unreadable_documents(body: bytes, kind: ImageErrorKind, fragment: str) -> None:
    with pytest.raises(ImageError) as raised:
        parse(body)
    assert raised.value.kind is kind and fragment in str(raised.value)


@pytest.mark.parametrize(
    ("entries", "chosen"),
    [
        ([entry("arm64", variant="v8"), entry("amd64"), entry("s390x")], digest("a")),
        ([entry("amd64", variant="v2"), entry("amd64", variant="v1")], digest("a")),
        ([entry(None)], digest("f")),
        (
            [
                entry("amd64"),
                {
                    "mediaType": OCI_MANIFEST,
                    "digest": digest("e"),
                    "size": 1,
                    "platform": {"os": "unknown", "architecture": "unknown"},
                    "annotations": {"vnd.docker.reference.type": "attestation-manifest"},
                },
            ],
            digest("a"),
        ),
    ],
)
def test_select_picks_linux_amd64(entries: list[dict[str, Any]], chosen: str) -> None:
    index = Index(OCI_INDEX, tuple(Descriptor.of(e) for e in entries))
    assert select(index).digest == chosen


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        ([entry("arm64"), entry("s390x")], "linux/arm64, linux/s390x"),
        ([entry("amd64", os="windows")], "windows/amd64"),
        ([], "none"),
        ([entry(None), entry(None)], "?/?"),
    ],
)
def test_select_says_which_platforms_there_are(
    entries: list[dict[str, Any]], fragment: str
) -> None:
    index = Index(OCI_INDEX, tuple(Descriptor.of(e) for e in entries))
    with pytest.raises(ImageError) as raised:
        select(index)
    assert raised.value.kind is ImageErrorKind.UNSUPPORTED
    assert "no linux/amd64 image" in str(raised.value) and fragment in str(raised.value)


@pytest.mark.parametrize(
    ("media", "expected"),
    [
        ("application/vnd.oci.image.layer.v1.tar+gzip", "gzip"),
        ("application/vnd.docker.image.rootfs.diff.tar.gzip", "gzip"),
        ("application/vnd.oci.image.layer.v1.tar", "tar"),
        ("application/vnd.oci.image.layer.v1.tar+zstd", "zstd"),
        ("", ""),
    ],
)
def test_layer_compression(media: str, expected: str) -> None:
    assert layer_compression(Descriptor(media, digest("a"), 1)) == expected
