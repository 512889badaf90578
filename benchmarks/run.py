"""`make bench`: run every benchmark and write JSON + SVG plots to benchmarks/results/.

`python -m benchmarks.run faults resolution` runs only the named ones."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import (
    api_economy,
    catalogs,
    console,
    devcluster,
    faults,
    global_operators,
    image_catalog,
    memory_floor,
    olm_install,
    olm_operator,
    packagemanifests,
    reference_olm,
    resolution,
)
from benchmarks.cli import RESULTS, parser


def _devcluster(results: Path) -> dict[str, Any]:
    return {k: v for k, v in devcluster.run(results).items() if k != "runs"}


def _faults(results: Path) -> dict[str, Any]:
    summary = faults.run(results)
    return {
        **{k: v for k, v in summary.items() if k != "stories"},
        "stories": {
            name: {k: v for k, v in story.items() if k not in ("runs", "controls")}
            for name, story in summary["stories"].items()
        },
    }


BENCHMARKS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "devcluster": _devcluster,
    "olm_operator": olm_operator.run,
    "catalogs": catalogs.run,
    "resolution": resolution.run,
    "faults": _faults,
    "global_operators": global_operators.run,
    "olm_install": olm_install.run,
    "image_catalog": image_catalog.run,
    "reference_olm": reference_olm.run,
    "packagemanifests": packagemanifests.run,
    "console": console.run,
    "memory_floor": memory_floor.run,
    # Both sides (the real OLM too), 1,000 namespaces, 10 idle minutes.
    "api_economy": lambda results: api_economy.run(results, reference_olm.SIDES, 1000, 600.0),
}


def main(argv: list[str] | None = None) -> int:
    command = parser(
        "benchmarks.run",
        __doc__,
        takes="more than an hour for all of them (reference_olm alone 30-45 minutes); "
        "`python -m benchmarks.NAME --help` says how long each one takes",
        writes="one JSON file and SVG plots per benchmark to benchmarks/results/, and prints "
        "each summary as JSON",
    )
    command.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help=f"benchmarks to run, in order (default: all): {', '.join(BENCHMARKS)}",
    )
    names = command.parse_args(argv).names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    for name in names:
        print(json.dumps(BENCHMARKS[name](RESULTS), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
