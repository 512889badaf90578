"""`olm catalog inspect`: what a catalog holds, as a table or as one JSON object.

JSON shape, one key per package: `defaultChannel`; `channels: {name: {head, entries}}`
(entries head first along the replaces chain); `bundles: {name: {version, replaces, skips,
skipRange, ownedCRDs, requiredCRDs, installModes: {mode: bool}, dependencies}}`.
"""

from __future__ import annotations

from typing import Any

from olm.api.labels import Annotation
from olm.api.views import CsvView
from olm.catalog.graph import GraphError, entries_in_order, head
from olm.catalog.model import Bundle, Catalog, Channel, Package

DEPENDENCY_TYPES = (
    "olm.package.required",
    "olm.gvk.required",
    "olm.constraint",
    "olm.label.required",
)


def _csv_view(bundle: Bundle) -> CsvView:
    """CSV fields from the inline CSV, or from olm.csv.metadata when only that is there."""
    if bundle.csv is not None:
        return CsvView.of(bundle.csv)
    metadata = next(iter(bundle.props("olm.csv.metadata")), None)
    if isinstance(metadata, dict):
        return CsvView.of(
            {
                "metadata": {"annotations": metadata.get("annotations")},
                "spec": {
                    "customresourcedefinitions": metadata.get("crdDescriptions"),
                    "installModes": metadata.get("installModes"),
                },
            }
        )
    return CsvView.of({})


def _entry(package: Package, bundle: Bundle) -> Any:
    for name in sorted(package.channels):
        found = package.channels[name].entry(bundle.name)
        if found is not None:
            return found
    return None


def bundle_facts(package: Package, bundle: Bundle) -> dict[str, Any]:
    view = _csv_view(bundle)
    entry = _entry(package, bundle)
    has_csv = bundle.csv is not None
    if bundle.dependencies is not None:
        dependencies = bundle.dependencies
    else:
        dependencies = [p for p in bundle.properties if p.get("type") in DEPENDENCY_TYPES]
    return {
        "version": bundle.version or view.version,
        "replaces": (view.replaces if has_csv else (entry.replaces if entry else "")) or None,
        "skips": list(view.skips) if has_csv else list(entry.skips if entry else []),
        "skipRange": (
            view.annotations.get(Annotation.SKIP_RANGE)
            if has_csv
            else (entry.skip_range if entry else "")
        )
        or None,
        "ownedCRDs": sorted(view.owned_crd_names),
        "requiredCRDs": sorted(view.required_crd_names),
        "installModes": {m.type: m.supported for m in view.install_modes},
        "dependencies": dependencies,
    }


def _channel_facts(channel: Channel) -> dict[str, Any]:
    try:
        channel_head: str | None = head(channel)
    except GraphError:
        channel_head = None
    return {"head": channel_head, "entries": entries_in_order(channel)}


def inspect(catalog: Catalog) -> dict[str, Any]:
    return {
        name: {
            "defaultChannel": package.default_channel,
            "channels": {c: _channel_facts(package.channels[c]) for c in sorted(package.channels)},
            "bundles": {
                b: bundle_facts(package, package.bundles[b]) for b in sorted(package.bundles)
            },
        }
        for name, package in sorted(catalog.packages.items())
    }


def table(catalog: Catalog) -> str:
    rows = [("PACKAGE", "DEFAULT", "CHANNEL", "HEAD", "ENTRIES", "BUNDLES")]
    for name, facts in inspect(catalog).items():
        for channel, data in facts["channels"].items():
            default = "*" if channel == facts["defaultChannel"] else ""
            rows.append(
                (
                    name,
                    default,
                    channel,
                    data["head"] or "(no single head)",
                    str(len(data["entries"])),
                    str(len(facts["bundles"])),
                )
            )
        if not facts["channels"]:
            rows.append((name, "", "(none)", "", "0", str(len(facts["bundles"]))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )
