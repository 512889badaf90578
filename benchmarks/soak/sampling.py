"""Samples taken through the soak: RSS and open fds of each `olm run`, and the API server's
request counter (`apiserver_request_total` of its /metrics, summed).

`Sampler` runs a thread that samples every `interval` seconds until closed; a sample that
cannot be taken (a process just killed, the API server stopped) is skipped, not guessed.
"""

from __future__ import annotations

import http.client
import itertools
import os
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def request_total(metrics: str) -> float:
    """The sum of every `apiserver_request_total` series in a /metrics text."""
    total = 0.0
    for line in metrics.splitlines():
        if line.startswith("apiserver_request_total{") or line.startswith(
            "apiserver_request_total "
        ):
            total += float(line.rsplit(" ", 1)[1])
    return total


@dataclass
class Samples:
    # (seconds since the soak's start, replica index, pid, RSS MiB, open fds)
    processes: list[tuple[float, int, int, float, int]] = field(default_factory=list)
    # (seconds since the start, apiserver_request_total)
    requests: list[tuple[float, float]] = field(default_factory=list)


class Sampler:
    def __init__(
        self,
        pids: Callable[[], list[int | None]],
        api_url: str,
        context: ssl.SSLContext,
        origin: float,
        interval: float = 5.0,
    ) -> None:
        self.pids, self.api_url, self.context = pids, api_url, context
        self.origin, self.interval = origin, interval
        self.samples = Samples()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed.set()
        self._thread.join(10)

    def _loop(self) -> None:
        while not self._closed.wait(self.interval):
            now = round(time.monotonic() - self.origin, 2)
            for index, pid in enumerate(self.pids()):
                if pid is None:
                    continue
                rss, fds = rss_kib(pid), open_fds(pid)
                if rss is not None and fds is not None:
                    self.samples.processes.append((now, index, pid, round(rss / 1024, 1), fds))
            try:
                with urllib.request.urlopen(
                    f"{self.api_url}/metrics", context=self.context, timeout=3
                ) as response:
                    text = response.read().decode(errors="replace")
            # A kube-apiserver killed mid-answer cuts the metrics off (IncompleteRead, an
            # HTTPException): a sample is missed, the sampler lives on.
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError):
                continue
            self.samples.requests.append((now, request_total(text)))


def rates(requests: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Requests per second between consecutive samples (a restart resets the counter: the
    interval across it is left out)."""
    found = []
    for (t0, v0), (t1, v1) in itertools.pairwise(requests):
        if t1 > t0 and v1 >= v0:
            found.append((t1, round((v1 - v0) / (t1 - t0), 2)))
    return found
