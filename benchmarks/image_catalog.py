"""Benchmark: an operatorhub.io-sized catalog image pulled and read in-process, as `olm run`'s
CatalogSource controller does for `spec.image`, beside `opm serve`'s memory on the same
catalog (what OLM v0's registry pod runs).

The catalog is the generated one of `benchmarks/catalogs.py` (300 packages, 2,100 bundles, every
CSV inline, ~35 MB of JSON) built into a FROM-scratch catalog image (one gzip layer, the index
label) and pushed to a docker-registry started on 127.0.0.1 for the run. The read runs in a
fresh process (`python -m benchmarks.image_catalog probe IMAGE CACHE`) through
`olm.controllers.catalogimage.ImageCatalogs.read`, the controller's reader: first read (HEAD,
manifest, config, layer, unpack, load), then a steady poll (one HEAD). Its memory is the
process's RSS after the read (what `olm run` keeps for the catalog plus the interpreter) and
its peak (VmHWM: ru_maxrss would carry the parent's peak across exec). The generated CSVs
are repetitive, so the layer compresses far better (0.5 MB) than a real catalog's would; the
bundles are inline, so no bundle image is unpacked. `opm serve` is started on the same directory and measured once it answers
ListPackages.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.catalogs import BUNDLES_PER_PACKAGE, PACKAGES, generate
from benchmarks.cli import RESULTS, parser
from benchmarks.plot import bar_chart
from olm.devcluster import registry
from olm.devcluster.build import ensure_binaries
from olm.devcluster.ports import free_ports

INDEX_LABEL = "operators.operatorframework.io.index.configs.v1"


def _rss_mib(pid: int | str = "self") -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process, in MiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", 0.0), fields.get("VmHWM", 0.0)


def probe(image: str, cache_dir: str) -> int:
    """One measured read in this (fresh) process; prints JSON."""
    from olm.controllers.catalogimage import ImageCatalogs
    from olm.image.cache import BlobCache

    baseline, _ = _rss_mib()
    reader = ImageCatalogs(BlobCache(Path(cache_dir)), timeout=60, retries=0)
    started = time.perf_counter()
    fetched = reader.read(("bench", "catalog"), image, [])
    first = time.perf_counter() - started
    if fetched.catalog is None:
        print(json.dumps({"error": str(fetched.failure)}))
        return 1
    started = time.perf_counter()
    again = reader.read(("bench", "catalog"), image, [])
    steady = time.perf_counter() - started
    rss, peak = _rss_mib()
    bundles = sum(len(p.bundles) for p in fetched.catalog.packages.values())
    print(
        json.dumps(
            {
                "first_read_s": round(first, 3),
                "steady_poll_s": round(steady, 4),
                "steady_poll_same_catalog": again.catalog is fetched.catalog,
                "bundles": bundles,
                "rss_before_mib": round(baseline, 1),
                "rss_after_mib": round(rss, 1),
                "peak_rss_mib": round(peak, 1),
            }
        )
    )
    return 0


def _start_registry(work: Path, port: int) -> subprocess.Popen[bytes]:
    binary = registry.ensure_registry_binary()
    config = work / "config.json"
    config.write_text(registry.config(work / "storage", port))
    process = subprocess.Popen(
        registry.argv(binary, config), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 30
    while not registry.healthy(port)[0]:
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("docker-registry did not start")
        time.sleep(0.1)
    return process


def _opm_serve(opm: str, catalog: Path, work: Path) -> dict[str, Any]:
    from olm.registry.client import RegistryClient

    port, pprof = free_ports(2)
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            opm,
            "serve",
            str(catalog),
            "-p",
            str(port),
            "--pprof-addr",
            f"127.0.0.1:{pprof}",
            "-t",
            str(work / "termination-log"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = RegistryClient(f"127.0.0.1:{port}", timeout=5)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                packages = client.list_packages()
                break
            except Exception:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("opm serve did not start") from None
                time.sleep(0.2)
        ready = time.perf_counter() - started
        rss, peak = _rss_mib(process.pid)
        return {
            "ready_s": round(ready, 2),
            "packages": len(packages),
            "rss_mib": round(rss, 1),
            "peak_rss_mib": round(peak, 1),
        }
    finally:
        client.close()
        process.terminate()
        process.wait(30)


def run(results_dir: Path) -> dict[str, Any]:
    from olm.image.build import files_under, scratch_image
    from olm.image.cache import BlobCache
    from olm.image.pull import Options, push
    from olm.image.reference import parse

    opm = str(ensure_binaries().path("opm"))
    summary: dict[str, Any] = {"benchmark": "image_catalog"}
    with tempfile.TemporaryDirectory(prefix="olm-bench-image-") as directory:
        work = Path(directory)
        root = work / "configs"
        root.mkdir()
        size = generate(root)
        summary["generated"] = {
            "packages": PACKAGES,
            "bundles": PACKAGES * BUNDLES_PER_PACKAGE,
            "megabytes": round(size / 1e6, 1),
        }
        started = time.perf_counter()
        image = scratch_image(files_under(root, "configs"), {INDEX_LABEL: "/configs"})
        summary["build_image_s"] = round(time.perf_counter() - started, 2)
        summary["layer_megabytes"] = round(sum(len(b.data) for b in image.layers) / 1e6, 1)
        port = free_ports(1)[0]
        (work / "registry").mkdir()
        process = _start_registry(work / "registry", port)
        try:
            reference = f"127.0.0.1:{port}/bench/operatorhub:v1"
            options = Options(cache=BlobCache(work / "push"), use_local_configs=False)
            started = time.perf_counter()
            push(parse(reference), image, options)
            summary["push_s"] = round(time.perf_counter() - started, 2)
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.image_catalog",
                    "probe",
                    reference,
                    str(work / "cache"),
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
            if result.returncode != 0:
                raise RuntimeError(f"probe failed: {result.stdout}{result.stderr}")
            summary["olm_py"] = json.loads(result.stdout)
        finally:
            process.terminate()
            process.wait(30)
        summary["opm_serve"] = _opm_serve(opm, root, work)
    ours, theirs = summary["olm_py"], summary["opm_serve"]
    summary["ratios"] = {
        "rss_vs_opm_serve": round(ours["rss_after_mib"] / theirs["rss_mib"], 2),
    }
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "image_catalog.json").write_text(json.dumps(summary, indent=2))
    bar_chart(
        results_dir / "image-catalog-memory.svg",
        f"Catalog image of {PACKAGES * BUNDLES_PER_PACKAGE} bundles: memory (RSS)",
        "MiB",
        [
            ("olm-py after pull+load", ours["rss_after_mib"]),
            ("olm-py peak", ours["peak_rss_mib"]),
            ("opm serve", theirs["rss_mib"]),
            ("opm serve peak", theirs["peak_rss_mib"]),
        ],
    )
    return summary


def main(argv: list[str] | None = None) -> int:
    """`python -m benchmarks.image_catalog [probe IMAGE CACHE]`: the benchmark, or the one
    measured read it runs in a fresh process."""
    command = parser(
        "benchmarks.image_catalog",
        __doc__,
        takes="a few minutes (generates the catalog, builds and pushes the image to a "
        "registry on 127.0.0.1, reads it, starts `opm serve`; needs the built binaries)",
        writes="benchmarks/results/image_catalog.json and image-catalog-memory.svg",
    )
    steps = command.add_subparsers(dest="step", metavar="probe")
    probe_step = steps.add_parser(
        "probe",
        help="one measured read of IMAGE in this process (prints JSON; run by the benchmark)",
    )
    probe_step.add_argument("image", help="the catalog image reference")
    probe_step.add_argument("cache", help="the blob cache directory")
    args = command.parse_args(argv)
    if args.step == "probe":
        return probe(args.image, args.cache)
    print(json.dumps(run(RESULTS), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
