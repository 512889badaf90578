"""The API server's own ceiling for copied-CSV writes: a bare client (olm-py's gateway, no
controller, no cache, no queue) creates a copy of each operator's CSV in every tenant namespace
and writes its status, as many writes at once as olm-py's copy writer allows. olm-py's copy
rate is reported as a fraction of this rate (benchmarks/global_operators.py, round "ceiling").

The copies are named `ceiling-<r>-<i>.v1.0.0` (labelled `olm-py.bench/ceiling`), so they
never collide with olm-py's own; `olm run` is stopped while they are written. The pass runs
`repeats` times (fresh names each time) and the best rate is the ceiling: on a shared machine a
single pass swings with the load.
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


def _pass(
    gateway: Gateway, tenants: list[str], operators: int, repeat: int, workers: int
) -> tuple[int, float]:
    protos = []
    for index in range(operators):
        original = gateway.get(
            CSV_API_VERSION, "ClusterServiceVersion", "operators", f"global-{index}.v1.0.0"
        )
        original["metadata"]["name"] = f"ceiling-{repeat}-{index}.v1.0.0"
        protos.append(copy_prototype(original))

    def write(job: tuple[int, str]) -> None:
        proto, namespace = protos[job[0]], job[1]
        body = proto.body(namespace)
        body["metadata"]["labels"][LABEL] = "true"
        gateway.apply(body)
        gateway.patch_status(
            CSV_API_VERSION, "ClusterServiceVersion", namespace, proto.name, dict(proto.status)
        )

    jobs = [(i, ns) for i in range(operators) for ns in tenants]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(write, jobs))
    return len(jobs), time.monotonic() - started


def measure(
    cluster: DevCluster, operators: int, progress: Progress, workers: int, repeats: int = 2
) -> dict[str, Any]:
    """Write `operators` x tenants copies (the same two requests olm-py makes for a new copy:
    a server-side apply and a status write) at `workers` at once, `repeats` times."""
    gateway = Gateway(api_client(cluster.kubeconfig_path))
    tenants = _tenants(gateway)
    rates = []
    for repeat in range(repeats):
        copies, seconds = _pass(gateway, tenants, operators, repeat, workers)
        rates.append(copies / seconds if seconds > 0 else 0.0)
        progress.say(
            f"ceiling: {copies} copies in {seconds:.1f} s ({rates[-1]:.1f}/s, {workers} at once)"
        )
    return {
        "copies": operators * len(tenants),
        "copies_per_second": round(max(rates), 1),
        "each_pass_per_second": [round(rate, 1) for rate in rates],
        "workers": workers,
        "requests_per_copy": 2,
    }
