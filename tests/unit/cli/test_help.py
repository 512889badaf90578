"""`olm --help` and `olm <subcommand> ... --help` answer for every command of the argparse tree:
usage text and exit 0, before any command runs (issue 27)."""

from __future__ import annotations

import argparse
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
