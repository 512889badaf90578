"""The HTTP endpoints: /healthz and /readyz on the health port, /metrics on the metrics port.

- /healthz: 200 while the process serves (the liveness probe).
- /readyz: 200 once the caches are synced (every watched kind listed; `Store.synced`), on a
  standby as on the leader: a standby is ready to take over, and a leader-only readiness
  would keep standbys out of the Service (controller-runtime behaves the same way). 503 before.
- /metrics: the Prometheus text format of `registry`.

Each server is a `ThreadingHTTPServer` on a daemon thread; port 0 disables it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

log = logging.getLogger("olm.metrics")

Route = Callable[[], tuple[int, str, bytes]]  # -> (status, content type, body)
TEXT = "text/plain; charset=utf-8"


def health_routes(ready: Callable[[], bool]) -> dict[str, Route]:
    def healthz() -> tuple[int, str, bytes]:
        return 200, TEXT, b"ok\n"

    def readyz() -> tuple[int, str, bytes]:
        if ready():
            return 200, TEXT, b"ok\n"
        return 503, TEXT, b"caches not synced yet\n"

    return {"/healthz": healthz, "/readyz": readyz}


def metrics_routes(registry: CollectorRegistry) -> dict[str, Route]:
    def metrics() -> tuple[int, str, bytes]:
        return 200, CONTENT_TYPE_LATEST, generate_latest(registry)

    return {"/metrics": metrics}


class Server:
    """One HTTP server on `host:port` answering `routes` (GET only)."""

    def __init__(self, host: str, port: int, routes: dict[str, Route]) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                route = routes.get(self.path.split("?", 1)[0])
                if route is None:
                    status, content_type, body = 404, TEXT, b"not found\n"
                else:
                    try:
                        status, content_type, body = route()
                    except Exception:
                        log.exception("serving %s failed", self.path)
                        status, content_type, body = 500, TEXT, b"internal error\n"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # probes every few seconds would drown the log

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = int(self.httpd.server_address[1])
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, daemon=True, name=f"http-{self.port}"
        )

    def start(self) -> Server:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
