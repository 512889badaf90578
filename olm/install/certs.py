"""Serving certificates for a CSV's webhooks (OLM v0 `pkg/controller/certs`, `install/certresources.go`).

Invariants:
- One self-signed CA and one serving certificate signed by it per Deployment, ECDSA P-256 keys,
  subject organization as OLM's, DNS names `<service>.<ns>` and `<service>.<ns>.svc`.
- Validity as OLM's: two years; the certificate is renewed `rotate_before` (OLM's min-fresh,
  one day) ahead of its end. Both are settings (`CertSettings`), so tests can shorten them.
- `reusable` accepts existing material only if it parses, the certificate is signed by the CA,
  names the service, matches its key and is outside the rotation window: a reconcile over
  valid material issues nothing new, so it writes nothing.
- No I/O: PEM bytes in, PEM bytes out. Keys come from the OS random source, nothing else.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ORGANIZATION = "Red Hat, Inc."  # OLM's subject organization
DEFAULT_VALIDITY = datetime.timedelta(days=730)  # OLM: DefaultCertValidFor
DEFAULT_ROTATE_BEFORE = datetime.timedelta(days=1)  # OLM: DefaultCertMinFresh
VALIDITY_ENV = "OLM_PY_CERT_VALIDITY_SECONDS"
ROTATE_BEFORE_ENV = "OLM_PY_CERT_ROTATE_BEFORE_SECONDS"


@dataclass(frozen=True)
class CertSettings:
    validity: datetime.timedelta = DEFAULT_VALIDITY
    rotate_before: datetime.timedelta = DEFAULT_ROTATE_BEFORE

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> CertSettings:
        """OLM's defaults, or the test settings named by the two environment variables."""
        env = dict(os.environ) if environ is None else environ

        def seconds(name: str, default: datetime.timedelta) -> datetime.timedelta:
            value = env.get(name, "")
            try:
                return datetime.timedelta(seconds=float(value)) if value else default
            except ValueError:
                return default

        return cls(
            seconds(VALIDITY_ENV, DEFAULT_VALIDITY),
            seconds(ROTATE_BEFORE_ENV, DEFAULT_ROTATE_BEFORE),
        )


@dataclass(frozen=True)
class ServingMaterial:
    """PEM bytes of one Deployment's CA certificate, serving certificate and serving key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes
    not_after: datetime.datetime
    rotate_at: datetime.datetime

    @property
    def ca_hash(self) -> str:
        return pem_sha256(self.ca_pem)


def pem_sha256(pem: bytes) -> str:
    """OLM's `olmcahash`: the hex SHA-256 of the CA certificate's PEM bytes."""
    return hashlib.sha256(pem).hexdigest()


def service_hosts(service: str, namespace: str) -> list[str]:
    return [f"{service}.{namespace}", f"{service}.{namespace}.svc"]


def _name() -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION)])


def _usages(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    return builder.add_extension(
        x509.KeyUsage(
            digital_signature=True,
            content_commitment=False,
            key_encipherment=False,
            data_encipherment=False,
            key_agreement=False,
            key_cert_sign=True,
            crl_sign=False,
            encipher_only=False,
            decipher_only=False,
        ),
        critical=True,
    ).add_extension(
        x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH, ExtendedKeyUsageOID.SERVER_AUTH]),
        critical=False,
    )


def issue(hosts: list[str], now: datetime.datetime, settings: CertSettings) -> ServingMaterial:
    """A new CA and a serving certificate for `hosts`, both valid `settings.validity` from now."""
    not_before = now - datetime.timedelta(minutes=1)  # tolerate a little clock skew
    not_after = now + settings.validity
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_cert = (
        _usages(x509.CertificateBuilder())
        .subject_name(_name())
        .issuer_name(_name())
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _usages(x509.CertificateBuilder())
        .subject_name(_name())
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), False)
        .sign(ca_key, hashes.SHA256())
    )
    return ServingMaterial(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,  # "EC PRIVATE KEY", as OLM writes
            serialization.NoEncryption(),
        ),
        not_after=not_after.replace(microsecond=0),
        rotate_at=(not_after - settings.rotate_before).replace(microsecond=0),
    )


def decode_secret_data(data: dict[str, str] | None, key: str) -> bytes | None:
    value = (data or {}).get(key)
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return None


def read(
    ca_pem: bytes | None,
    cert_pem: bytes | None,
    key_pem: bytes | None,
    hosts: list[str],
    settings: CertSettings,
) -> ServingMaterial | None:
    """The material, if it is a consistent CA + serving certificate + key for `hosts`."""
    if not ca_pem or not cert_pem or not key_pem:
        return None
    try:
        ca = x509.load_pem_x509_certificate(ca_pem)
        cert = x509.load_pem_x509_certificate(cert_pem)
        key = serialization.load_pem_private_key(key_pem, password=None)
        basic = ca.extensions.get_extension_for_class(x509.BasicConstraints).value
        if not basic.ca:
            return None
        cert.verify_directly_issued_by(ca)
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        if not set(hosts) <= set(names.get_values_for_type(x509.DNSName)):
            return None
        public = serialization.PublicFormat.SubjectPublicKeyInfo
        if key.public_key().public_bytes(
            serialization.Encoding.PEM, public
        ) != cert.public_key().public_bytes(serialization.Encoding.PEM, public):
            return None
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return None
    not_after = min(ca.not_valid_after_utc, cert.not_valid_after_utc)
    return ServingMaterial(ca_pem, cert_pem, key_pem, not_after, not_after - settings.rotate_before)


def reusable(material: ServingMaterial | None, now: datetime.datetime) -> ServingMaterial | None:
    """The material while it is valid and outside its rotation window, else None."""
    if material is None or now >= material.rotate_at:
        return None
    return material
