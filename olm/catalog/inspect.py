"""`olm catalog inspect`: what a catalog holds, as a table or as one JSON object.

JSON shape, one key per package: `defaultChannel`; `channels: {name: {head, entries}}`
(entries head first along the replaces chain); `bundles: {name: {version, replaces, skips,
skipRange, ownedCRDs, requiredCRDs, installModes: {mode: bool}, dependencies}}`.
"""

from __future__ import annotations

from typing import Any

from olm.catalog.graph import GraphError, entries_in_order, head
from olm.catalog.model import Bundle, Catalog, Channel, Package

DEPENDENCY_TYPES = (
    "olm.package.required",
    "olm.gvk.required",
    "olm.constraint",
    "olm.label.required",
)


def _csv_view(bundle: Bundle) -> dict[str, Any]:
    """CSV fields from the inline CSV, or from olm.csv.metadata when only that is there."""
    csv = bundle.csv
    if csv is not None:
        return {
            "spec": csv.get("spec") or {},
            "annotations": (csv.get("metadata") or {}).get("annotations") or {},
        }
    metadata = next(iter(bundle.props("olm.csv.metadata")), None)
    if isinstance(metadata, dict):
        return {
            "spec": {
                "customresourcedefinitions": metadata.get("crdDescriptions") or {},
                "installModes": metadata.get("installModes") or [],
            },
            "annotations": metadata.get("annotations") or {},
        }
    return {"spec": {}, "annotations": {}}


def _entry(package: Package, bundle: Bundle) -> Any:
    for name in sorted(package.channels):
        found = package.channels[name].entry(bundle.name)
        if found is not None:
            return found
    return None


def bundle_facts(package: Package, bundle: Bundle) -> dict[str, Any]:
    view = _csv_view(bundle)
    spec, annotations = view["spec"], view["annotations"]
    entry = _entry(package, bundle)
    has_csv = bundle.csv is not None
    crds = spec.get("customresourcedefinitions") or {}
    if bundle.dependencies is not None:
        dependencies = bundle.dependencies
    else:
        dependencies = [p for p in bundle.properties if p.get("type") in DEPENDENCY_TYPES]
    return {
        "version": bundle.version or str(spec.get("version", "")),
        "replaces": (spec.get("replaces") if has_csv else (entry.replaces if entry else ""))
        or None,
        "skips": list(spec.get("skips") or []) if has_csv else list(entry.skips if entry else []),
        "skipRange": (
            annotations.get("olm.skipRange") if has_csv else (entry.skip_range if entry else "")
        )
        or None,
        "ownedCRDs": sorted(
            {c.get("name", "") for c in crds.get("owned") or [] if isinstance(c, dict)}
        ),
        "requiredCRDs": sorted(
            {c.get("name", "") for c in crds.get("required") or [] if isinstance(c, dict)}
        ),
        "installModes": {
            m.get("type"): bool(m.get("supported"))
            for m in spec.get("installModes") or []
            if isinstance(m, dict)
        },
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
