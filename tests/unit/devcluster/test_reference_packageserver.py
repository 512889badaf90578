"""OLM's packageserver on a reference cluster: its command line, serving material, objects."""

from __future__ import annotations

import datetime
import json
import ssl
from pathlib import Path

from cryptography import x509

from olm.api.devbridge import HOST_BRIDGE_ANNOTATION
from olm.devcluster import reference as ref
from olm.devcluster import reference_packageserver as ps
from olm.devcluster.ports import free_ports
from olm.install import certs

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


def _flag(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_the_command_line_is_the_charts_on_the_loopback_address() -> None:
    files = ps.Files(Path("/s/ps"))
    argv = ps.argv(Path("/bin/package-server"), Path("/s/kubeconfig"), 40123, files)
    assert argv[:2] == ["/bin/package-server", "-v=4"]
    assert _flag(argv, "--secure-port") == "40123"
    assert _flag(argv, "--bind-address") == "127.0.0.1"
    assert _flag(argv, "--global-namespace") == "olm"
    for flag in ("--kubeconfig", "--authentication-kubeconfig", "--authorization-kubeconfig"):
        assert _flag(argv, flag) == "/s/kubeconfig"
    assert _flag(argv, "--tls-cert-file") == "/s/ps/tls.crt"
    assert _flag(argv, "--tls-private-key-file") == "/s/ps/tls.key"


def test_the_serving_material_names_the_service_and_is_reused_while_valid(
    tmp_path: Path,
) -> None:
    files = ps.Files(tmp_path / "ps")
    first = ps.serving_material(files, NOW)
    assert files.key.stat().st_mode & 0o077 == 0
    cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) >= {
        "packageserver-service.olm",
        "packageserver-service.olm.svc",
    }
    ssl.create_default_context().load_cert_chain(str(files.cert), str(files.key))
    assert ps.serving_material(files, NOW + datetime.timedelta(days=1)) == first
    # Inside the rotation window (or broken): a new pair.
    later = ps.serving_material(files, first.rotate_at)
    assert later.cert_pem != first.cert_pem and files.cert.read_bytes() == later.cert_pem
    files.key.write_bytes(b"not a key")
    assert ps.serving_material(files, NOW).key_pem != b"not a key"


def test_the_service_is_bridged_and_the_apiservice_is_olms(tmp_path: Path) -> None:
    material = certs.issue(ps.hosts(), NOW, certs.CertSettings())
    service, apiservice = ps.objects(40123, material.ca_pem)
    assert service["metadata"]["name"] == "packageserver-service"
    assert service["metadata"]["namespace"] == "olm"
    assert "selector" not in service["spec"]
    annotation = json.loads(service["metadata"]["annotations"][HOST_BRIDGE_ANNOTATION])
    assert annotation == {"5443": 40123}
    assert apiservice["metadata"]["name"] == "v1.packages.operators.coreos.com"
    spec = apiservice["spec"]
    assert (spec["groupPriorityMinimum"], spec["versionPriority"]) == (2000, 15)
    assert spec["service"] == {"name": "packageserver-service", "namespace": "olm", "port": 5443}
    assert spec["caBundle"]
    for obj in (service, apiservice):  # not olm-py's: nothing of olm-py runs there
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "olm-dev-reference"


def test_the_package_server_is_a_reference_component_with_a_health_probe() -> None:
    assert ps.PACKAGE_SERVER in ref.PROCESSES
    port = free_ports(1)[0]
    checks = ref.health_checks({"package_server_port": port})
    ok, detail = checks[ps.PACKAGE_SERVER]()
    assert not ok and f"https://127.0.0.1:{port}/healthz" in detail
    assert ps.PACKAGE_SERVER not in ref.health_checks({})


def test_availability_is_read_from_the_apiservice_conditions() -> None:
    assert ps.available(None) == (False, "not yet checked by the aggregator")
    missing = {"status": {"conditions": [{"type": "Available", "status": "False", "message": "x"}]}}
    assert ps.available(missing) == (False, "x")
    assert ps.available({"status": {"conditions": [{"type": "Available", "status": "True"}]}})[0]
