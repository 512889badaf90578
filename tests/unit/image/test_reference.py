"""Image references, parsed as distribution/reference does."""

from __future__ import annotations

import pytest

from olm.image.errors import ImageError, ImageErrorKind
from olm.image.reference import Reference, parse, plain_http

D = "sha256:" + "a" * 64


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("busybox", Reference("docker.io", "library/busybox", "latest")),
        ("busybox:1.36", Reference("docker.io", "library/busybox", "1.36")),
        ("team/app", Reference("docker.io", "team/app", "latest")),
        ("docker.io/busybox", Reference("docker.io", "library/busybox", "latest")),
        ("index.docker.io/team/app:v1", Reference("docker.io", "team/app", "v1")),
        (
            "quay.io/operatorhubio/catalog:latest",
            Reference("quay.io", "operatorhubio/catalog", "latest"),
        ),
        ("127.0.0.1:5000/olm/samples:v1", Reference("127.0.0.1:5000", "olm/samples", "v1")),
        ("localhost/x", Reference("localhost", "x", "latest")),
        ("localhost:5000/a/b/c:t", Reference("localhost:5000", "a/b/c", "t")),
        (f"quay.io/x/y@{D}", Reference("quay.io", "x/y", None, D)),
        (f"quay.io/x/y:v2@{D}", Reference("quay.io", "x/y", "v2", D)),
        (
            "registry.redhat.io/redhat/community-operator-index:v4.18",
            Reference("registry.redhat.io", "redhat/community-operator-index", "v4.18"),
        ),
        ("[::1]:5000/a:b", Reference("[::1]:5000", "a", "b")),
        ("a__b/c-d--e:T_1.x", Reference("docker.io", "a__b/c-d--e", "T_1.x")),
    ],
)
def test_parse(text: str, expected: Reference) -> None:
    assert parse(text) == expected
    assert parse(str(expected)) == expected


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("https://quay.io/x", "URL scheme"),
        ("quay.io/X/y", "lowercase"),
        ("quay.io/x/y:", "tag ''"),
        ("quay.io/x/y:-bad", "tag '-bad'"),
        ("quay.io/x/y@sha256:abc", "digest"),
        ("quay.io/x/y@sha256:" + "A" * 64, "64 lowercase hex"),
        ("quay.io//y", "empty"),
        ("quay.io/x/y/", "empty"),
    ],
)
def test_invalid_references_say_why(text: str, fragment: str) -> None:
    with pytest.raises(ImageError) as raised:
        parse(text)
    assert raised.value.kind is ImageErrorKind.INVALID_REFERENCE
    assert fragment in str(raised.value)


@pytest.mark.parametrize(
    ("text", "reference", "api_host"),
    [
        ("busybox", "latest", "registry-1.docker.io"),
        (f"quay.io/x@{D}", D, "quay.io"),
        (f"quay.io/x:v1@{D}", D, "quay.io"),
    ],
)
def test_what_is_asked_of_the_registry(text: str, reference: str, api_host: str) -> None:
    parsed = parse(text)
    assert parsed.reference == reference
    assert parsed.api_host == api_host


@pytest.mark.parametrize(
    ("registry", "insecure", "expected"),
    [
        ("127.0.0.1:5000", set(), True),
        ("localhost:5000", set(), True),
        ("localhost", set(), True),
        ("[::1]:5000", set(), True),
        ("quay.io", set(), False),
        ("registry.lan:5000", {"registry.lan:5000"}, True),
        ("registry.lan:5001", {"registry.lan:5000"}, False),
        ("127.0.0.2:5000", set(), False),
    ],
)
def test_plain_http_only_for_loopback_and_configured_registries(
    registry: str, insecure: set[str], expected: bool
) -> None:
    assert plain_http(registry, insecure) is expected
