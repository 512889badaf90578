"""The reference OLM on a local cluster: the real OLM v0.38.0, run beside no olm-py.

The build (commands and CRDs in a verified cache) is reference_build.py's.
`reference_cluster.up_reference()` (`olm dev up --reference-olm`) starts a local cluster,
prepares it as OLM's chart does, serves the samples catalog with `opm serve` and runs the real
olm-operator and catalog-operator as local processes of that cluster, and OLM's
package-server (the PackageManifest API) behind the cluster's host bridge
(reference_packageserver.py), so parity tests can run one scenario on both implementations.
This module holds what that needs: the processes' command lines and environment, the chart's
objects, the health ports and probes, the catalog-operator's TLS pair.

Invariants:
- A reference cluster says so in its record (`cluster.json`, key `reference_olm`): `olm dev
  env`/`status` show it, and `DevCluster.start_process` refuses to start olm-py on it (two
  implementations must never reconcile the same API server).
- The real OLM's health ports are fixed (`:8080` olm-operator, `:8443` catalog-operator, all
  interfaces), so one reference cluster runs at a time; a port already in use is reported
  before anything starts.
- Only 127.0.0.1 is dialled; OLM runs with `CI` removed from its environment (with `CI` set
  olm-operator panics on any create lacking the `olm.managed` label).
- A failed start stops everything of the cluster, keeps the logs and says what failed.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.api.conditions import utc_now
from olm.devcluster.ports import LOOPBACK, is_listening
from olm.devcluster.reference_build import ReferenceOlmBinaries
from olm.devcluster.reference_packageserver import PACKAGE_SERVER
from olm.devcluster.reference_packageserver import healthy as package_server_healthy
from olm.devcluster.service_hosts import PROCESS as SERVICE_HOSTS_PROCESS
from olm.waiting import attempts

# How OLM's chart lays out a cluster (deploy/chart: values and templates).
OLM_NAMESPACE = "olm"
OPERATORS_NAMESPACE = "operators"
GLOBAL_OPERATOR_GROUP = "global-operators"
# The samples catalog, named and described exactly as `olm run` registers it (olm/app.py), so a
# scenario reads the same on both implementations.
SAMPLES_SOURCE = "samples"
SAMPLES_DISPLAY_NAME = "olm-py samples"
SAMPLES_PUBLISHER = "olm-py"

# Images OLM would use for pods it creates (registry pods, bundle unpacking); with inline
# bundles and address-based catalogs none of them is ever started on the local cluster.
CONFIGMAP_SERVER_IMAGE = "quay.io/operator-framework/configmap-operator-registry:latest"
OPM_IMAGE = "quay.io/operator-framework/opm:latest"
UTIL_IMAGE = "quay.io/operator-framework/olm:master"

# Process names in the cluster record (also the log file names).
OLM_OPERATOR = "olm-operator"
CATALOG_OPERATOR = "catalog-operator"
SAMPLES_SERVER = "samples-catalog"
SERVICE_HOSTS = SERVICE_HOSTS_PROCESS  # the Services' names for OLM's processes
PROCESSES: tuple[str, ...] = (
    SAMPLES_SERVER,
    SERVICE_HOSTS,
    CATALOG_OPERATOR,
    OLM_OPERATOR,
    PACKAGE_SERVER,
)

# Hard-coded in OLM (pkg/lib/server: `:8080`, or `:8443` with TLS), on all interfaces.
OLM_HEALTH_PORT = 8080
CATALOG_HEALTH_PORT = 8443
HEALTH_PORTS: dict[str, int] = {
    OLM_OPERATOR: OLM_HEALTH_PORT,
    CATALOG_OPERATOR: CATALOG_HEALTH_PORT,
}


# ----- what runs, and how it is prepared (pure) ----------------------------------------------


def reference_env(base: Mapping[str, str], kubeconfig: Path) -> dict[str, str]:
    """The real OLM's environment: `CI` removed (it makes olm-operator panic), its namespace."""
    env = {key: value for key, value in base.items() if key != "CI"}
    env["KUBECONFIG"] = str(kubeconfig)
    env["OPERATOR_NAMESPACE"] = OLM_NAMESPACE
    return env


def olm_operator_argv(binaries: ReferenceOlmBinaries) -> list[str]:
    # No --kubeconfig flag: it reads $KUBECONFIG. An empty status name: no ClusterOperator.
    return [str(binaries.olm), "--namespace", OLM_NAMESPACE, "--writeStatusName", ""]


@dataclass(frozen=True)
class Tls:
    cert: Path
    key: Path


def catalog_operator_argv(binaries: ReferenceOlmBinaries, kubeconfig: Path, tls: Tls) -> list[str]:
    # TLS moves its health port to :8443, away from olm-operator's :8080; with TLS on, a client
    # CA is required ("certificate monitoring for client-ca failed" otherwise).
    return [
        str(binaries.catalog),
        f"--kubeconfig={kubeconfig}",
        "--namespace",
        OLM_NAMESPACE,
        "--writeStatusName",
        "",
        f"--configmapServerImage={CONFIGMAP_SERVER_IMAGE}",
        f"--opmImage={OPM_IMAGE}",
        "--util-image",
        UTIL_IMAGE,
        "--set-workload-user-id=true",
        "--tls-cert",
        str(tls.cert),
        "--tls-key",
        str(tls.key),
        "--client-ca",
        str(tls.cert),
    ]


def opm_serve_argv(opm: Path, catalog: Path, port: int, termination_log: Path) -> list[str]:
    # The termination log lives outside the catalog folder: opm parses every file in there.
    return [
        str(opm),
        "serve",
        str(catalog),
        "-p",
        str(port),
        "--pprof-addr=",
        "-t",
        str(termination_log),
    ]


def chart_objects() -> list[dict[str, Any]]:
    """What OLM's chart creates besides the CRDs, OLM itself and packageserver (whose
    Service and APIService reference_packageserver.py renders)."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OLM_NAMESPACE}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATORS_NAMESPACE}},
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": GLOBAL_OPERATOR_GROUP, "namespace": OPERATORS_NAMESPACE},
            "spec": {},
        },
    ]


def samples_catalog_source(port: int) -> dict[str, Any]:
    """The samples CatalogSource, as `olm run` registers it, pointing at `opm serve`."""
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": SAMPLES_SOURCE, "namespace": OLM_NAMESPACE},
        "spec": {
            "sourceType": "grpc",
            "address": f"{LOOPBACK}:{port}",
            "displayName": SAMPLES_DISPLAY_NAME,
            "publisher": SAMPLES_PUBLISHER,
        },
    }


def port_in_use(port: int) -> bool:
    """Whether something listens on `port` on any interface (OLM binds `:port`)."""
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            probe = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        with probe:
            # As Go's listeners do: a port in TIME_WAIT is free, a listening one is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((address, port))
            except OSError:
                return True
    return False


def busy_health_ports() -> list[int]:
    """OLM's fixed health ports that something holds now."""
    return [port for port in HEALTH_PORTS.values() if port_in_use(port)]


def wait_for_health_ports(timeout: float, say: Callable[[str], None] | None = None) -> None:
    """Wait while another reference cluster (a benchmark, the parity suite, a test) holds OLM's
    fixed health ports; TimeoutError (saying what holds them) after `timeout` seconds."""
    told = False
    busy: list[int] = []
    for _ in attempts(timeout, 5.0):
        busy = busy_health_ports()
        if not busy:
            return
        if say is not None and not told:
            say(f"OLM's ports {busy} are taken (another reference cluster runs); waiting")
            told = True
    raise TimeoutError(busy_ports_message(busy))


def busy_ports_message(busy: Sequence[int]) -> str:
    ports = " and ".join(f":{port}" for port in busy)
    return (
        f"Port {ports} (all interfaces) is already in use. The real OLM binds its health ports "
        f":{OLM_HEALTH_PORT} (olm-operator) and :{CATALOG_HEALTH_PORT} (catalog-operator), "
        "fixed in OLM, so only one reference cluster can run at a time. Stop the other one "
        "(`olm dev --state-dir DIR down`) or whatever listens there (`ss -ltnp`), then retry."
    )


def make_tls(directory: Path) -> Tls:
    """A self-signed serving pair for the catalog-operator's health port (also its client CA)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "olm-reference-catalog")])
    now = utc_now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(LOOPBACK)), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    tls = Tls(directory / "tls.crt", directory / "tls.key")
    tls.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    tls.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    tls.key.chmod(0o600)
    return tls


# ----- health ---------------------------------------------------------------------------------


def _healthz(url: str, context: ssl.SSLContext | None, timeout: float) -> tuple[bool, str]:
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            return response.status == 200, f"{url}: {response.status}"
    except urllib.error.HTTPError as exc:
        return False, f"{url}: {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{url}: {exc}"


def olm_operator_healthy(timeout: float = 1.0) -> tuple[bool, str]:
    return _healthz(f"http://{LOOPBACK}:{OLM_HEALTH_PORT}/healthz", None, timeout)


def catalog_operator_healthy(timeout: float = 1.0) -> tuple[bool, str]:
    # Its own self-signed certificate, probed on the loopback address only.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return _healthz(f"https://{LOOPBACK}:{CATALOG_HEALTH_PORT}/healthz", context, timeout)


def samples_server_healthy(port: int) -> tuple[bool, str]:
    listening = is_listening(port)
    return (
        listening,
        f"opm serve {'listens' if listening else 'does not listen'} on {LOOPBACK}:{port}",
    )


def health_checks(info: Mapping[str, Any]) -> dict[str, Callable[[], tuple[bool, str]]]:
    """The health probe of each reference component, for `olm dev status`."""
    checks: dict[str, Callable[[], tuple[bool, str]]] = {
        OLM_OPERATOR: olm_operator_healthy,
        CATALOG_OPERATOR: catalog_operator_healthy,
    }
    port = info.get("samples_port")
    if isinstance(port, int):
        checks[SAMPLES_SERVER] = lambda: samples_server_healthy(port)
    packages_port = info.get("package_server_port")
    if isinstance(packages_port, int):
        checks[PACKAGE_SERVER] = lambda: package_server_healthy(packages_port)
    return checks
