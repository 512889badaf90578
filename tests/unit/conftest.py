"""Fixtures of several unit packages: the Memcached kind known to the fake gateway."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from olm.kube.resources import RESOURCES, register_resource


@pytest.fixture
def memcached_kind() -> Iterator[None]:
    """The fake lists Memcacheds once it knows the kind; the table is shared, so it is put back."""
    key = ("cache.example.com/v1alpha1", "Memcached")
    known = key in RESOURCES
    register_resource(*key, "memcacheds", True)
    yield
    if not known:
        RESOURCES.pop(key, None)
