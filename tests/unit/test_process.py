"""Processes are stopped by PID, and only while the PID is still the process we started."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from olm.devcluster.process import SpawnError, is_running, spawn, stop


def test_spawn_and_stop(tmp_path: Path) -> None:
    child, record = spawn("sleeper", ["sleep", "60"], tmp_path / "sleeper.log")
    assert is_running(record)
    stop(record)
    assert not is_running(record)
    assert child.poll() is not None


def test_stubborn_process_is_killed(tmp_path: Path) -> None:
    script = "trap '' TERM; while true; do sleep 0.1; done"
    _, record = spawn("stubborn", ["sh", "-c", script], tmp_path / "s.log")
    started = time.monotonic()
    stop(record, grace=0.5)
    assert not is_running(record)
    assert time.monotonic() - started < 5


def test_a_reused_pid_is_never_signalled(tmp_path: Path) -> None:
    _child, record = spawn("sleeper", ["sleep", "60"], tmp_path / "s.log")
    impostor = dataclasses.replace(record, start_ticks=record.start_ticks + 1)
    assert not is_running(impostor)
    stop(impostor)
    assert is_running(record), "a record with another identity must not stop the real process"
    stop(record)


def test_unrunnable_binary_is_a_clear_error(tmp_path: Path) -> None:
    garbage = tmp_path / "etcd"
    garbage.write_bytes(b"\x00\x01 not an executable")
    garbage.chmod(0o755)
    with pytest.raises(SpawnError, match=r"etcd could not be started.*olm dev build"):
        spawn("etcd", [str(garbage)], tmp_path / "etcd.log")
