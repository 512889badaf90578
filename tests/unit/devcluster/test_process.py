"""Processes are stopped by PID, and only while the PID is still the process we started.

No test measures wall-clock time: the grace period runs on a fake clock, and the tests check
which signals were sent, in order.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from olm.devcluster import process
from olm.devcluster.process import SpawnError, is_running, spawn, stop


class StepClock:
    """A clock that moves `step` seconds every time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(1000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


@pytest.fixture
def signals(monkeypatch: pytest.MonkeyPatch) -> list[signal.Signals]:
    """The signals `stop` sends, in order (they are still delivered)."""
    sent: list[signal.Signals] = []
    kill = os.kill

    def recording_kill(pid: int, sig: int) -> None:
        sent.append(signal.Signals(sig))
        kill(pid, sig)

    monkeypatch.setattr(process.os, "kill", recording_kill)
    return sent


def test_spawn_and_stop(tmp_path: Path, signals: list[signal.Signals]) -> None:
    child, record = spawn("sleeper", ["sleep", "60"], tmp_path / "sleeper.log")
    assert is_running(record)
    stop(record)
    assert not is_running(record)
    assert child.poll() is not None
    assert signals == [signal.SIGTERM], "a process that obeys SIGTERM is never killed"


def test_a_process_that_ignores_sigterm_is_killed_when_the_grace_period_is_over(
    tmp_path: Path, signals: list[signal.Signals]
) -> None:
    ready = tmp_path / "ready"
    script = f"trap '' TERM; touch {ready}; while true; do sleep 0.1; done"
    child, record = spawn("stubborn", ["sh", "-c", script], tmp_path / "s.log")
    _until(ready.exists, "the shell ignores SIGTERM")
    clock = StepClock(step=1)
    stop(record, grace=3, clock=clock)
    assert not is_running(record)
    assert child.poll() is not None
    assert signals == [signal.SIGTERM, signal.SIGKILL]
    assert clock.now >= 3, "SIGKILL only after the whole grace period passed on the clock"


def test_a_reused_pid_is_never_signalled(tmp_path: Path, signals: list[signal.Signals]) -> None:
    _child, record = spawn("sleeper", ["sleep", "60"], tmp_path / "s.log")
    impostor = dataclasses.replace(record, start_ticks=record.start_ticks + 1)
    assert not is_running(impostor)
    stop(impostor)
    assert is_running(record), "a record with another identity must not stop the real process"
    assert signals == []
    stop(record)


def test_unrunnable_binary_is_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "etcd"
    garbage.write_bytes(b"\x00\x01 not an executable")
    garbage.chmod(0o755)
    with pytest.raises(SpawnError, match=r"etcd could not be started.*olm dev build"):
        spawn("etcd", [str(garbage)], tmp_path / "etcd.log")
