"""Legacy package-manifest directories (catalog-formats.md §3): a `*.package.yaml` naming the
package, its channels (`currentCSV`) and default channel, beside one directory per version.

A channel's entries are found by walking `spec.replaces` back from its `currentCSV`, adding the
CSVs it skips that the package has. A default channel not declared is the only channel.

Invariants: a directory that cannot be read, or a replaces cycle, is a Problem on the catalog,
never an exception; the walk visits each CSV once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm.catalog.model import Bundle, Catalog, Channel, Package, Problem
from olm.catalog.registryv1 import bundle_properties, entry_for, related_images
from olm.catalog.yamlio import first_document


def is_package_manifest_dir(path: Path) -> bool:
    return any(p.name.endswith("package.yaml") for p in path.glob("*.yaml"))


def load_package_manifest(directory: Path, catalog: Catalog) -> None:
    """Legacy `*.package.yaml` + version directories (§3)."""
    manifest_files = sorted(p for p in directory.glob("*.yaml") if p.name.endswith("package.yaml"))
    manifest = first_document(manifest_files[0]) if manifest_files else None
    if not isinstance(manifest, dict) or not manifest.get("packageName"):
        catalog.problems.append(
            Problem(
                "package-manifest",
                "packageName empty",
                "name the package in the *.package.yaml",
                str(directory),
            )
        )
        return
    name = str(manifest["packageName"])
    csvs: dict[str, tuple[dict[str, Any], list[dict[str, Any]], Path]] = {}
    for child in sorted(
        p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")
    ):
        objects = [
            d
            for d in (
                first_document(f)
                for f in sorted(child.glob("*"))
                if f.is_file() and not f.name.startswith(".")
            )
            if isinstance(d, dict)
        ]
        csv = next((o for o in objects if o.get("kind") == "ClusterServiceVersion"), None)
        if csv is not None:
            csvs[str(csv["metadata"].get("name", ""))] = (csv, objects, child)
    channels_raw = manifest.get("channels") or []
    package = Package(name, source=str(manifest_files[0]))
    default = manifest.get("defaultChannel")
    package.default_channel = (
        str(default)
        if default
        else (str(channels_raw[0].get("name", "")) if len(channels_raw) == 1 else "")
    )
    for csv_name, (csv, objects, child) in csvs.items():
        package.bundles[csv_name] = Bundle(
            csv_name,
            name,
            properties=bundle_properties(name, csv, objects, []),
            related_images=related_images(csv),
            source=str(child),
            format="package-manifest",
        )
    for raw in channels_raw:
        channel = Channel(str(raw.get("name", "")), name)
        current = str(raw.get("currentCSV") or "")
        seen: set[str] = set()
        while current and current in csvs and current not in seen:
            seen.add(current)
            entry = entry_for(csvs[current][0])
            channel.entries.append(entry)
            for skipped in entry.skips:
                if skipped in csvs and skipped not in seen and channel.entry(skipped) is None:
                    channel.entries.append(entry_for(csvs[skipped][0]))
                    seen.add(skipped)
            current = entry.replaces
        if current and current in seen:
            catalog.problems.append(
                Problem(
                    "package-manifest-cycle",
                    f"Cycle detected, {current} is replaced twice in channel {channel.name}",
                    "break the replaces cycle",
                    package.source,
                )
            )
        package.channels[channel.name] = channel
    catalog.packages[name] = package
