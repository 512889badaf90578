"""Every `python -m` entry point of olm/ and tests/ answers `--help` without side effects (issue
27): usage text, exit 0, no cluster, build or server started, no file written.

Most entry points are devcluster's (builds, the pod runner and its stand-ins), the rest are the
samples the pod runner runs, `olm.catalog.samples`, the demo, the CLI and two test commands. They
are discovered, not listed: a module with a `__main__` guard (or a package's `__main__.py`) is
an entry point and so tested here; a module with a top-level `main()`, one that the Makefile,
docs or README run with `python -m`, and one that the pod runner runs (`PROGRAMS`, `STAND_INS`)
must be an entry point too, unless `LIBRARIES` says why not. Benchmarks have their own test
(tests/unit/benchmarks/test_help.py); the CLI's subcommands theirs (tests/unit/cli/test_help.py).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from olm.devcluster.podprograms import PROGRAMS, STAND_INS

ROOT = Path(__file__).resolve().parents[3]
GUARD = re.compile(r"""^if __name__ == ["']__main__["']:""", re.MULTILINE)
MAIN = re.compile(r"^def main\(", re.MULTILINE)
RUN_AS_MODULE = re.compile(r"python -m ((?:olm|tests)(?:\.\w+)+)")
# Modules that look like commands (named with `python -m`, or defining `main`) and are not.
LIBRARIES: dict[str, str] = {
    "olm.devcluster.reference": "the reference cluster's pieces; olm.devcluster.reference_build "
    "is the reference OLM's build command (`make reference-olm`)",
}
# `olm --help` only lists the subcommands; each one's help is tested in tests/unit/cli/test_help.py.
NO_TAKES_WRITES = {"olm.cli"}


def _module(path: Path) -> str:
    """The name `python -m` runs `path` by (a package's `__main__.py`: the package)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] in ("__init__", "__main__") else parts)


SOURCES = {
    path: path.read_text() for top in ("olm", "tests") for path in (ROOT / top).rglob("*.py")
}
ENTRY_POINTS = sorted(
    {_module(path) for path, text in SOURCES.items() if GUARD.search(text)}
    | {_module(path) for path in SOURCES if path.name == "__main__.py"}
)
MODULES = {_module(path) for path in SOURCES}


def _named_as_commands() -> set[str]:
    """Modules something runs with `python -m`: the Makefile, docs, README; the pod runner."""
    texts = [(ROOT / "Makefile").read_text(), (ROOT / "README.md").read_text()]
    texts += [path.read_text() for path in sorted((ROOT / "docs").rglob("*.md"))]
    named = {match for text in texts for match in RUN_AS_MODULE.findall(text)}
    return named | set(PROGRAMS.values()) | set(STAND_INS.values())


def test_the_entry_points_are_discovered() -> None:
    assert {
        "olm.devcluster.reference_build",
        "olm.devcluster.tools",
        "olm.devcluster.olm_e2e",
        "olm.samples.memcached",
        "tests.busy",
        "tests.parity.rediff",
    } <= set(ENTRY_POINTS)


def test_whatever_looks_like_a_command_is_one() -> None:
    """A module with `main()`, or run with `python -m`, is an entry point or a listed library."""
    with_main = {_module(path) for path, text in SOURCES.items() if MAIN.search(text)}
    for name in sorted(with_main | _named_as_commands()):
        assert name in ENTRY_POINTS or name in LIBRARIES, name
    for name in LIBRARIES:
        assert name in MODULES and name not in ENTRY_POINTS, name


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_help_has_no_side_effects(name: str, tmp_path: Path) -> None:
    home, work, temp = tmp_path / "home", tmp_path / "work", tmp_path / "tmp"
    for folder in (home, work, temp):
        folder.mkdir()
    tracked = _tracked_files()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
        "TMPDIR": str(temp),
        "HOME": str(home),
        # Caches and state default to HOME; these say so even where the caller set them.
        "OLM_PY_CACHE": str(home / "cache"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }
    done = subprocess.run(
        [sys.executable, "-m", name, "--help"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,  # a safety net: a build, cluster or server that starts would not end
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: "), done.stdout
    if name not in NO_TAKES_WRITES:
        assert "Takes " in done.stdout and "Writes " in done.stdout, done.stdout
    assert [list(folder.iterdir()) for folder in (home, work, temp)] == [[], [], []]
    assert _tracked_files() == tracked


def _tracked_files() -> dict[str, float]:
    """The repository's tracked files and their modification times (`olm.catalog.samples`
    writes one of them)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    paths = (ROOT / name for name in listed.split("\0") if name)
    return {str(path): path.stat().st_mtime for path in paths if path.exists()}
