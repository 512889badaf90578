"""How a registry is spoken to: the transport the client uses for one registry host.

Docker's rule, which OLM users already know from `--insecure-registry`:
- a registry is *insecure* when it is on loopback (127.0.0.1, localhost, [::1]) or listed in
  $OLM_INSECURE_REGISTRIES; every other registry is spoken to over HTTPS with the certificate
  verified against the system's trust store (which honours SSL_CERT_FILE and SSL_CERT_DIR);
- an insecure registry is tried over HTTPS first, its certificate not verified, and spoken to over
  plain HTTP when it does not answer TLS.

Which of the two an insecure registry speaks is learnt by one TLS handshake and remembered per
process, keyed by host:port, until a connection to that host fails (`forget`): a registry
restarted with or without TLS on the same port is learnt again on the next request. A handshake
that learns nothing (refused, timed out) is not remembered, and plain HTTP is used so the
request's own error says what is wrong, as before TLS was tried.
"""

from __future__ import annotations

import socket
import ssl
import threading
from dataclasses import dataclass

from olm.image.reference import plain_http

PROBE_TIMEOUT = 5.0
HTTPS_PORT = 443


@dataclass(frozen=True)
class Transport:
    scheme: str  # "https" or "http"
    verify: bool  # whether the server's certificate is checked (HTTPS only)


VERIFIED = Transport("https", True)
UNVERIFIED = Transport("https", False)
PLAIN = Transport("http", False)

_learnt: dict[str, bool] = {}  # host[:port] -> it completed a TLS handshake
_lock = threading.Lock()


def unverified_context() -> ssl.SSLContext:
    """TLS without certificate checks: what Docker uses for an insecure registry's HTTPS."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def _host_port(address: str) -> tuple[str, int]:
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else HTTPS_PORT
    host, sep, port = address.rpartition(":")
    if sep and port.isdigit():
        return host, int(port)
    return address, HTTPS_PORT


def _tls_refused(error: ssl.SSLError) -> bool:
    """The server answered, but not with TLS (an HTTP server reading our ClientHello answers
    400 and closes, which OpenSSL reports as a wrong version number or a record-layer error).
    An alert is a TLS server refusing the handshake: it does speak TLS."""
    return "ALERT" not in f"{error.reason or ''} {error}".upper()


def speaks_tls(address: str, timeout: float = PROBE_TIMEOUT) -> bool | None:
    """One TLS handshake with host[:port]: True when the server completes it (or refuses it with
    a TLS alert), False when it answers something that is not TLS, None when nothing could be
    learnt (nothing listening, no answer in time)."""
    host, port = _host_port(address)
    try:
        with (
            socket.create_connection((host, port), timeout=timeout) as raw,
            unverified_context().wrap_socket(raw, server_hostname=host),
        ):
            return True
    except ssl.SSLError as exc:
        return not _tls_refused(exc)
    except ConnectionResetError:
        return False
    except OSError:
        return None


def transport(registry: str, api_host: str, insecure: frozenset[str] | set[str]) -> Transport:
    """The transport for `registry` (served at `api_host`): VERIFIED unless it is insecure;
    then UNVERIFIED when it speaks TLS, PLAIN otherwise."""
    if not plain_http(registry, insecure):
        return VERIFIED
    address = api_host or registry
    with _lock:
        known = _learnt.get(address)
    if known is None:
        known = speaks_tls(address)
        if known is None:
            return PLAIN
        with _lock:
            _learnt[address] = known
    return UNVERIFIED if known else PLAIN


def forget(address: str) -> None:
    """A connection to `address` failed: learn its transport again on the next request."""
    with _lock:
        _learnt.pop(address, None)
