"""Blob cache eviction, docker-config credentials and challenges, FROM-scratch images."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from olm.image.auth import (
    Credentials,
    credentials_for,
    local_configs,
    parse_challenge,
    secret_config,
)
from olm.image.build import scratch_image
from olm.image.cache import BlobCache, CachedBlob, to_evict
from olm.image.errors import ImageError, ImageErrorKind


@pytest.mark.parametrize(
    ("blobs", "limit", "keep", "evicted"),
    [
        ([("a", 10, 1), ("b", 10, 2)], 20, set(), []),
        ([("a", 10, 1), ("b", 10, 2)], 15, set(), ["a"]),
        ([("a", 10, 3), ("b", 10, 2), ("c", 10, 1)], 10, set(), ["c", "b"]),
        ([("a", 10, 1), ("b", 10, 2)], 15, {"a"}, ["b"]),
        ([("a", 10, 1), ("b", 10, 2)], 0, {"a", "b"}, []),
        ([("b", 5, 1), ("a", 5, 1)], 5, set(), ["a"]),
    ],
)
def test_least_recently_used_blobs_go_first(
    blobs: list[tuple[str, int, float]], limit: int, keep: set[str], evicted: list[str]
) -> None:
    entries = [CachedBlob(d, size, used) for d, size, used in blobs]
    assert to_evict(entries, limit, frozenset(keep)) == evicted


def test_the_cache_keeps_only_blobs_whose_digest_matches(tmp_path: Path) -> None:
    cache = BlobCache(tmp_path, max_bytes=10)
    data = b"hello"
    good = "sha256:" + hashlib.sha256(data).hexdigest()
    assert cache.put_bytes(good, data).read_bytes() == data
    assert cache.get(good) is not None
    wrong = "sha256:" + "0" * 64
    with pytest.raises(ImageError) as raised:
        cache.put_bytes(wrong, data)
    assert raised.value.kind is ImageErrorKind.CORRUPT
    assert cache.get(wrong) is None
    assert [p.name for p in (tmp_path / "sha256").iterdir()] == [good.split(":")[1]]
    other = b"0123456789"
    cache.put_bytes("sha256:" + hashlib.sha256(other).hexdigest(), other)
    assert cache.trim() == [good]


def auth(user: str, password: str) -> dict[str, str]:
    return {"auth": base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.mark.parametrize(
    ("registry", "configs", "expected"),
    [
        ("quay.io", [{"auths": {"quay.io": auth("u", "p")}}], Credentials("u", "p")),
        (
            "quay.io",
            [{"auths": {"https://quay.io/v2/": auth("u", "p:x")}}],
            Credentials("u", "p:x"),
        ),
        (
            "docker.io",
            [{"auths": {"https://index.docker.io/v1/": auth("d", "p")}}],
            Credentials("d", "p"),
        ),
        ("127.0.0.1:5000", [{"127.0.0.1:5000": auth("old", "cfg")}], Credentials("old", "cfg")),
        (
            "quay.io",
            [{"auths": {"quay.io": {"username": "u", "password": "p"}}}],
            Credentials("u", "p"),
        ),
        ("quay.io", [{"auths": {"quay.io": {"identitytoken": "t"}}}], Credentials("", "", "t")),
        ("quay.io", [{"auths": {"quay.io:443": auth("u", "p")}}], None),
        (
            "quay.io",
            [{"auths": {"quay.io": {}}}, {"auths": {"quay.io": auth("b", "2")}}],
            Credentials("b", "2"),
        ),
        ("quay.io", [{"auths": {"quay.io": {"auth": "!!!"}}}], None),
        ("ghcr.io", [{"auths": {"quay.io": auth("u", "p")}}], None),
    ],
)
def test_credentials_for(
    registry: str, configs: list[dict[str, Any]], expected: Credentials | None
) -> None:
    assert credentials_for(registry, configs) == expected


def encoded(document: object) -> str:
    return base64.b64encode(json.dumps(document).encode()).decode()


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        ({"data": {".dockerconfigjson": encoded({"auths": {"q": {}}})}}, {"auths": {"q": {}}}),
        ({"data": {".dockercfg": encoded({"q": {}})}}, {"q": {}}),
        ({"data": {".dockerconfigjson": "!!!"}}, None),
        ({"data": {".dockerconfigjson": encoded([1])}}, None),
        ({"data": {"token": "x"}}, None),
        ({}, None),
    ],
)
def test_secret_config(secret: dict[str, Any], expected: object) -> None:
    assert secret_config(secret) == expected


def test_local_configs_reads_the_docker_config(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"auths": {"q": auth("u", "p")}}))
    (tmp_path / "auth.json").write_text("not json")
    found = local_configs(
        {"DOCKER_CONFIG": str(tmp_path), "REGISTRY_AUTH_FILE": str(tmp_path / "auth.json")}
    )
    assert credentials_for("q", found) == Credentials("u", "p")


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"',
            (
                "bearer",
                {
                    "realm": "https://auth.docker.io/token",
                    "service": "registry.docker.io",
                    "scope": "repository:library/busybox:pull",
                },
            ),
        ),
        ('Basic realm="Registry Realm"', ("basic", {"realm": "Registry Realm"})),
        (
            "Bearer realm=https://q/t,service=q",
            ("bearer", {"realm": "https://q/t", "service": "q"}),
        ),
        ("", ("", {})),
    ],
)
def test_parse_challenge(header: str, expected: tuple[str, dict[str, str]]) -> None:
    assert parse_challenge(header) == expected


def test_a_scratch_image_is_deterministic_with_labels_and_diff_ids() -> None:
    files = {"configs/catalog.yaml": b"schema: olm.package\nname: p\n"}
    labels = {"operators.operatorframework.io.index.configs.v1": "/configs"}
    image = scratch_image(files, labels)
    assert image.digest == scratch_image(files, labels).digest
    config = json.loads(image.config.data)
    assert config["config"]["Labels"] == labels
    assert (config["os"], config["architecture"]) == ("linux", "amd64")
    tar = gzip.decompress(image.layers[0].data)
    assert config["rootfs"]["diff_ids"] == ["sha256:" + hashlib.sha256(tar).hexdigest()]
    manifest = json.loads(image.manifest)
    assert manifest["config"]["digest"] == image.config.digest
    assert [layer["digest"] for layer in manifest["layers"]] == [image.layers[0].digest]
    assert manifest["layers"][0]["size"] == len(image.layers[0].data)
