"""/healthz, /readyz and /metrics on 127.0.0.1, and a clear error for a busy port."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request

import pytest

from olm.app import ListenError, Operations, _server
from olm.metrics.collector import OlmCollector, registry
from olm.metrics.counters import Counters
from olm.metrics.server import Server, health_routes, metrics_routes


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_probes_follow_the_cache_barrier() -> None:
    synced = threading.Event()
    server = Server("127.0.0.1", 0, health_routes(synced.is_set)).start()
    try:
        assert get(server.port, "/healthz")[0] == 200
        assert get(server.port, "/readyz") == (503, "caches not synced yet\n")
        synced.set()
        assert get(server.port, "/readyz")[0] == 200
        assert get(server.port, "/nope")[0] == 404
    finally:
        server.stop()


def test_metrics_endpoint() -> None:
    collector = OlmCollector(lambda: {"csv": []}, Counters(), lambda: True)
    server = Server("127.0.0.1", 0, metrics_routes(registry(collector))).start()
    try:
        status, text = get(server.port, "/metrics")
        assert status == 200
        assert "csv_count 0.0" in text.splitlines()
        assert "process_cpu_seconds_total" in text or "python_info" in text
    finally:
        server.stop()


def test_a_busy_port_is_a_clear_error() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        ops = Operations(bind_address="127.0.0.1", metrics_port=port)
        with pytest.raises(ListenError, match=f"127.0.0.1:{port}.*choose another --metrics-port"):
            _server(ops, port, {}, "--metrics-port")
