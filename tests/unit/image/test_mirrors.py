"""Registry mirrors ($OLM_REGISTRY_MIRRORS, olm/image/pull.py)."""

from __future__ import annotations

from olm.image.pull import mirrored, mirrors_from_env
from olm.image.reference import parse


def test_mirrors_are_registry_location_pairs() -> None:
    env = {"OLM_REGISTRY_MIRRORS": " quay.io=127.0.0.1:5000/q/ , *=127.0.0.1:5000/all,bad"}
    assert mirrors_from_env(env) == {"quay.io": "127.0.0.1:5000/q", "*": "127.0.0.1:5000/all"}
    assert mirrors_from_env({}) == {}


def test_an_image_is_pulled_from_its_registrys_mirror() -> None:
    mirrors = {"quay.io": "127.0.0.1:5000/q", "*": "127.0.0.1:5000/all"}
    named = mirrored(parse("quay.io/olmtest/index:v1"), mirrors)
    assert str(named) == "127.0.0.1:5000/q/olmtest/index:v1"
    every = mirrored(parse("busybox@sha256:" + "a" * 64), mirrors)
    assert str(every) == "127.0.0.1:5000/all/docker.io/library/busybox@sha256:" + "a" * 64
    local = parse("127.0.0.1:6000/samples:latest")
    assert mirrored(local, mirrors) == local, "a loopback registry is never mirrored"
    assert mirrored(parse("quay.io/a/b:1"), {"quay.io": "mirror.local"}).name == "mirror.local/a/b"
