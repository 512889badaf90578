"""`make bench`: run every benchmark and write JSON + SVG plots to benchmarks/results/."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from benchmarks import catalogs, devcluster, olm_operator, resolution

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> int:
    summary = devcluster.run(RESULTS)
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}, indent=2))
    print(json.dumps(olm_operator.run(RESULTS), indent=2))
    print(json.dumps(catalogs.run(RESULTS), indent=2))
    print(json.dumps(resolution.run(RESULTS), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
