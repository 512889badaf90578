"""The chart's stories' helpers: a fresh cluster of its own for a Helm install (stopped by the
next one: `STARTED`), and what they read of the olm-py pods (pods, lease holder, CRDs)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.progress import Progress
from tests.support.cluster import ControlPlane, session_state_root


def fresh_cluster(tag: str) -> Iterator[ControlPlane]:
    """A new local cluster with nothing of OLM in it, stopped afterwards."""
    binaries = ensure_binaries(progress=Progress())
    # `session-...-<pid>`: a crashed run's cluster is stopped by the next session's sweep.
    state = session_state_root() / f"session-{tag}-{os.getpid()}"
    cluster = DevCluster(state, binaries=binaries, progress=Progress())
    cluster.down()
    cluster.up()
    STARTED.append(cluster)
    try:
        yield ControlPlane(cluster, binaries)
    finally:
        cluster.down()


def olm_pods(plane: ControlPlane) -> list[str]:
    pods = plane.get_json("pods", "-n", "olm", "-l", "app.kubernetes.io/name=olm-py")["items"]
    return sorted(p["metadata"]["name"] for p in pods if not p["metadata"].get("deletionTimestamp"))


def lease_holder(plane: ControlPlane) -> str:
    result = plane.kubectl(
        "get", "lease", "olm-py", "-n", "olm", "-o", "jsonpath={.spec.holderIdentity}", check=False
    )
    return result.stdout if result.returncode == 0 else ""


def pod_dir(plane: ControlPlane, pod: str) -> Path:
    return plane.cluster.state_dir / "pods" / f"olm_{pod}"


def olm_crds(plane: ControlPlane) -> list[str]:
    items = plane.get_json("crd")["items"]
    return sorted(
        c["metadata"]["name"] for c in items if c["spec"]["group"] == "operators.coreos.com"
    )


STARTED: list[DevCluster] = []
