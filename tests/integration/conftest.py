"""Fixtures of several integration modules: the local cluster's pod network (these tests
use its addresses, so it overrides the root conftest's plain skip of the same name)."""

from __future__ import annotations

import pytest

from olm.devcluster import network
from tests.support.cluster import ControlPlane


@pytest.fixture
def pod_network(control_plane: ControlPlane) -> network.ClusterNetwork:
    claimed = network.load(control_plane.cluster.state_dir)
    if claimed is None:
        pytest.skip(
            "the local cluster has no pod network "
            f"({network.unavailable_reason(install=False) or 'see the olm dev up output'})"
        )
    return claimed
