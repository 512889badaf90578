"""Free TCP ports on 127.0.0.1 for the control plane's listeners.

The kernel picks a free port when we bind port 0; we release it and hand it to a component.
Another process could grab it in between (a small race envtest also accepts); a component
that then fails with "address already in use" is reported as a start failure.
"""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_ports(count: int) -> list[int]:
    """Return `count` distinct ports that were free on 127.0.0.1 a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((LOOPBACK, 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def is_listening(port: int, host: str = LOOPBACK, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
