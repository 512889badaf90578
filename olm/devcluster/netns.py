"""Entering the pod network's namespaces, and relaying TCP connections out of them.

- `enter` moves a thread (or a child before exec) into a namespace; Python 3.11 has no
  `os.setns`, so libc is called through ctypes (loaded in the parent, never in a forked child).
- `listen_in` opens a listening socket inside a namespace from a throw-away thread: a socket
  stays in the namespace it was created in, and the caller's thread never changes namespace.
- `Forwarder` serves such sockets on one asyncio loop in a thread of the host's namespace, so
  every relayed connection reaches the host's `127.0.0.1:<target port>`. It serves three
  things (docs/pod-network.md): the kube-apiserver inside each pod's namespace
  (`127.0.0.1:<api port>` -> the same port), the containerPorts of olm-py image pods
  (`<pod IP>:<containerPort>` -> the mapped host port), and host bridges
  (`<bridge address>:<targetPort>` -> the host port the Service's annotation names).
  The host's other addresses never get a listener.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import os
import socket
import threading
from pathlib import Path
from typing import Any

from olm.devcluster.network import NetworkError

NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000
LOOPBACK = "127.0.0.1"


@functools.cache
def libc() -> Any:
    # Loaded in the parent (open_netns) so a forked child never runs the dynamic loader.
    return ctypes.CDLL("libc.so.6", use_errno=True)


def enter(netns_fd: int) -> None:
    """Move the calling thread (or a child before exec) into the network namespace `netns_fd`."""
    if libc().setns(netns_fd, CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns failed: {os.strerror(errno)}")


def open_netns(name: str) -> int:
    libc()
    return os.open(NETNS_DIR / name, os.O_RDONLY | os.O_CLOEXEC)


def listen_in(name: str, host: str, port: int) -> socket.socket:
    """A TCP socket listening on host:port inside namespace `name`."""
    result: list[socket.socket | BaseException] = []

    def create() -> None:
        try:
            fd = open_netns(name)
            try:
                enter(fd)
            finally:
                os.close(fd)
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.listen(64)
            sock.setblocking(False)
            result.append(sock)
        except BaseException as exc:  # handed to the caller
            result.append(exc)

    # The thread ends in the namespace and is discarded; the caller's stays untouched.
    worker = threading.Thread(target=create, name=f"netns-{name}", daemon=True)
    worker.start()
    worker.join()
    outcome = result[0]
    if isinstance(outcome, BaseException):
        raise NetworkError(f"cannot listen on {host}:{port} in {name}: {outcome}")
    return outcome


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


Listener = tuple[str, str, int]  # (namespace, listen address, listen port)


class Forwarder:
    """Listeners inside namespaces, each relaying its connections to the host's
    127.0.0.1:<target port>; one asyncio loop in a thread of its own. Thread-safe."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.servers: dict[Listener, tuple[int, asyncio.Server]] = {}
        self.connections: dict[Listener, set[asyncio.StreamWriter]] = {}
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.loop.run_forever, name="forwarder", daemon=True)
        self.thread.start()

    def _call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def open(
        self, netns: str, port: int, *, address: str = LOOPBACK, target: int | None = None
    ) -> None:
        """Listen on `address`:`port` in `netns`, relaying to the host's 127.0.0.1:`target`
        (default: the same port). Opening what is already open with the same target is a
        no-op; with another target, the listener is replaced."""
        target = port if target is None else target
        key = (netns, address, port)
        with self.lock:
            existing = self.servers.get(key)
            if existing is not None and existing[0] == target:
                return
            if existing is not None:
                self._stop(key)
            sock = listen_in(netns, address, port)
            writers: set[asyncio.StreamWriter] = set()

            async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
                try:
                    upstream = await asyncio.open_connection(LOOPBACK, target)
                except OSError:
                    writer.close()
                    return
                upstream_reader, upstream_writer = upstream
                writers.update((writer, upstream_writer))
                try:
                    await asyncio.gather(
                        _pipe(reader, upstream_writer), _pipe(upstream_reader, writer)
                    )
                finally:
                    writers.difference_update((writer, upstream_writer))

            async def start() -> asyncio.Server:
                return await asyncio.start_server(handle, sock=sock)

            self.servers[key] = (target, self._call(start()))
            self.connections[key] = writers

    def listeners(self, netns: str) -> dict[tuple[str, int], int]:
        """(address, port) -> target port of every listener open in `netns`."""
        with self.lock:
            return {(k[1], k[2]): v[0] for k, v in self.servers.items() if k[0] == netns}

    def close(self, netns: str, port: int | None = None) -> None:
        """Close the listeners of `netns` (only those on `port`, when given) and their
        connections."""
        with self.lock:
            for key in [k for k in self.servers if k[0] == netns and port in (None, k[2])]:
                self._stop(key)

    def _stop(self, key: Listener) -> None:
        _, server = self.servers.pop(key)
        writers = self.connections.pop(key, set())

        async def stop() -> None:
            server.close()
            for writer in list(writers):
                with contextlib.suppress(Exception):
                    writer.close()

        self._call(stop())
