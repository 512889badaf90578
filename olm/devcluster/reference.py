"""The reference OLM: the real OLM v0.38.0, built by the project and run on a local cluster.

`ensure_reference_olm()` builds OLM's `olm`, `catalog` and `package-server` commands from the Go
module proxy through a throw-away wrapper module (the proxy refuses `go install` for OLM's
modules), and copies OLM's own CRDs out of the operator-framework/api module, into a cache of
their own: `<cache root>/tools/olm-v0.38.0/{olm,catalog,package-server,crds/}`. `reference_cluster.up_reference()`
(`olm dev up --reference-olm`) starts a local cluster, prepares it as OLM's chart does, serves the samples
catalog with `opm serve` and runs the real olm-operator and catalog-operator as local
processes of that cluster, and OLM's package-server (the PackageManifest API) behind the
cluster's host bridge (reference_packageserver.py), so parity tests can run one scenario on both
implementations.

Invariants:
- The cache is complete only when `manifest.json` exists, records the exact build inputs (the
  list of commands among them: a cache built with fewer is stale and rebuilt whole) and
  lists every command and the CRDs with their size and SHA-256; it is written last, so an
  interrupted build is never mistaken for a complete one. A complete cache is reused without
  invoking Go. Concurrent builders are serialized by a lock file next to the cache.
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
import json
import shutil
import socket
import ssl
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.devcluster import gotoolchain
from olm.devcluster.gotoolchain import GoRun, find_go
from olm.devcluster.ports import LOOPBACK, is_listening
from olm.devcluster.reference_packageserver import PACKAGE_SERVER
from olm.devcluster.reference_packageserver import healthy as package_server_healthy
from olm.devcluster.service_hosts import PROCESS as SERVICE_HOSTS_PROCESS
from olm.devcluster.verifiedcache import (
    MANIFEST,
    BuildError,
    ensure_built,
    manifest_problems,
    write_manifest,
)
from olm.devcluster.versions import cache_root
from olm.progress import QUIET, Progress

OLM_VERSION = "v0.38.0"
OLM_MODULE = "github.com/operator-framework/operator-lifecycle-manager"
# The operator-framework/api release OLM v0.38.0 resolves to; its `crds/` are OLM's CRDs.
API_MODULE = "github.com/operator-framework/api"
API_VERSION = "v0.36.0"
# package-server is OLM's aggregated API server (packages.operators.coreos.com); built for the
# parity suite to run beside the reference OLM.
COMMANDS: tuple[str, ...] = ("olm", "catalog", "package-server")
BUILD_TAGS = "json1"
WRAPPER_MODULE = "local/olmbin"
WRAPPER_GO = "1.24.6"
CRDS_DIR = "crds"

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


# ----- the build ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReferenceOlmBinaries:
    """The built reference OLM: its commands and OLM's CRDs."""

    root: Path

    @property
    def olm(self) -> Path:
        return self.root / "olm"

    @property
    def catalog(self) -> Path:
        return self.root / "catalog"

    @property
    def package_server(self) -> Path:
        return self.root / "package-server"

    @property
    def crds(self) -> Path:
        return self.root / CRDS_DIR

    def crd_files(self) -> list[Path]:
        return sorted(self.crds.glob("*.yaml"))


def reference_dir(version: str = OLM_VERSION) -> Path:
    return cache_root() / "tools" / f"olm-{version}"


def reference_ldflags(version: str = OLM_VERSION) -> str:
    """Strip, and stamp the version (else `olm --version` says `OLM version: ` and nothing)."""
    return f"-s -w -X {OLM_MODULE}/pkg/version.OLMVersion={version}"


def wrapper_go_mod() -> str:
    return f"module {WRAPPER_MODULE}\n\ngo {WRAPPER_GO}\n"


def go_get_args(version: str = OLM_VERSION) -> list[str]:
    """`go get -tool` pins every command in the wrapper module (`go install pkg@v` is refused:
    it reads the module's version list, which the proxy answers with 403 for OLM)."""
    return ["get", "-tool", *(f"{OLM_MODULE}/cmd/{name}@{version}" for name in COMMANDS)]


def go_build_args(out_dir: Path, version: str = OLM_VERSION) -> list[str]:
    return [
        "build",
        "-trimpath",
        "-tags",
        BUILD_TAGS,
        "-ldflags",
        reference_ldflags(version),
        "-o",
        f"{out_dir}/",
        *(f"{OLM_MODULE}/cmd/{name}" for name in COMMANDS),
    ]


GOFLAGS = "-mod=mod -buildvcs=false"


def go_env(base: Mapping[str, str]) -> dict[str, str]:
    """The build environment: modules only, the installed toolchain, no cgo (gotoolchain.py)."""
    return gotoolchain.go_env(dict(base), GOFLAGS)


def build_inputs(version: str = OLM_VERSION, api_version: str = API_VERSION) -> dict[str, str]:
    """What the cache was built from; any change means a rebuild."""
    return {
        "module": OLM_MODULE,
        "version": version,
        "commands": ",".join(COMMANDS),
        "api_module": API_MODULE,
        "api_version": api_version,
        "tags": BUILD_TAGS,
        "ldflags": reference_ldflags(version),
        "cgo": "0",
    }


def cache_problems(root: Path, inputs: Mapping[str, str]) -> list[str]:
    """Why the reference cache at `root` is not usable; an empty list means it is complete."""
    problems = manifest_problems(root, COMMANDS, inputs)
    if problems or any(path.startswith(f"{CRDS_DIR}/") for path in _listed(root)):
        return problems
    return [f"no CRDs are listed in {root / MANIFEST}"]


def _listed(root: Path) -> list[str]:
    return list(json.loads((root / MANIFEST).read_text())["files"])


def _write_manifest(root: Path, inputs: Mapping[str, str]) -> None:
    crds = (f"{CRDS_DIR}/{path.name}" for path in sorted((root / CRDS_DIR).glob("*")))
    write_manifest(root, [*COMMANDS, *crds], inputs=dict(inputs))


def _find_go() -> str:
    return find_go(f"The reference OLM {OLM_VERSION}")


def go_available() -> bool:
    """Whether a usable Go toolchain is installed (tests skip the reference OLM without it)."""
    try:
        _find_go()
    except BuildError:
        return False
    return True


class _Builder:
    def __init__(self, root: Path, go: str, progress: Progress) -> None:
        self.root = root
        self.go = GoRun(go, root / "build.log", progress, GOFLAGS, "run `make reference-olm`")

    def go_run(self, args: Sequence[str], cwd: Path, what: str) -> str:
        return self.go.run(args, cwd, what)

    def build(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.go.log_path.write_text("")
        work = self.root / "src"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        (work / "go.mod").write_text(wrapper_go_mod())
        self.go_run(go_get_args(), work, f"Resolving OLM {OLM_VERSION} in a wrapper module")
        out = Path(tempfile.mkdtemp(prefix="bin-", dir=self.root))
        try:
            self.go_run(
                go_build_args(out),
                work,
                f"Building the real OLM {OLM_VERSION} ({', '.join(COMMANDS)}) into {self.root} "
                "(about 7 minutes cold on 2 busy cores; later runs reuse it)",
            )
            for name in COMMANDS:
                built = out / name
                if not built.is_file():
                    raise BuildError(f"go build reported success but {built} is missing.")
                built.replace(self.root / name)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        self._copy_crds(work)

    def _copy_crds(self, work: Path) -> None:
        listed = json.loads(
            self.go_run(["list", "-m", "-json", API_MODULE], work, "Locating OLM's API module")
        )
        if listed.get("Version") != API_VERSION:
            raise BuildError(
                f"OLM {OLM_VERSION} resolved {API_MODULE} {listed.get('Version')}, expected "
                f"{API_VERSION}: update API_VERSION in olm/devcluster/reference.py together "
                "with OLM_VERSION."
            )
        downloaded = json.loads(
            self.go_run(
                ["mod", "download", "-json", f"{API_MODULE}@{API_VERSION}"],
                work,
                f"Fetching OLM's CRDs ({API_MODULE} {API_VERSION})",
            )
        )
        source = Path(str(downloaded.get("Dir", ""))) / CRDS_DIR
        crds = sorted(source.glob("*.yaml"))
        if not crds:
            raise BuildError(f"No CRDs were found in {source} ({API_MODULE} {API_VERSION}).")
        target = self.root / CRDS_DIR
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for crd in crds:
            (target / crd.name).write_bytes(crd.read_bytes())


def ensure_reference_olm(progress: Progress = QUIET, *, build: bool = True) -> ReferenceOlmBinaries:
    """The cached real OLM (`olm`, `catalog`, OLM's CRDs), building it first if needed."""
    root = reference_dir()
    inputs = build_inputs()

    def build_and_seal() -> None:
        _Builder(root, _find_go(), progress).build()
        _write_manifest(root, inputs)

    ensure_built(
        root,
        f"reference OLM {OLM_VERSION}",
        lambda: cache_problems(root, inputs),
        build_and_seal,
        progress,
        rebuild="`make reference-olm`",
        may_build=build,
    )
    return ReferenceOlmBinaries(root)


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
    deadline = time.monotonic() + timeout
    told = False
    while busy := busy_health_ports():
        if time.monotonic() > deadline:
            raise TimeoutError(busy_ports_message(busy))
        if say is not None and not told:
            say(f"OLM's ports {busy} are taken (another reference cluster runs); waiting")
            told = True
        time.sleep(5)


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
    now = datetime.datetime.now(datetime.UTC)
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


def main() -> int:
    """`python -m olm.devcluster.reference` (`make reference-olm`): build or reuse the cache."""
    try:
        binaries = ensure_reference_olm(Progress())
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(binaries.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
