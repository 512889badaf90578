"""Benchmark: where `olm run`'s resident memory goes before it has any work (issue 28).

Three views, each in fresh Python processes (no cluster needed):
- the RSS of `import olm.app` (everything `olm run` loads before it connects);
- the RSS each heavy library adds on top of kopf and the kubernetes client (which stay the
  project's libraries), imported alone: what a lazy import of it would save while unused;
- with `--pid N` (a running `olm run`), its memory by mapping from /proc/N/smaps: the heap
  and anonymous memory against the libraries' code and data, largest first.
`python -X importtime -c "import olm.app"` gives the import chain of each library (who
imports it); docs/performance.md records what was cut.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.cli import RESULTS, parser

# Imported first in every probe: the floor nobody can cut.
BASE = ("kopf", "kubernetes.client")
LIBRARIES = (
    "aiohttp",
    "olm.registry.server",  # gRPC and protobuf: the registry's server and clients
    "cryptography.x509",  # serving certificates (the PackageManifest API, webhooks)
    "pysat.solvers",
    "cel",
    "jsonschema",
    "yaml",
    "olm.apiserver.server",
)
PROBE = """
import importlib, sys
def rss():
    for line in open('/proc/self/status'):
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
start = rss()
for name in {base!r}:
    importlib.import_module(name)
base = rss()
for name in {extra!r}:
    importlib.import_module(name)
print(start, base, rss(), len(sys.modules))
"""


def probe(base: tuple[str, ...], extra: tuple[str, ...]) -> tuple[float, float, float, int]:
    """(RSS at start, after `base`, after `extra`, modules loaded) of a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(base=base, extra=extra)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2]), int(out[3])


def smaps(pid: int, top: int = 15) -> dict[str, Any]:
    """RSS of a running process by mapping (the heap and anonymous memory, then files)."""
    by: Counter[str] = Counter()
    name = "?"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:
            name = fields[5] if len(fields) > 5 else "[anonymous]"
            if "site-packages/" in name:
                name = "site-packages/" + name.split("site-packages/")[1].split("/")[0]
        elif fields and fields[0] == "Rss:":
            by[name] += int(fields[1])
    total = sum(by.values())
    return {
        "rss_mib": round(total / 1024, 1),
        "by_mapping_mib": {k: round(v / 1024, 1) for k, v in by.most_common(top)},
    }


def run(results_dir: Path, pid: int | None = None) -> dict[str, Any]:
    start, base, app, modules = probe(BASE, ("olm.app",))
    summary: dict[str, Any] = {
        "benchmark": "memory_floor",
        "interpreter_mib": round(start, 1),
        "kopf_and_kubernetes_client_mib": round(base - start, 1),
        "import_olm_app_mib": round(app, 1),
        "modules_after_olm_app": modules,
        "added_alone_mib": {},
    }
    for library in LIBRARIES:
        _, before, after, _ = probe(BASE, (library,))
        summary["added_alone_mib"][library] = round(after - before, 1)
    if pid is not None:
        summary["process"] = smaps(pid)
    (results_dir / "memory_floor.json").write_text(json.dumps(summary, indent=2))
    return summary


def main(argv: list[str] | None = None) -> int:
    cli = parser(
        "benchmarks.memory_floor",
        __doc__,
        takes="about 10 seconds (a dozen fresh interpreters)",
        writes="benchmarks/results/memory_floor.json",
    )
    cli.add_argument("--pid", type=int, help="a running `olm run` to break down by mapping")
    cli.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    args = cli.parse_args(argv)
    print(json.dumps(run(args.out, args.pid), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
