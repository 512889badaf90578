"""Install olm-py's own manifests (CRDs, namespaces, the global OperatorGroup) into a cluster.

Invariant: applying is idempotent (server-side apply), and the namespaced objects are only
applied once every CRD is Established, so they never race their own types. The manifests are
found through the package (`olm.data.MANIFESTS`), so an installed wheel installs the same CRDs.
"""

from __future__ import annotations

from pathlib import Path

from olm.data import MANIFESTS as MANIFESTS  # re-exported: the demo and benchmarks read it here
from olm.devcluster.cluster import DevCluster

FIELD_MANAGER = "olm-py"


def crd_files(manifests: Path = MANIFESTS) -> list[Path]:
    return sorted((manifests / "crds").glob("*.yaml"))


def install(cluster: DevCluster, manifests: Path = MANIFESTS) -> None:
    """Apply the CRDs, wait until they are Established, then the namespaces and global OG."""
    apply = ["apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--force-conflicts"]
    cluster.kubectl(*apply, "-f", str(manifests / "crds"))
    names = [f"crd/{path.stem}.operators.coreos.com" for path in crd_files(manifests)]
    cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s", *names, timeout=90)
    cluster.kubectl(*apply, "-f", str(manifests / "namespaces.yaml"))
    cluster.kubectl(*apply, "-f", str(manifests / "global-operatorgroup.yaml"))
