"""Certificates for the local control plane: one CA, a serving cert, an admin client cert.

Invariants: everything is generated fresh per cluster into its state directory; the serving
certificates (the apiserver's, the local registry's TLS listener) are valid for 127.0.0.1 and
localhost; the admin user is in system:masters. Clients that must trust the local registry (the
`kubectl operator` plugin reads SSL_CERT_FILE) are given `ca.crt`.
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from olm.api.conditions import utc_now

VALIDITY = datetime.timedelta(days=365)
FRONT_PROXY_NAME = "olm-py-front-proxy"


@dataclass(frozen=True)
class Pki:
    """Paths of the generated key material."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    front_proxy_cert: Path
    front_proxy_key: Path
    service_account_key: Path
    service_account_pub: Path
    registry_cert: Path
    registry_key: Path

    @classmethod
    def of(cls, directory: Path) -> Pki:
        """The paths `generate` writes in `directory` (nothing is read or written)."""
        return cls(
            ca_cert=directory / "ca.crt",
            ca_key=directory / "ca.key",
            serving_cert=directory / "apiserver.crt",
            serving_key=directory / "apiserver.key",
            admin_cert=directory / "admin.crt",
            admin_key=directory / "admin.key",
            front_proxy_cert=directory / "front-proxy.crt",
            front_proxy_key=directory / "front-proxy.key",
            service_account_key=directory / "sa.key",
            service_account_pub=directory / "sa.pub",
            registry_cert=directory / "registry.crt",
            registry_key=directory / "registry.key",
        )


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey) -> None:
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    path.chmod(0o600)


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def _signed(
    subject: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    is_ca: bool = False,
    usages: list[x509.ObjectIdentifier] | None = None,
    sans: list[x509.GeneralName] | None = None,
) -> x509.Certificate:
    now = utc_now()
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + VALIDITY)
        .add_extension(x509.BasicConstraints(ca=is_ca, path_length=None), critical=True)
    )
    if is_ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    if usages:
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def generate(directory: Path) -> Pki:
    """Create a CA, an apiserver serving cert, an admin client cert and the SA signing key."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki.of(directory)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("olm-py-dev-ca")
    ca_cert = _signed(ca_name, ca_key.public_key(), ca_name, ca_key, is_ca=True)
    _write_key(pki.ca_key, ca_key)
    _write_cert(pki.ca_cert, ca_cert)

    serving_key = ec.generate_private_key(ec.SECP256R1())
    serving_sans: list[x509.GeneralName] = [
        x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
        x509.IPAddress(ipaddress.ip_address("10.0.0.1")),
        x509.DNSName("localhost"),
        x509.DNSName("kubernetes"),
        x509.DNSName("kubernetes.default.svc"),
    ]
    serving = _signed(
        _name("kube-apiserver"),
        serving_key.public_key(),
        ca_name,
        ca_key,
        usages=[ExtendedKeyUsageOID.SERVER_AUTH],
        sans=serving_sans,
    )
    _write_key(pki.serving_key, serving_key)
    _write_cert(pki.serving_cert, serving)

    admin_key = ec.generate_private_key(ec.SECP256R1())
    admin = _signed(
        _name("olm-py-admin", "system:masters"),
        admin_key.public_key(),
        ca_name,
        ca_key,
        usages=[ExtendedKeyUsageOID.CLIENT_AUTH],
    )
    _write_key(pki.admin_key, admin_key)
    _write_cert(pki.admin_cert, admin)

    # The apiserver presents this certificate to aggregated API servers; only this name may
    # assert a user through request headers (--requestheader-allowed-names).
    proxy_key = ec.generate_private_key(ec.SECP256R1())
    proxy = _signed(
        _name(FRONT_PROXY_NAME),
        proxy_key.public_key(),
        ca_name,
        ca_key,
        usages=[ExtendedKeyUsageOID.CLIENT_AUTH],
    )
    _write_key(pki.front_proxy_key, proxy_key)
    _write_cert(pki.front_proxy_cert, proxy)

    # The local registry's TLS listener (olm/devcluster/registry.py): loopback names only.
    registry_key = ec.generate_private_key(ec.SECP256R1())
    registry = _signed(
        _name("olm-py-registry"),
        registry_key.public_key(),
        ca_name,
        ca_key,
        usages=[ExtendedKeyUsageOID.SERVER_AUTH],
        sans=[x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")],
    )
    _write_key(pki.registry_key, registry_key)
    _write_cert(pki.registry_cert, registry)

    # Service-account tokens are signed with RSA, the algorithm every component accepts.
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    _write_key(pki.service_account_key, sa_key)
    pki.service_account_pub.write_bytes(
        sa_key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return pki
