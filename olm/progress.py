"""Progress lines with elapsed time, for long work (builds, cluster start, `olm install`).

In the lowest layer, beside `olm.logs`, so the product's commands (`olm install`) and the dev
tooling (`olm.devcluster`) share one printer without the product importing the dev tooling.

Invariant: progress goes to stderr, so stdout stays clean for output a script may read
(`olm dev env`, `olm dev kubeconfig`).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO


def format_elapsed(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:5.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


class Progress:
    """Prints `[elapsed] message` lines; `heartbeat` repeats a line while a long step runs."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._quiet = quiet
        self._start = time.monotonic()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self._start

    def say(self, message: str) -> None:
        if self._quiet:
            return
        print(f"[{format_elapsed(self.elapsed)}] {message}", file=self._stream, flush=True)

    @contextmanager
    def heartbeat(self, message: str, every: float = 20.0) -> Iterator[None]:
        """Say `message` now, then `… still <message>` every `every` seconds until done."""
        self.say(message)
        done = threading.Event()
        step_start = time.monotonic()

        def beat() -> None:
            while not done.wait(every):
                took = format_elapsed(time.monotonic() - step_start).strip()
                self.say(f"… still {message[0].lower()}{message[1:]} ({took} so far)")

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


QUIET = Progress(quiet=True)
