"""The PackageManifest API's serving certificate is rotated before it expires (issue 25,
hardening): the pure decision (`certs.reusable` on a short-lived certificate), then the
registration loop (`olm.controllers.packageserver.Registration`) stepped with an injected clock
over the in-memory gateway: the leader issues a new CA and certificate once the old one enters
its rotation window, rewrites the Secret and the APIService's caBundle and serves the new one;
a standby never issues, it serves what the leader wrote."""

from __future__ import annotations

import base64
import datetime
from typing import Any

import pytest
from cryptography import x509

from olm.apiserver.auth import AUTH_CONFIGMAP, AUTH_CONFIGMAP_NAMESPACE, Authorizer
from olm.apiserver.server import PackageServer
from olm.controllers.packageserver import Registration
from olm.install import certs
from olm.kube.fake import FakeGateway
from olm.packages import registration

NOW = datetime.datetime(2026, 1, 1, 12, 0, tzinfo=datetime.UTC)
# A short-lived certificate: valid two hours, rotated in its last half hour.
SHORT = certs.CertSettings(datetime.timedelta(hours=2), datetime.timedelta(minutes=30))
ROTATE_AT = NOW + SHORT.validity - SHORT.rotate_before
NAMESPACE = "olm"
HOSTS = certs.service_hosts(registration.SERVICE, NAMESPACE)


@pytest.mark.parametrize(
    ("at", "kept"),
    [
        (NOW, True),
        (ROTATE_AT - datetime.timedelta(seconds=1), True),
        (ROTATE_AT, False),  # the window opens: rotate
        (NOW + SHORT.validity, False),  # expired
        (NOW + SHORT.validity + datetime.timedelta(days=1), False),
    ],
)
def test_a_short_lived_certificate_is_kept_until_its_rotation_window(
    at: datetime.datetime, kept: bool
) -> None:
    issued = certs.issue(HOSTS, NOW, SHORT)
    # As a restarted olm-py reads it back from the Secret: the same window.
    read = certs.read(issued.ca_pem, issued.cert_pem, issued.key_pem, HOSTS, SHORT)
    assert read is not None and read.rotate_at == ROTATE_AT
    assert (certs.reusable(read, at) is not None) is kept


def test_the_default_window_rotates_a_certificate_expiring_within_a_day() -> None:
    nearly_expired = certs.issue(HOSTS, NOW, certs.CertSettings(datetime.timedelta(hours=23)))
    read = certs.read(
        nearly_expired.ca_pem, nearly_expired.cert_pem, nearly_expired.key_pem, HOSTS, SHORT
    )
    assert read is not None
    defaults = certs.CertSettings()
    again = certs.read(read.ca_pem, read.cert_pem, read.key_pem, HOSTS, defaults)
    assert certs.reusable(again, NOW) is None, "23 h left is inside OLM's one-day window"


def auth_configmap() -> dict[str, Any]:
    front_proxy_ca = certs.issue(["front-proxy"], NOW, certs.CertSettings()).ca_pem
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": AUTH_CONFIGMAP, "namespace": AUTH_CONFIGMAP_NAMESPACE},
        "data": {"requestheader-client-ca-file": front_proxy_ca.decode()},
    }


def replica(gateway: FakeGateway, leading: bool) -> Registration:
    server = PackageServer(
        catalogs=None,  # type: ignore[arg-type]  # never asked: no request is served here
        authorizer=Authorizer(lambda review: {}),
        auth_config=lambda: None,  # type: ignore[arg-type,return-value]
        host="127.0.0.1",
        port=0,
    )
    return Registration(gateway, server, NAMESPACE, True, lambda: leading, SHORT)


def secret_material(gateway: FakeGateway) -> dict[str, bytes]:
    data = gateway.get("v1", "Secret", NAMESPACE, registration.SECRET)["data"]
    return {key: base64.b64decode(value) for key, value in data.items()}


def ca_bundle(gateway: FakeGateway) -> bytes:
    found = gateway.get("apiregistration.k8s.io/v1", "APIService", None, registration.APISERVICE)
    return base64.b64decode(found["spec"]["caBundle"])


def secret_writes(gateway: FakeGateway) -> int:
    return sum(1 for write in gateway.writes if write.kind == "Secret")


def not_after(cert_pem: bytes) -> datetime.datetime:
    return x509.load_pem_x509_certificate(cert_pem).not_valid_after_utc


def test_the_leader_rotates_the_packagemanifest_certificate_before_it_expires() -> None:
    gateway = FakeGateway([auth_configmap()])
    leader = replica(gateway, leading=True)
    leader.step(NOW)
    first = secret_material(gateway)
    assert ca_bundle(gateway) == first[registration.CA_KEY]
    assert not_after(first["tls.crt"]) == NOW + SHORT.validity
    issued = secret_writes(gateway)
    assert issued == 1

    # Outside the window: nothing is issued or written again.
    leader.step(ROTATE_AT - datetime.timedelta(seconds=1))
    assert secret_writes(gateway) == issued
    assert secret_material(gateway) == first

    # In the window (the old certificate still valid for half an hour): a new CA and
    # certificate, in the Secret, in the APIService's caBundle and served.
    leader.step(ROTATE_AT)
    second = secret_material(gateway)
    assert secret_writes(gateway) == issued + 1
    assert second["tls.crt"] != first["tls.crt"] and second["tls.key"] != first["tls.key"]
    assert second[registration.CA_KEY] != first[registration.CA_KEY]
    assert not_after(second["tls.crt"]) == ROTATE_AT + SHORT.validity
    assert ca_bundle(gateway) == second[registration.CA_KEY]
    assert leader._serving == second["tls.crt"]

    # A standby serves what the leader wrote, and never issues, even past the expiry.
    standby = replica(gateway, leading=False)
    standby.step(ROTATE_AT + datetime.timedelta(minutes=1))
    assert standby._serving == second["tls.crt"]
    writes = len(gateway.writes)
    standby.step(ROTATE_AT + SHORT.validity + datetime.timedelta(hours=1))
    assert len(gateway.writes) == writes
    assert secret_material(gateway) == second


def test_a_certificate_made_for_other_names_or_broken_is_replaced_at_once() -> None:
    wrong = certs.issue(["elsewhere.olm.svc"], NOW, certs.CertSettings())
    gateway = FakeGateway([auth_configmap(), registration.secret(NAMESPACE, wrong)])
    leader = replica(gateway, leading=True)
    leader.step(NOW)
    replaced = secret_material(gateway)
    assert replaced["tls.crt"] != wrong.cert_pem
    assert certs.read(
        replaced[registration.CA_KEY], replaced["tls.crt"], replaced["tls.key"], HOSTS, SHORT
    )
