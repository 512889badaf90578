"""OLM v0.38's real packageserver on a reference cluster (`olm dev up --reference-olm`).

OLM's chart installs packageserver as CSV `packageserver`: a Deployment running
`package-server --secure-port 5443 --global-namespace olm -v=4`, its serving certificate
(issued by olm-operator for Service `packageserver-service.olm.svc`), and APIService
`v1.packages.operators.coreos.com` (groupPriorityMinimum 2000, versionPriority 15, the CA as
`caBundle`). A reference cluster has no pods that run binaries, so the binary runs on the host,
as the other reference components do, and the local cluster's host bridge (docs/pod-network.md)
gives its selectorless Service an endpoint that relays to it.

What this module decides (pure but for reading and writing the certificate files):
- the command line: the chart's flags, plus what a pod would get from its environment: the
  admin kubeconfig for its informers, for TokenReviews and SubjectAccessReviews; the serving
  pair as files; listening on 127.0.0.1 only;
- the pod's in-cluster identity, which package-server cannot do without: v0.38's
  `PackageServerOptions.Config` builds its delegated authorizer from the in-cluster config
  whatever `--authorization-kubeconfig` says (it sets the kubeconfig on the authentication
  options twice and never on the authorization ones) and retries for ever without it. So it
  runs as the chart runs it, as ServiceAccount `olm/olm-operator-serviceaccount` bound to
  ClusterRole `system:controller:operator-lifecycle-manager` (the chart's RBAC): a token of
  that account and the cluster CA are put at `/var/run/secrets/kubernetes.io/serviceaccount/`
  in a private mount namespace of its own (`unshare --mount`, a tmpfs over `/run` seen by it
  alone: nothing of the host changes), with `KUBERNETES_SERVICE_HOST/PORT` naming the
  kube-apiserver on 127.0.0.1;
- the serving material: a CA and a certificate for `packageserver-service.olm(.svc)`, made
  once per cluster in its state directory (olm-py's own issuer, the one it uses for
  operators' API services) and reused while valid;
- the Service (no selector, the host-bridge annotation) and the APIService, with OLM's names;
- its health: `/healthz` on its port (always allowed, as in the chart's probes).

Invariants: the binary gets the reference OLM's environment (`CI` removed); only 127.0.0.1 is
dialled or listened on; the key file is private (0600) and never logged.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.devcluster import health
from olm.devcluster.ports import LOOPBACK
from olm.devcluster.service_hosts import in_own_mounts
from olm.install import certs
from olm.packages import registration

PACKAGE_SERVER = "package-server"  # the process (and log file) name in the cluster record
NAMESPACE = GLOBAL_CATALOG_NAMESPACE  # OLM's chart: catalog_namespace and packageserver's
VERBOSITY = "-v=4"  # the chart's
# Marks what the reference cluster writes in place of OLM's CSV (there is none to own them).
LABELS = {"app.kubernetes.io/managed-by": "olm-dev-reference", "app": "packageserver"}
CERT, KEY, CA = "tls.crt", "tls.key", "ca.crt"
# OLM's chart (0000_50_olm_02-olm-operator.serviceaccount.yaml): packageserver's identity.
SERVICE_ACCOUNT = "olm-operator-serviceaccount"
CLUSTER_ROLE = "system:controller:operator-lifecycle-manager"
CLUSTER_ROLE_BINDING = f"olm-operator-binding-{NAMESPACE}"
TOKEN_SECONDS = 7 * 24 * 3600  # a reference cluster lives for a test run or a benchmark
_CHART_VERBS = (
    "watch", "list", "get", "create", "update", "patch", "delete", "deletecollection", "escalate",
    "bind",
)  # fmt: skip
IN_CLUSTER_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# Runs in the private mount namespace: $1 is the folder holding token, ca.crt and namespace.
_IN_CLUSTER_SCRIPT = (
    "set -e; mount -t tmpfs -o mode=0755,size=1m olm-dev-in-cluster /run; "
    f"mkdir -p {IN_CLUSTER_DIR}; "
    f'cp "$1/token" "$1/ca.crt" "$1/namespace" {IN_CLUSTER_DIR}/; '
    'shift; exec "$@"'
)


@dataclass(frozen=True)
class Files:
    """Where a reference cluster keeps packageserver's serving material."""

    directory: Path

    @property
    def cert(self) -> Path:
        return self.directory / CERT

    @property
    def key(self) -> Path:
        return self.directory / KEY

    @property
    def ca(self) -> Path:
        return self.directory / CA


def hosts() -> list[str]:
    return certs.service_hosts(registration.SERVICE, NAMESPACE)


def argv(binary: Path, kubeconfig: Path, port: int, files: Files) -> list[str]:
    """The chart's command line, on the host: `--kubeconfig` for the catalog informers, the
    same admin kubeconfig for delegated authentication and authorization (in a pod, the
    in-cluster config), the serving pair as files (in a pod, `--cert-dir`)."""
    return [
        str(binary),
        VERBOSITY,
        "--secure-port",
        str(port),
        "--bind-address",
        LOOPBACK,
        "--global-namespace",
        NAMESPACE,
        "--kubeconfig",
        str(kubeconfig),
        "--authentication-kubeconfig",
        str(kubeconfig),
        "--authorization-kubeconfig",
        str(kubeconfig),
        "--tls-cert-file",
        str(files.cert),
        "--tls-private-key-file",
        str(files.key),
    ]


def in_cluster(account_dir: Path, command: list[str]) -> list[str]:
    """`command` run with a pod's service-account files, in a mount namespace of its own."""
    return in_own_mounts(_IN_CLUSTER_SCRIPT, PACKAGE_SERVER, str(account_dir), *command)


def in_cluster_env(api_url: str) -> dict[str, str]:
    """What a pod's environment says about the kube-apiserver (`https://127.0.0.1:PORT`)."""
    host, _, port = api_url.removeprefix("https://").rstrip("/").rpartition(":")
    return {"KUBERNETES_SERVICE_HOST": host, "KUBERNETES_SERVICE_PORT": port}


def write_account(directory: Path, token: str, ca_pem: bytes) -> Path:
    """The files a pod's service-account volume holds (token 0600)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = directory / "token"
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(token.strip())
    (directory / "ca.crt").write_bytes(ca_pem)
    (directory / "namespace").write_text(NAMESPACE)
    return directory


def rbac_objects() -> list[dict[str, Any]]:
    """packageserver's identity as OLM's chart creates it (the olm-operator's account)."""
    rbac = "rbac.authorization.k8s.io"
    return [
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRole",
            "metadata": {"name": CLUSTER_ROLE},
            "rules": [
                {
                    "apiGroups": ["*"],
                    "resources": ["*"],
                    "verbs": list(_CHART_VERBS),
                },
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
                {
                    "apiGroups": ["authentication.k8s.io"],
                    "resources": ["tokenreviews"],
                    "verbs": ["create"],
                },
                {
                    "apiGroups": ["authorization.k8s.io"],
                    "resources": ["subjectaccessreviews"],
                    "verbs": ["create"],
                },
            ],
        },
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE},
        },
        {
            "apiVersion": f"{rbac}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": CLUSTER_ROLE_BINDING},
            "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": CLUSTER_ROLE},
            "subjects": [
                {"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}
            ],
        },
    ]


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def serving_material(
    files: Files, now: datetime.datetime, settings: certs.CertSettings | None = None
) -> certs.ServingMaterial:
    """The serving material in `files` while it is valid for packageserver's Service, else a
    new CA and certificate written there (key 0600)."""
    settings = settings or certs.CertSettings()
    found = certs.read(_read(files.ca), _read(files.cert), _read(files.key), hosts(), settings)
    if certs.reusable(found, now) is not None and found is not None:
        return found
    material = certs.issue(hosts(), now, settings)
    files.directory.mkdir(parents=True, exist_ok=True)
    files.key.touch(mode=0o600)
    files.key.chmod(0o600)
    files.key.write_bytes(material.key_pem)
    files.cert.write_bytes(material.cert_pem)
    files.ca.write_bytes(material.ca_pem)
    return material


def _relabelled(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "metadata": {**obj["metadata"], "labels": dict(LABELS)}}


def objects(host_port: int, ca_pem: bytes) -> list[dict[str, Any]]:
    """Service `olm/packageserver-service` (no selector; the host bridge relays its port 5443
    to 127.0.0.1:`host_port`) and APIService `v1.packages.operators.coreos.com`, as OLM's
    chart and olm-operator leave them, with olm-py's renderers of the same objects."""
    return [
        _relabelled(registration.bridged_service(NAMESPACE, host_port)),
        _relabelled(registration.apiservice(NAMESPACE, ca_pem)),
    ]


def healthy(port: int, timeout: float = 1.0) -> tuple[bool, str]:
    """packageserver's `/healthz` on 127.0.0.1 (its certificate names the Service, not the
    loopback address: the probe does not verify it, as a kubelet's HTTPS probe does not)."""
    ok, detail = health.component_healthy(port, timeout)
    return ok, f"https://{LOOPBACK}:{port}/healthz: {detail or 'no answer'}"


def available(apiservice: dict[str, Any] | None) -> tuple[bool, str]:
    """Whether the aggregator reports the APIService Available, and why not."""
    return registration.available(apiservice)
