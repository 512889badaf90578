"""Host bridges and olm-py image pods at their pod IPs: the kube-apiserver reaches servers that
run on the host through aggregator routing (docs/pod-network.md).

- A host process (the echo-webhook sample, run by the test on 127.0.0.1:<free port> with a
  certificate for `echo.<ns>.svc` signed by a CA the test makes) behind a selectorless Service
  with the `olm-py.io/host-bridge` annotation backs an APIService: it becomes Available and
  `kubectl get --raw /apis/<group>/v1` is answered by the host process. Deleting the Service
  removes the bridge's namespace and EndpointSlice.
- Changing the annotation moves the bridge to another host port at the same address; a bad
  value removes the bridge and is logged once; removing the annotation removes the bridge.
- A pod of the olm-py image (`olm run`, standing by without RBAC) behind a Service with a
  selector answers /healthz at its pod IP, through the Service proxy.
"""

from __future__ import annotations

import base64
import datetime
import http.client
import ipaddress
import json
import os
import socket
import ssl
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from olm.api.devbridge import (
    ADVERTISEMENT_KEY,
    ADVERTISEMENT_NAME,
    ADVERTISEMENT_NAMESPACE,
    BRIDGE_MANAGER,
    HOST_BRIDGE_ANNOTATION,
    MANAGED_BY_LABEL,
    SERVICE_NAME_LABEL,
)
from olm.devcluster import network
from olm.samples.echo_webhook import CERT_DIR
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.pod_network import apply

TARGET_PORT = 5443


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def ca_and_serving_pair(host: str) -> tuple[bytes, bytes, bytes]:
    """(CA certificate, serving certificate for `host` signed by it, serving key), PEM."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name("host-bridge-test-ca"))
        .issuer_name(_name("host-bridge-test-ca"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(host))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return (
        ca.public_bytes(pem),
        cert.public_bytes(pem),
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class HostServers:
    """Echo-webhook processes on the host's 127.0.0.1, each answering GETs with its name."""

    def __init__(self, directory: Path, namespace: str) -> None:
        self.directory = directory
        self.namespace = namespace
        self.ca, cert, key = ca_and_serving_pair(f"echo.{namespace}.svc")
        (directory / "tls.crt").write_bytes(cert)
        (directory / "tls.key").write_bytes(key)
        self.processes: list[subprocess.Popen[bytes]] = []

    def start(self, name: str) -> int:
        port = free_port()
        env = {
            **os.environ,
            "POD_IP": "127.0.0.1",
            "PORT": str(port),
            "POD_NAMESPACE": self.namespace,
            "POD_NAME": name,
            "OLM_PY_MOUNTS": json.dumps({CERT_DIR: str(self.directory)}),
        }
        with (self.directory / f"{name}.log").open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "olm.samples.echo_webhook"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.processes.append(process)

        def listening() -> bool:
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        wait_for(listening, timeout=60, what=f"{name} to listen on 127.0.0.1:{port}")
        return port

    def ask(self, address: str, path: str) -> str:
        """GET https://<address>:<TARGET_PORT><path>, trusting only the test's CA."""
        context = ssl.create_default_context(cadata=self.ca.decode())
        context.check_hostname = False  # dialled by address; the CA is still checked
        connection = http.client.HTTPSConnection(address, TARGET_PORT, context=context, timeout=10)
        try:
            connection.request("GET", path)
            return connection.getresponse().read().decode()
        finally:
            connection.close()

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


@pytest.fixture
def host_servers(
    namespace: str, tmp_path: Path, pod_network: network.ClusterNetwork
) -> Iterator[HostServers]:
    servers = HostServers(tmp_path, namespace)
    yield servers
    servers.stop()


def bridged_service(namespace: str, annotation: str | None) -> dict[str, object]:
    annotations = {} if annotation is None else {HOST_BRIDGE_ANNOTATION: annotation}
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "echo", "namespace": namespace, "annotations": annotations},
        "spec": {"ports": [{"port": 443, "targetPort": TARGET_PORT}]},
    }


def set_annotation(plane: ControlPlane, namespace: str, value: str | None) -> None:
    change = (
        f"{HOST_BRIDGE_ANNOTATION}=" + value if value is not None else HOST_BRIDGE_ANNOTATION + "-"
    )
    plane.kubectl("annotate", "service", "echo", "-n", namespace, "--overwrite", change)


def bridge_slice(plane: ControlPlane, namespace: str) -> dict[str, object] | None:
    items = plane.get_json(
        "endpointslices.discovery.k8s.io",
        "-n",
        namespace,
        "-l",
        f"{MANAGED_BY_LABEL}={BRIDGE_MANAGER}",
    )["items"]
    return items[0] if items else None


def bridge_address(plane: ControlPlane, namespace: str) -> Callable[[], str | None]:
    def address() -> str | None:
        found = bridge_slice(plane, namespace)
        return found["endpoints"][0]["addresses"][0] if found else None  # type: ignore[index]

    return address


def bridge_netns(claimed: network.ClusterNetwork, address: str) -> str:
    return claimed.bridge_names(int(address.rsplit(".", 1)[1]))[0]


def test_the_pod_runner_advertises_the_bridge(
    control_plane: ControlPlane, pod_network: network.ClusterNetwork
) -> None:
    advertised = control_plane.get_json(
        "configmap", ADVERTISEMENT_NAME, "-n", ADVERTISEMENT_NAMESPACE
    )
    assert advertised["data"] == {ADVERTISEMENT_KEY: HOST_BRIDGE_ANNOTATION}


def test_an_api_service_is_served_by_a_host_process(
    control_plane: ControlPlane,
    namespace: str,
    host_servers: HostServers,
    pod_network: network.ClusterNetwork,
) -> None:
    port = host_servers.start("first")
    applied = apply(control_plane, bridged_service(namespace, json.dumps({str(TARGET_PORT): port})))
    assert applied.returncode == 0, applied.stderr
    address = wait_for(bridge_address(control_plane, namespace), what="the bridge EndpointSlice")
    # The EndpointSlice the kube-apiserver's resolver reads, owned by the Service.
    found = bridge_slice(control_plane, namespace)
    assert found is not None
    service = control_plane.get_json("service", "echo", "-n", namespace)
    meta = found["metadata"]  # type: ignore[index]
    assert meta["labels"][SERVICE_NAME_LABEL] == "echo"
    assert [ref["uid"] for ref in meta["ownerReferences"]] == [service["metadata"]["uid"]]
    assert found["ports"] == [{"name": "", "port": TARGET_PORT, "protocol": "TCP"}]  # type: ignore[index]
    bridge = ipaddress.IPv4Address(address)
    assert bridge in ipaddress.IPv4Network(f"{pod_network.node_ip}/24", strict=False)
    assert bridge not in ipaddress.IPv4Network(pod_network.pod_cidr)
    assert str(bridge) not in (pod_network.node_ip, pod_network.gateway)
    netns = bridge_netns(pod_network, address)
    assert f"netns {netns}" in network.leftovers(pod_network)

    group = f"{namespace}.bridge.olm-py.test"
    name = f"v1.{group}"
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {
            "group": group,
            "version": "v1",
            "service": {"name": "echo", "namespace": namespace, "port": 443},
            "caBundle": base64.b64encode(host_servers.ca).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 10,
        },
    }
    applied = apply(control_plane, api_service)
    assert applied.returncode == 0, applied.stderr
    try:

        def available() -> dict[str, str] | None:
            status = control_plane.get_json("apiservice", name).get("status") or {}
            condition = {c["type"]: c for c in status.get("conditions", [])}.get("Available")
            return condition if condition and condition["status"] == "True" else None

        wait_for(available, timeout=STEP_TIMEOUT, what=f"APIService {name} to be Available")
        answer = control_plane.kubectl("get", "--raw", f"/apis/{group}/v1")
        assert json.loads(answer.stdout) == {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/v1",
            "resources": [],
        }
        # The same host process, straight at the bridge address.
        assert host_servers.ask(address, "/who") == f"echo-webhook {namespace}/first: /who"
    finally:
        control_plane.kubectl("delete", "apiservice", name, check=False)

    control_plane.kubectl("delete", "service", "echo", "-n", namespace, "--wait=true")
    wait_for(
        lambda: f"netns {netns}" not in network.leftovers(pod_network),
        timeout=STEP_TIMEOUT,
        what=f"the bridge namespace {netns} to go with its Service",
    )
    wait_for(
        lambda: bridge_slice(control_plane, namespace) is None,
        timeout=STEP_TIMEOUT,
        what="the bridge EndpointSlice to go with its Service",
    )
    assert [item for item in network.leftovers(pod_network) if netns in item] == []


def test_the_annotation_moves_refuses_and_removes_the_bridge(
    control_plane: ControlPlane,
    namespace: str,
    host_servers: HostServers,
    pod_network: network.ClusterNetwork,
) -> None:
    first, second = host_servers.start("first"), host_servers.start("second")
    applied = apply(control_plane, bridged_service(namespace, json.dumps({"5443": first})))
    assert applied.returncode == 0, applied.stderr
    address = wait_for(bridge_address(control_plane, namespace), what="the bridge EndpointSlice")
    netns = bridge_netns(pod_network, address)

    def answered_by(name: str) -> Callable[[], bool]:
        def check() -> bool:
            try:
                return host_servers.ask(address, "/who").startswith(
                    f"echo-webhook {namespace}/{name}:"
                )
            except OSError:
                return False

        return check

    wait_for(answered_by("first"), timeout=STEP_TIMEOUT, what="the bridge to reach first")
    # Another host port: the same address now reaches the second process.
    set_annotation(control_plane, namespace, json.dumps({"5443": second}))
    wait_for(answered_by("second"), timeout=STEP_TIMEOUT, what="the bridge to move to second")
    assert bridge_address(control_plane, namespace)() == address

    # A bad value: the bridge goes, the problem is logged once, the Service is left as it is.
    log = control_plane.cluster.state_dir / "logs" / "pod-runner.log"
    bad = '{"https": 1}'
    set_annotation(control_plane, namespace, bad)
    wait_for(
        lambda: f"netns {netns}" not in network.leftovers(pod_network),
        timeout=STEP_TIMEOUT,
        what="a refused annotation to remove the bridge",
    )
    wait_for(lambda: bridge_slice(control_plane, namespace) is None, what="the slice to go")
    control_plane.kubectl("label", "service", "echo", "-n", namespace, "touched=1")  # an event
    expected = f"Service {namespace}/echo: annotation {HOST_BRIDGE_ANNOTATION} has key 'https'"
    wait_for(lambda: expected in log.read_text(), what="the refusal in the pod runner's log")
    service = control_plane.get_json("service", "echo", "-n", namespace)
    assert service["metadata"]["annotations"][HOST_BRIDGE_ANNOTATION] == bad

    # Fixed again: a bridge again; then the annotation removed: no bridge, the Service stays.
    set_annotation(control_plane, namespace, json.dumps({"5443": first}))
    address = wait_for(bridge_address(control_plane, namespace), what="the bridge to come back")
    netns = bridge_netns(pod_network, address)
    wait_for(answered_by("first"), timeout=STEP_TIMEOUT, what="the bridge to reach first again")
    assert log.read_text().count(expected) == 1, "a refusal is logged once"
    set_annotation(control_plane, namespace, None)
    wait_for(
        lambda: f"netns {netns}" not in network.leftovers(pod_network),
        timeout=STEP_TIMEOUT,
        what="removing the annotation to remove the bridge",
    )
    wait_for(lambda: bridge_slice(control_plane, namespace) is None, what="the slice to go")
    assert control_plane.get_json("service", "echo", "-n", namespace)["metadata"]["name"] == "echo"


def test_an_olm_py_image_pod_is_reachable_at_its_pod_ip(
    control_plane: ControlPlane, namespace: str, pod_network: network.ClusterNetwork
) -> None:
    labels = {"app": "olm-py-probe"}
    # `olm run` as a standby of a Lease it cannot read (the namespace's default account has no
    # RBAC): it never writes anything, and serves /healthz.
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "olm-py", "namespace": namespace},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": "olm",
                            "image": "localhost/olm-py:dev",
                            "command": ["olm"],
                            "args": [
                                "run",
                                "--leader-elect",
                                f"--leader-election-namespace={namespace}",
                                "--no-samples",
                                "--health-port=8081",
                            ],
                            "ports": [{"name": "health", "containerPort": 8081}],
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "olm-py", "namespace": namespace},
        "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "health"}]},
    }
    applied = apply(control_plane, deployment, service)
    assert applied.returncode == 0, applied.stderr
    path = f"/api/v1/namespaces/{namespace}/services/http:olm-py:80/proxy/healthz"

    def healthy() -> bool:
        return control_plane.kubectl("get", "--raw", path, check=False).returncode == 0

    wait_for(healthy, timeout=STEP_TIMEOUT, what="olm run's /healthz through the Service")
    (pod,) = control_plane.get_json("pods", "-n", namespace, "-l", "app=olm-py-probe")["items"]
    pod_ip = pod["status"]["podIP"]
    assert ipaddress.ip_address(pod_ip) in ipaddress.ip_network(pod_network.pod_cidr)
    # Straight at the pod IP too: the listener in the pod's namespace relays to the host port.
    connection = http.client.HTTPConnection(pod_ip, 8081, timeout=10)
    try:
        connection.request("GET", "/healthz")
        assert connection.getresponse().status == 200
    finally:
        connection.close()
    netns, _ = pod_network.pod_names(pod_ip)
    control_plane.kubectl("delete", "deployment", "olm-py", "-n", namespace, "--wait=true")
    wait_for(
        lambda: f"netns {netns}" not in network.leftovers(pod_network),
        timeout=STEP_TIMEOUT,
        what=f"the pod's namespace {netns} to go with it",
    )
