"""Fixtures of several e2e modules: the local cluster's image registry, and a catalog served
over gRPC from a directory the test writes (started and stopped by the test, stopped at the end
in any case)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from olm.devcluster.registry import REGISTRY_ENV
from tests.support.catalog_server import Server
from tests.support.cluster import ControlPlane


@pytest.fixture
def registry(control_plane: ControlPlane) -> str:
    address = control_plane.env().get(REGISTRY_ENV)
    if not address:
        pytest.fail(f"`olm dev env` names no local registry ({REGISTRY_ENV}); see olm dev status")
    return address


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path)
    yield server
    server.stop()
