"""Benchmark: catalog loading, validation and indexing at operatorhub.io size, beside the
real `opm validate` / `opm render` on the same input; and inspecting the community corpus.

The generated catalog has 300 packages and 2,100 bundles as JSON file-based catalogs, one
directory per package, each bundle carrying its CSV inline (like operatorhub.io's catalog).
"""

from __future__ import annotations

import base64
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.cli import run_once
from benchmarks.plot import bar_chart
from olm.devcluster.build import ensure_binaries

PACKAGES, BUNDLES_PER_PACKAGE = 300, 7
CORPUS = (
    Path(__file__).resolve().parents[2] / "shared" / "corpus" / "community-operators" / "operators"
)


def _csv(package: str, version: str, replaces: str | None) -> dict[str, Any]:
    description = (f"{package} operator, version {version}. " * 300)[:9500]
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": f"{package}.v{version}",
            "annotations": {
                "alm-examples": json.dumps([{"kind": "Thing", "spec": {"size": 3}}] * 40)
            },
        },
        "spec": {
            "displayName": package,
            "description": description,
            "version": version,
            **({"replaces": replaces} if replaces else {}),
            "installModes": [
                {"type": t, "supported": True}
                for t in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
            ],
            "customresourcedefinitions": {
                "owned": [
                    {"name": f"things.{package}.example.com", "version": "v1", "kind": "Thing"}
                ]
            },
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": package,
                            "spec": {
                                "template": {
                                    "spec": {
                                        "containers": [
                                            {
                                                "name": "m",
                                                "image": f"quay.io/{package}/operator:v{version}",
                                            }
                                        ]
                                    }
                                }
                            },
                        }
                    ]
                },
            },
        },
    }


def generate(root: Path) -> int:
    total = 0
    for index in range(PACKAGES):
        package = f"operator-{index:03d}"
        blobs: list[dict[str, Any]] = [
            {"schema": "olm.package", "name": package, "defaultChannel": "stable"}
        ]
        entries, previous = [], None
        for minor in range(BUNDLES_PER_PACKAGE):
            version = f"1.{minor}.0"
            name = f"{package}.v{version}"
            csv = _csv(package, version, previous)
            data = base64.b64encode(json.dumps(csv).encode()).decode()
            blobs.append(
                {
                    "schema": "olm.bundle",
                    "package": package,
                    "name": name,
                    "image": f"quay.io/{package}/bundle:v{version}",
                    "properties": [
                        {
                            "type": "olm.package",
                            "value": {"packageName": package, "version": version},
                        },
                        {
                            "type": "olm.gvk",
                            "value": {
                                "group": f"{package}.example.com",
                                "version": "v1",
                                "kind": "Thing",
                            },
                        },
                        {"type": "olm.bundle.object", "value": {"data": data}},
                    ],
                }
            )
            entries.append(
                {
                    "name": name,
                    **({"replaces": previous} if previous else {}),
                    **({"skipRange": f"<{version}"} if minor else {}),
                }
            )
            previous = name
        blobs.append(
            {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries}
        )
        (root / package).mkdir()
        text = "".join(json.dumps(b) + "\n" for b in blobs)
        (root / package / "catalog.json").write_text(text)
        total += len(text)
    return total


def _child(command: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(after, before) / 1024, result


def run(results_dir: Path) -> dict[str, Any]:
    opm = str(ensure_binaries().path("opm"))
    summary: dict[str, Any] = {"benchmark": "catalogs"}
    with tempfile.TemporaryDirectory(prefix="olm-bench-catalog-") as directory:
        root = Path(directory)
        size = generate(root)
        summary["generated"] = {
            "packages": PACKAGES,
            "bundles": PACKAGES * BUNDLES_PER_PACKAGE,
            "megabytes": round(size / 1e6, 1),
        }
        ours = json.loads(
            subprocess.run(
                [sys.executable, "-m", "benchmarks.catalog_probe", str(root), "index"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        summary["olm_py_load_validate_index"] = ours
        seconds, _, result = _child([opm, "validate", str(root)])
        summary["opm_validate_s"] = round(seconds, 3)
        summary["opm_validate_ok"] = result.returncode == 0
        seconds, _, result = _child([opm, "render", str(root), "-o", "json"])
        summary["opm_render_s"] = round(seconds, 3)
        seconds, _, _ = _child(
            [sys.executable, "-m", "olm.cli", "catalog", "render", str(root), "-o", "json"]
        )
        summary["olm_py_render_s"] = round(seconds, 3)
    if CORPUS.is_dir():
        summary["corpus_inspect"] = json.loads(
            subprocess.run(
                [sys.executable, "-m", "benchmarks.catalog_probe", str(CORPUS), "inspect"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
    summary["ratios"] = {
        "load_validate_index_vs_opm_validate": round(
            ours["total_s"] / summary["opm_validate_s"], 2
        ),
        "render_vs_opm_render": round(summary["olm_py_render_s"] / summary["opm_render_s"], 2),
    }
    (results_dir / "catalogs.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "catalogs.svg",
        f"Catalog of {PACKAGES} packages / {PACKAGES * BUNDLES_PER_PACKAGE} bundles ({summary['generated']['megabytes']} MB)",
        "s",
        [
            ("olm-py load+validate+index", ours["total_s"]),
            ("opm validate", summary["opm_validate_s"]),
            ("olm-py render", summary["olm_py_render_s"]),
            ("opm render", summary["opm_render_s"]),
        ],
        goal=2.0,
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.catalogs`: one run, written to benchmarks/results/."""
    return run_once(
        "benchmarks.catalogs",
        __doc__,
        run,
        argv,
        takes="one to two minutes (generates a 35 MB catalog; runs `opm` beside it when built)",
        writes="benchmarks/results/catalogs.json and catalogs.svg",
    )


if __name__ == "__main__":
    sys.exit(main())
