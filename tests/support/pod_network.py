"""Pod-network helpers: a serving certificate pair for a pod and `kubectl apply` of objects."""

from __future__ import annotations

import datetime
import json
import subprocess

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.support.cluster import ControlPlane


def serving_pair(host: str) -> tuple[bytes, bytes]:
    """A self-signed certificate for `host` (its own CA bundle) and its key, PEM."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def apply(plane: ControlPlane, *objects: dict[str, object]) -> subprocess.CompletedProcess[str]:
    listing = {"apiVersion": "v1", "kind": "List", "items": list(objects)}
    return plane.kubectl("apply", "-f", "-", stdin=json.dumps(listing), check=False)
