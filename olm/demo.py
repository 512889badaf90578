"""`make demo`: the story on the local cluster, told with plain kubectl output.

For now: start the local control plane (building it on first use), install olm-py's CRDs,
namespaces and global OperatorGroup, and show what an admin checks first. The cluster is left
running at the end, with a line saying how to look around and how to stop it.
"""

from __future__ import annotations

import sys

from olm.devcluster import manifests
from olm.devcluster.build import BuildError, ensure_binaries
from olm.devcluster.cluster import ClusterError, DevCluster
from olm.devcluster.progress import Progress


def show(cluster: DevCluster, *args: str) -> None:
    print(f"\n$ kubectl {' '.join(args)}", flush=True)
    print(cluster.kubectl(*args).rstrip(), flush=True)


def main() -> int:
    progress = Progress()
    try:
        cluster = DevCluster(progress=progress)
        if not cluster.is_up():
            cluster.binaries = ensure_binaries(progress=progress)
        cluster.up()
        progress.say(
            "Installing olm-py's CRDs, the olm and operators namespaces, and the global OperatorGroup"
        )
        manifests.install(cluster)
    except (BuildError, ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(
        "\n== The local cluster: real etcd, kube-apiserver, controller-manager, scheduler; kwok nodes"
    )
    show(cluster, "get", "nodes")
    print("\n== OLM's API (operators.coreos.com) is served")
    show(cluster, "api-resources", "--api-group=operators.coreos.com")
    show(cluster, "get", "operatorgroup", "-n", "operators")
    show(cluster, "get", "csv", "-A")
    print(
        "\nThe cluster is still running. Look around with:\n"
        '    eval "$(.venv/bin/olm dev env)"; kubectl get csv,sub,ip,og,catsrc -A\n'
        "Stop it with:\n"
        "    .venv/bin/olm dev down"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
