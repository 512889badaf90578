"""One measured run of olm-py's catalog pipeline in a fresh process (for fair memory numbers):
load, validate, and index for serving; prints JSON timings and peak RSS."""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from benchmarks.cli import parser
from olm.catalog.formats import load
from olm.catalog.inspect import inspect
from olm.catalog.validate import validate
from olm.registry.index import RegistryIndex


def main(argv: list[str] | None = None) -> int:
    command = parser(
        "benchmarks.catalog_probe",
        __doc__,
        takes="seconds (a few for the generated catalog)",
        writes="nothing: prints one JSON line (run by benchmarks/catalogs.py)",
    )
    command.add_argument("path", type=Path, help="a catalog directory (any format olm reads)")
    command.add_argument(
        "mode",
        choices=("index", "inspect"),
        help="after load and validate: index it for serving, or inspect it",
    )
    args = command.parse_args(argv)
    path, mode = args.path, args.mode
    started = time.perf_counter()
    catalog = load(path)
    loaded = time.perf_counter()
    problems = validate(catalog)
    validated = time.perf_counter()
    if mode == "inspect":
        inspect(catalog)
    else:
        RegistryIndex(catalog)
    done = time.perf_counter()
    print(
        json.dumps(
            {
                "load_s": round(loaded - started, 3),
                "validate_s": round(validated - loaded, 3),
                f"{mode}_s": round(done - validated, 3),
                "total_s": round(done - started, 3),
                "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "packages": len(catalog.packages),
                "bundles": catalog.bundle_count,
                "problems": len(problems),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
