"""Which transport a registry is spoken to with (olm/image/scheme.py): verified HTTPS unless the
registry is insecure (loopback or listed); an insecure one as it answers a TLS handshake."""

from __future__ import annotations

import ssl

import pytest

from olm.image import scheme
from olm.image.scheme import PLAIN, UNVERIFIED, VERIFIED, transport


def test_a_registry_that_is_not_insecure_is_verified_https_without_asking_it() -> None:
    assert transport("quay.io", "quay.io", frozenset()) is VERIFIED
    assert transport("docker.io", "registry-1.docker.io", frozenset()) is VERIFIED
    assert transport("registry.example.com:5000", "", frozenset({"other:5000"})) is VERIFIED


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        ("127.0.0.1:5000", ("127.0.0.1", 5000)),
        ("localhost:8443", ("localhost", 8443)),
        ("[::1]:5000", ("::1", 5000)),
        ("[::1]", ("::1", 443)),
        ("registry.internal", ("registry.internal", 443)),
    ],
)
def test_host_and_port_of_an_address(address: str, expected: tuple[str, int]) -> None:
    assert scheme._host_port(address) == expected


def test_an_alert_means_the_server_speaks_tls_anything_else_means_it_does_not() -> None:
    wrong_version = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    wrong_version.reason = "WRONG_VERSION_NUMBER"
    record = ssl.SSLError(1, "[SSL] record layer failure")
    record.reason = "RECORD_LAYER_FAILURE"
    alert = ssl.SSLError(1, "[SSL: TLSV1_ALERT_PROTOCOL_VERSION] tlsv1 alert protocol version")
    alert.reason = "TLSV1_ALERT_PROTOCOL_VERSION"
    assert scheme._tls_refused(wrong_version)
    assert scheme._tls_refused(record)
    assert not scheme._tls_refused(alert)


def test_an_insecure_registry_is_learnt_once_and_learnt_again_after_forget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []
    answers = iter([True, False])

    def handshake(address: str, timeout: float = 0) -> bool | None:
        asked.append(address)
        return next(answers)

    monkeypatch.setattr(scheme, "speaks_tls", handshake)
    monkeypatch.setattr(scheme, "_learnt", {})
    assert transport("127.0.0.1:5000", "", frozenset()) is UNVERIFIED
    assert transport("127.0.0.1:5000", "", frozenset()) is UNVERIFIED
    assert asked == ["127.0.0.1:5000"]
    scheme.forget("127.0.0.1:5000")
    assert transport("127.0.0.1:5000", "", frozenset()) is PLAIN
    assert asked == ["127.0.0.1:5000", "127.0.0.1:5000"]


def test_a_handshake_that_learns_nothing_is_plain_http_and_not_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[str] = []

    def handshake(address: str, timeout: float = 0) -> bool | None:
        asked.append(address)
        return None

    monkeypatch.setattr(scheme, "speaks_tls", handshake)
    monkeypatch.setattr(scheme, "_learnt", {})
    insecure = frozenset({"registry.internal:5000"})
    assert transport("registry.internal:5000", "", insecure) is PLAIN
    assert transport("registry.internal:5000", "", insecure) is PLAIN
    assert asked == ["registry.internal:5000"] * 2
