"""Start and stop the control plane's processes, by PID and never by name.

Invariant: a recorded process is only signalled while its PID still refers to the same
process we started (same kernel start time and executable), so a PID reused by an unrelated
process after a crash is never touched.

`stop` takes its clock as a parameter (default `time.monotonic`) so tests can expire the grace
period without waiting for it. `wait_for` polls a started component's health check until it
passes, the process dies or time runs out.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.waiting import attempts


class SpawnError(RuntimeError):
    """A component's executable could not be run at all."""


@dataclass(frozen=True)
class ProcessRecord:
    """Identity of a process we started."""

    name: str
    pid: int
    start_ticks: int
    executable: str

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessRecord:
        return cls(
            name=str(data["name"]),
            pid=int(data["pid"]),
            start_ticks=int(data["start_ticks"]),
            executable=str(data["executable"]),
        )


def _start_ticks(pid: int) -> int | None:
    """The process start time in clock ticks since boot (field 22 of /proc/<pid>/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces; fields after it follow the last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[19])


def _state(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def is_running(record: ProcessRecord) -> bool:
    """True while the recorded process is alive (zombies count as gone)."""
    return _start_ticks(record.pid) == record.start_ticks and _state(record.pid) not in (None, "Z")


def spawn(
    name: str, argv: list[str], log_path: Path, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], ProcessRecord]:
    """Start `argv` in its own session with output appended to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        try:
            child = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                # Own session: a Ctrl-C in the terminal that ran `olm dev up` must not stop it.
                start_new_session=True,
            )
        except OSError as exc:
            raise SpawnError(
                f"{name} could not be started from {argv[0]} ({exc.strerror or exc}). The binary "
                "cache may be corrupt: run `olm dev build` to check and rebuild it."
            ) from exc
    ticks = _start_ticks(child.pid)
    return child, ProcessRecord(name, child.pid, ticks if ticks is not None else -1, argv[0])


def stop(
    record: ProcessRecord, grace: float = 10.0, clock: Callable[[], float] = time.monotonic
) -> None:
    """SIGTERM the recorded process, then SIGKILL it if it outlives `grace` seconds of `clock`."""
    if not is_running(record):
        return
    try:
        os.kill(record.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in attempts(grace, 0.05, clock=clock):
        _reap(record.pid)
        if not is_running(record):
            return
    if is_running(record):
        try:
            os.kill(record.pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        for _ in attempts(5.0, 0.05):
            _reap(record.pid)
            if not is_running(record):
                return


def _reap(pid: int) -> None:
    """Collect the exit status if `pid` is our own child, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        content = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(content[-lines:])


def wait_for(
    check: Callable[[], tuple[bool, str]],
    *,
    timeout: float,
    alive: Callable[[], bool] = lambda: True,
    interval: float = 0.2,
) -> tuple[bool, str]:
    """Poll `check` until it passes, `alive` turns false, or `timeout` runs out."""
    last = ""
    for _ in attempts(timeout, interval):
        ok, last = check()
        if ok:
            return True, last
        if not alive():
            return False, last
    return False, last
