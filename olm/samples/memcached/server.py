"""The HTTPS server of the sample operator's webhooks (`webhooks.py` holds the decisions).

It serves `POST /validate` (AdmissionReview v1) and `POST /convert` (ConversionReview v1)
with the serving certificate OLM mounts at `/tmp/k8s-webhook-server/serving-certs`
(`tls.crt`, `tls.key`). On the local cluster the pod runner materialises the pod's volumes
in a directory of its own and says where in `OLM_PY_MOUNTS` (`{"<mountPath>": "<dir>"}`);
without that variable the literal path is used.

Address: under the pod runner the process runs in the pod's own network namespace and listens
on the pod's address the runner gives in `POD_IP` (127.0.0.1 when the cluster has no pod
network); anywhere else it listens on 127.0.0.1 only. A certificate that changes on disk (rotation) is loaded for the next
connection; OLM also rolls the pods when it renews the CA.
"""

from __future__ import annotations

import json
import logging
import math
import os
import socket
import ssl
import sys
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from olm.samples.memcached.webhooks import admission_response, conversion_response
from olm.waiting import attempts

CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
MOUNTS_ENV = "OLM_PY_MOUNTS"
DEFAULT_PORT = 9443
MAX_BODY = 3 * 1024 * 1024  # the API server's own request limit

log = logging.getLogger("memcached-operator.webhooks")


def cert_dir(environ: Mapping[str, str]) -> Path:
    """Where the serving certificate is: the pod runner's directory for OLM's mount path."""
    mounts = _mounts(environ)
    for mount_path, local in sorted(mounts.items(), key=lambda item: -len(item[0])):
        mount_path = mount_path.rstrip("/")
        if mount_path == CERT_DIR or CERT_DIR.startswith(mount_path + "/"):
            return Path(local) / CERT_DIR[len(mount_path) :].lstrip("/")
    return Path(CERT_DIR)


def bind_address(environ: Mapping[str, str]) -> str:
    """The pod's address (`POD_IP`) under the pod runner, else loopback."""
    if MOUNTS_ENV not in environ:
        return "127.0.0.1"
    return environ.get("POD_IP") or "127.0.0.1"


def _mounts(environ: Mapping[str, str]) -> dict[str, str]:
    try:
        mounts = json.loads(environ.get(MOUNTS_ENV) or "{}")
    except ValueError:
        log.warning("%s is not JSON; using the literal mount paths", MOUNTS_ENV)
        return {}
    if not isinstance(mounts, dict):
        return {}
    return {str(k): str(v) for k, v in mounts.items()}


class _Certificates:
    """The server's TLS context, rebuilt when the certificate files change."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.lock = threading.Lock()
        self.stamp: tuple[float, float, int, int] | None = None
        self.context: ssl.SSLContext | None = None

    def _stamp(self) -> tuple[float, float, int, int]:
        crt, key = (os.stat(self.directory / name) for name in ("tls.crt", "tls.key"))
        return (crt.st_mtime, key.st_mtime, crt.st_ino, key.st_ino)

    def current(self) -> ssl.SSLContext:
        with self.lock:
            stamp = self._stamp()
            if self.context is None or stamp != self.stamp:
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
                context.minimum_version = ssl.TLSVersion.TLSv1_2
                context.load_cert_chain(self.directory / "tls.crt", self.directory / "tls.key")
                if self.context is not None:
                    log.info("serving certificate changed on disk: loaded the new one")
                self.context, self.stamp = context, stamp
            return self.context


class _Handler(BaseHTTPRequestHandler):
    server: WebhookHTTPServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        route = self.server.routes.get(self.path.split("?", 1)[0])
        if route is None:
            self._send(404, {"error": f"no webhook at {self.path}"})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._send(400, {"error": "a JSON review is expected in the body"})
            return
        try:
            review = json.loads(self.rfile.read(length))
            if not isinstance(review, dict):
                raise ValueError("not a JSON object")
        except ValueError as exc:
            self._send(400, {"error": f"the body is not a review: {exc}"})
            return
        self._send(200, route(review))

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class WebhookHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        certificates: _Certificates,
        routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]],
    ) -> None:
        self.certificates = certificates
        self.routes = routes
        super().__init__(address, _Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        raw, address = self.socket.accept()
        try:
            context = self.certificates.current()
        except (OSError, ssl.SSLError):
            raw.close()
            raise
        # The handshake happens in the request's own thread (on its first read).
        return context.wrap_socket(raw, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):  # TLS refused, connection dropped: the client's story
            log.info("webhook connection from %s ended: %s", client_address, error)
        else:
            log.warning("webhook request from %s failed", client_address, exc_info=True)


def make_server(directory: Path, host: str, port: int, limit: int) -> WebhookHTTPServer:
    """A bound (not yet serving) server; raises OSError when the certificate is unreadable."""
    certificates = _Certificates(directory)
    certificates.current()  # fail now, not on the first request
    routes: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
        "/validate": lambda review: admission_response(review, limit),
        "/convert": conversion_response,
    }
    return WebhookHTTPServer((host, port), certificates, routes)


def serve_in_background(
    environ: Mapping[str, str], port: int, limit: int, stop: threading.Event
) -> threading.Thread:
    """Serve the webhooks in a daemon thread; it waits for the certificate to be mounted."""

    def run() -> None:
        directory, host = cert_dir(environ), bind_address(environ)
        server: WebhookHTTPServer | None = None
        # Every 2 s until the certificate is mounted; stop.wait ends the wait once stopped.
        for _ in attempts(math.inf, 2.0, sleep=stop.wait):
            try:
                server = make_server(directory, host, port, limit)
                break
            except (OSError, ssl.SSLError) as exc:
                log.warning("webhooks not served yet (%s); retrying", exc)
        if server is None:
            return
        log.info("serving webhooks on https://%s:%d (certificate in %s)", host, port, directory)

        def stop_serving() -> None:
            stop.wait()
            server.shutdown()

        threading.Thread(target=stop_serving, daemon=True).start()
        server.serve_forever(poll_interval=0.5)
        server.server_close()

    thread = threading.Thread(target=run, name="webhooks", daemon=True)
    thread.start()
    return thread
