"""Fixtures of several e2e modules: the local cluster's image registry."""

from __future__ import annotations

import pytest

from olm.devcluster.registry import REGISTRY_ENV
from tests.support.cluster import ControlPlane


@pytest.fixture
def registry(control_plane: ControlPlane) -> str:
    address = control_plane.env().get(REGISTRY_ENV)
    if not address:
        pytest.fail(f"`olm dev env` names no local registry ({REGISTRY_ENV}); see olm dev status")
    return address
