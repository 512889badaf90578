"""`make bench`: run every benchmark and write JSON + SVG plots to benchmarks/results/.

`python -m benchmarks.run faults resolution` runs only the named ones."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import (
    catalogs,
    devcluster,
    faults,
    global_operators,
    image_catalog,
    olm_install,
    olm_operator,
    packagemanifests,
    reference_olm,
    resolution,
)

RESULTS = Path(__file__).resolve().parent / "results"


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
}


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark(s) {unknown}; choose from {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    for name in names:
        print(json.dumps(BENCHMARKS[name](RESULTS), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
