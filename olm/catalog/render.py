"""Render any catalog to file-based-catalog blobs in opm's canonical order (write.go):
per package (by name) the olm.package blob, channels by name, bundles by name, other blobs,
deprecations; then package-less blobs. JSON is 4-space indented, YAML docs start with `---`.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from olm.catalog.model import Catalog


def blobs(catalog: Catalog) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for name in sorted(catalog.packages):
        package = catalog.packages[name]
        blob: dict[str, Any] = {"schema": "olm.package", "name": name}
        if package.default_channel:
            blob["defaultChannel"] = package.default_channel
        if package.icon:
            blob["icon"] = package.icon
        if package.description:
            blob["description"] = package.description
        out.append(blob)
        for channel_name in sorted(package.channels):
            entries = []
            for entry in package.channels[channel_name].entries:
                item: dict[str, Any] = {"name": entry.name}
                if entry.replaces:
                    item["replaces"] = entry.replaces
                if entry.skips:
                    item["skips"] = entry.skips
                if entry.skip_range:
                    item["skipRange"] = entry.skip_range
                entries.append(item)
            out.append(
                {"schema": "olm.channel", "package": name, "name": channel_name, "entries": entries}
            )
        for bundle_name in sorted(package.bundles):
            bundle = package.bundles[bundle_name]
            item = {
                "schema": "olm.bundle",
                "name": bundle.name,
                "package": name,
                "image": bundle.image,
                "properties": bundle.properties,
            }
            if bundle.related_images:
                # opm always writes the name, empty or not.
                item["relatedImages"] = [
                    {"name": r.get("name", ""), "image": r.get("image", "")}
                    for r in bundle.related_images
                ]
            out.append(item)
        out.extend(o for o in catalog.others if o.get("package") == name)
        if package.deprecations:
            out.append(package.deprecations)
    out.extend(
        sorted(
            (o for o in catalog.others if not o.get("package")), key=lambda o: str(o.get("schema"))
        )
    )
    return out


def to_json(catalog: Catalog) -> str:
    return "".join(json.dumps(blob, indent=4, ensure_ascii=False) + "\n" for blob in blobs(catalog))


def to_yaml(catalog: Catalog) -> str:
    return "".join(
        "---\n" + yaml.safe_dump(blob, sort_keys=True, allow_unicode=True)
        for blob in blobs(catalog)
    )
