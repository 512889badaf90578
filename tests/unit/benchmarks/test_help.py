"""Every benchmark command answers `--help` without side effects (issue 27): usage text, exit 0,
no cluster started, no file written, here or in benchmarks/results/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BENCHMARKS = ROOT / "benchmarks"
# Modules that other benchmarks import and that are not commands themselves.
LIBRARIES = {"__init__", "api_requests", "cli", "copy_ceiling", "fault_stories", "plot", "watching"}
COMMANDS = sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem not in LIBRARIES)


def _results() -> dict[str, float]:
    results = BENCHMARKS / "results"
    return {p.name: p.stat().st_mtime for p in results.rglob("*")} if results.exists() else {}


def test_every_benchmark_is_a_command() -> None:
    """A new benchmark module is either a command (and so tested below) or a library here."""
    for name in COMMANDS:
        assert 'if __name__ == "__main__":' in (BENCHMARKS / f"{name}.py").read_text(), name


@pytest.mark.parametrize("name", COMMANDS)
def test_help_has_no_side_effects(name: str, tmp_path: Path) -> None:
    work, temp = tmp_path / "work", tmp_path / "tmp"
    work.mkdir()
    temp.mkdir()
    before = _results()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temp), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{name}", "--help"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a safety net: a benchmark that starts would take minutes
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m benchmarks.{name}")
    assert "Takes " in done.stdout and "Writes " in done.stdout
    assert list(work.iterdir()) == [] and list(temp.iterdir()) == []
    assert _results() == before
