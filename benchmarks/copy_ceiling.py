"""The API server's own ceiling for copied-CSV writes: a bare client (olm-py's gateway, no
controller, no cache, no queue) creates a copy of each operator's CSV in every tenant namespace
and writes its status, as many writes at once as olm-py's copy writer allows. olm-py's copy
rate is reported as a fraction of this rate (benchmarks/global_operators.py, round "ceiling").

The copies are named `ceiling-<i>.v1.0.0` (labelled `olm-py.bench/ceiling`), so they never
collide with olm-py's own; `olm run` is stopped while they are written.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from olm.devcluster.cluster import DevCluster
from olm.kube.client import api_client
from olm.kube.gateway import Gateway
from olm.progress import Progress
from olm.scope.copies import copy_prototype

CSV_API_VERSION = "operators.coreos.com/v1alpha1"
LABEL = "olm-py.bench/ceiling"


def olm_py_concurrency() -> int:
    """How many copy writes olm-py has in flight at once."""
    from olm.controllers.scope.state import COPY_WRITE_CONCURRENCY

    return COPY_WRITE_CONCURRENCY


def _tenants(gateway: Gateway) -> list[str]:
    return [
        name for _, name in gateway.list_keys("/api/v1/namespaces") if name.startswith("tenant-")
    ]


def measure(
    cluster: DevCluster, operators: int, progress: Progress, workers: int
) -> dict[str, Any]:
    """Write `operators` x tenants copies (create + status write each) at `workers` at once."""
    gateway = Gateway(api_client(cluster.kubeconfig_path))
    tenants = _tenants(gateway)
    protos = []
    for index in range(operators):
        original = gateway.get(
            CSV_API_VERSION, "ClusterServiceVersion", "operators", f"global-{index}.v1.0.0"
        )
        original["metadata"]["name"] = f"ceiling-{index}.v1.0.0"
        protos.append(copy_prototype(original))

    def write(job: tuple[int, str]) -> None:
        proto, namespace = protos[job[0]], job[1]
        body = proto.body(namespace)
        body["metadata"]["labels"][LABEL] = "true"
        gateway.create(body)
        gateway.patch_status(
            CSV_API_VERSION, "ClusterServiceVersion", namespace, proto.name, dict(proto.status)
        )

    jobs = [(i, ns) for i in range(operators) for ns in tenants]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(write, jobs))
    seconds = time.monotonic() - started
    rate = len(jobs) / seconds if seconds > 0 else 0.0
    progress.say(
        f"ceiling: {len(jobs)} copies in {seconds:.1f} s ({rate:.1f}/s, {workers} at once)"
    )
    return {
        "copies": len(jobs),
        "seconds": round(seconds, 1),
        "copies_per_second": round(rate, 1),
        "workers": workers,
        "requests_per_copy": 2,
    }
