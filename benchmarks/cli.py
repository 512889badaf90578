"""The command line of every benchmark: one argparse parser per `python -m benchmarks.X`.

Invariant: building a parser and `--help` have no side effects (no cluster, no file, no
network); a benchmark starts only after its arguments parsed. Each help says what the
benchmark measures (the module's docstring), how long it takes and what it writes.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def parser(module: str, doc: str | None, *, takes: str, writes: str) -> argparse.ArgumentParser:
    """The parser of `python -m {module}`: the docstring as its description, and how long a
    run takes and what it writes as its epilog."""
    return argparse.ArgumentParser(
        prog=f"python -m {module}",
        description=doc,
        epilog=f"Takes {takes}. Writes {writes}.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def run_once(
    module: str,
    doc: str | None,
    run: Callable[[Path], dict[str, Any]],
    argv: Sequence[str] | None,
    *,
    takes: str,
    writes: str,
) -> int:
    """A benchmark without options: parse (so `--help` works), run once into
    benchmarks/results/ and print the summary as JSON."""
    parser(module, doc, takes=takes, writes=writes).parse_args(argv)
    print(json.dumps(run(RESULTS), indent=2))
    return 0
