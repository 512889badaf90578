"""The sample memcached operator's webhook server, called by a real TLS client on 127.0.0.1:
the certificate is the one OLM would mount (found through the pod runner's OLM_PY_MOUNTS),
AdmissionReview and ConversionReview JSON go in, JSON comes out; a renewed certificate on
disk is served to the next connection."""

from __future__ import annotations

import datetime
import http.client
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from olm.install.certs import CertSettings, ServingMaterial, issue, service_hosts
from olm.samples.memcached.server import CERT_DIR, serve_in_background
from olm.samples.memcached.webhooks import V1ALPHA1, V1BETA1

HOST = "memcached-operator-service.team-a.svc"


def write(material: ServingMaterial, directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    # As a Secret volume is updated: new files, then swapped in.
    for name, data in (("tls.crt", material.cert_pem), ("tls.key", material.key_pem)):
        (directory / f".{name}.new").write_bytes(data)
        (directory / f".{name}.new").replace(directory / name)


def fresh() -> ServingMaterial:
    now = datetime.datetime.now(datetime.UTC)
    return issue(service_hosts("memcached-operator-service", "team-a"), now, CertSettings())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Client:
    def __init__(self, port: int) -> None:
        self.port = port

    def post(self, path: str, body: dict[str, Any], trusted: ServingMaterial) -> tuple[int, Any]:
        # OLM's CA and serving certificate carry the same subject (only the organization), which
        # Go's verifier (the API server's) accepts and OpenSSL's takes for a self-signed leaf:
        # this client trusts the serving certificate itself, and checks its name.
        context = ssl.create_default_context(cadata=trusted.cert_pem.decode())
        context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
        connection = http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=context, timeout=10
        )
        # The API server checks the Service's DNS name, as here.
        connection.sock = context.wrap_socket(
            socket.create_connection(("127.0.0.1", self.port), timeout=10), server_hostname=HOST
        )
        try:
            data = json.dumps(body).encode()
            connection.request("POST", path, data, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            return answer.status, json.loads(answer.read())
        finally:
            connection.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Client, Path, ServingMaterial]]:
    mounted = tmp_path / "pods" / "team-a_memcached-operator-x" / "webhook-cert"
    material = fresh()
    write(material, mounted)
    port = free_port()
    environ = {"OLM_PY_MOUNTS": json.dumps({CERT_DIR: str(mounted)}), "POD_IP": "127.0.0.1"}
    stop = threading.Event()
    thread = serve_in_background(environ, port, 10, stop)
    client = Client(port)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            stop.wait(0.05)
    yield client, mounted, material
    stop.set()
    thread.join(5)
    assert not thread.is_alive()


def admission(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {"uid": "u-1", "operation": "CREATE", "object": obj},
    }


def memcached(version: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": version,
        "kind": "Memcached",
        "metadata": {"name": "m", "namespace": "team-a", "uid": "x"},
        "spec": spec,
    }


def test_admission_and_conversion_over_tls(
    served: tuple[Client, Path, ServingMaterial],
) -> None:
    client, _, material = served
    status, answer = client.post("/validate", admission(memcached(V1ALPHA1, size=12)), material)
    assert status == 200 and answer["kind"] == "AdmissionReview"
    assert answer["response"]["uid"] == "u-1" and answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"].startswith(
        "spec.size 12 is above this operator's limit of 10"
    )
    status, answer = client.post("/validate", admission(memcached(V1BETA1, replicas=3)), material)
    assert answer["response"] == {"uid": "u-1", "allowed": True}

    review = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "c-1",
            "desiredAPIVersion": V1BETA1,
            "objects": [memcached(V1ALPHA1, size=4)],
        },
    }
    status, answer = client.post("/convert", review, material)
    assert status == 200 and answer["response"]["result"] == {"status": "Success"}
    [converted] = answer["response"]["convertedObjects"]
    assert converted["apiVersion"] == V1BETA1 and converted["spec"] == {"replicas": 4}


def test_bad_requests_get_clear_errors(served: tuple[Client, Path, ServingMaterial]) -> None:
    client, _, material = served
    assert client.post("/nowhere", {}, material)[0] == 404
    status, answer = client.post("/validate", [], material)  # type: ignore[arg-type]
    assert status == 400 and "not a review" in answer["error"]


def test_an_untrusted_client_is_refused_and_a_renewed_certificate_is_served(
    served: tuple[Client, Path, ServingMaterial],
) -> None:
    client, mounted, material = served
    other = fresh()
    with pytest.raises(ssl.SSLCertVerificationError):
        client.post("/validate", admission(memcached(V1ALPHA1, size=1)), other)
    write(other, mounted)  # OLM renewed the certificate (a new CA)
    status, answer = client.post("/validate", admission(memcached(V1ALPHA1, size=1)), other)
    assert status == 200 and answer["response"]["allowed"] is True
    with pytest.raises(ssl.SSLCertVerificationError):
        client.post("/validate", admission(memcached(V1ALPHA1, size=1)), material)
