"""The generated CA signs a serving cert for 127.0.0.1 and an admin cert in system:masters."""

from __future__ import annotations

import ipaddress
from pathlib import Path

from cryptography import x509
from cryptography.x509.oid import NameOID

from olm.devcluster.pki import generate


def test_certificates_chain_to_the_ca(tmp_path: Path) -> None:
    keys = generate(tmp_path)
    ca = x509.load_pem_x509_certificate(keys.ca_cert.read_bytes())
    serving = x509.load_pem_x509_certificate(keys.serving_cert.read_bytes())
    admin = x509.load_pem_x509_certificate(keys.admin_cert.read_bytes())
    serving.verify_directly_issued_by(ca)
    admin.verify_directly_issued_by(ca)
    sans = serving.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
    organizations = admin.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    assert [o.value for o in organizations] == ["system:masters"]
    assert oct(keys.ca_key.stat().st_mode)[-3:] == "600"


def test_the_registry_certificate_is_for_loopback_only_and_chains_to_the_ca(
    tmp_path: Path,
) -> None:
    keys = generate(tmp_path)
    ca = x509.load_pem_x509_certificate(keys.ca_cert.read_bytes())
    served = x509.load_pem_x509_certificate(keys.registry_cert.read_bytes())
    served.verify_directly_issued_by(ca)
    sans = served.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    assert oct(keys.registry_key.stat().st_mode)[-3:] == "600"
