"""`olm --help` and `olm <subcommand> ... --help` answer for every command of the argparse tree:
usage text and exit 0, before any command runs (issue 27)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from olm.cli import build_parser, main


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(build_parser()))


def test_the_tree_is_walked() -> None:
    assert {("run",), ("dev", "up"), ("catalog", "serve"), ("plan", "show")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "olm")
def test_help_exits_zero_with_usage(
    path: tuple[str, ...],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main([*path, "--help"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: {' '.join(('olm', *path))}")
    assert list(tmp_path.iterdir()) == []


def test_demo_help_starts_nothing(tmp_path: Path) -> None:
    """`python -m olm.demo --help` (`make demo`'s module) prints usage, no cluster started."""
    done = subprocess.run(
        [sys.executable, "-m", "olm.demo", "--help"],
        cwd=tmp_path,
        env={**os.environ, "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,  # a safety net: a demo that starts would take minutes
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m olm.demo")
    assert list(tmp_path.iterdir()) == []
