"""A registry+v1 bundle (a CSV and the objects shipped beside it) as the catalog model sees it,
the way `opm render` derives it (catalog-formats.md §1.7): the bundle's properties, with its
objects inline (`olm.bundle.object`), its related images, and its channel entry.

Shared by every non-FBC format (bundle directories, package manifests, ConfigMap catalogs).
Upgrade edges come from the CSV (`spec.replaces`, `spec.skips`, the `olm.skipRange`
annotation), as `opm` does.

Invariants: pure; inputs are never modified; properties are de-duplicated and sorted (by type,
then by their JSON), with the inline objects last, in their given order.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from olm.api.views import CsvView
from olm.catalog.model import Entry

SKIP_RANGE = "olm.skipRange"


def _object_property(obj: dict[str, Any]) -> dict[str, Any]:
    data = base64.b64encode(json.dumps(obj, sort_keys=True).encode()).decode()
    return {"type": "olm.bundle.object", "value": {"data": data}}


def bundle_properties(
    package: str, csv: dict[str, Any], objects: list[dict[str, Any]], extra: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The properties `opm render` derives for a registry+v1 bundle (§1.7), objects inline."""
    view = CsvView.of(csv)
    properties: list[dict[str, Any]] = [
        {
            "type": "olm.package",
            "value": {"packageName": package, "version": view.version},
        }
    ]
    for obj in objects:
        if obj.get("kind") == "CustomResourceDefinition":
            crd = obj.get("spec") or {}
            names = crd.get("names") or {}
            versions = [v.get("name") for v in crd.get("versions") or []] or [crd.get("version")]
            for version in versions:
                if version:
                    properties.append(
                        {
                            "type": "olm.gvk",
                            "value": {
                                "group": crd.get("group", ""),
                                "kind": names.get("kind", ""),
                                "version": version,
                            },
                        }
                    )
    for property_type, gvks in (
        ("olm.gvk", [s.gvk for s in view.owned_api_services]),
        ("olm.gvk.required", sorted(view.required_gvks)),
    ):
        properties.extend(
            {
                "type": property_type,
                "value": {"group": gvk.group, "kind": gvk.kind, "version": gvk.version},
            }
            for gvk in gvks
        )
    properties.extend(extra)
    unique = {json.dumps(p, sort_keys=True): p for p in properties}
    ordered = [unique[k] for k in sorted(unique, key=lambda k: (unique[k]["type"], k))]
    return ordered + [_object_property(o) for o in objects]


def related_images(csv: dict[str, Any]) -> list[dict[str, str]]:
    """`spec.relatedImages` and every container image of the CSV's Deployments, by image."""
    spec = csv.get("spec") or {}
    images = {
        r.get("image", ""): r.get("name", "")
        for r in spec.get("relatedImages") or []
        if isinstance(r, dict)
    }
    for deployment in CsvView.of(csv).deployments:
        for container in deployment.containers:
            images.setdefault(container.get("image", ""), "")
    return [{"name": images[i], "image": i} for i in sorted(images) if i]


def entry_for(csv: dict[str, Any]) -> Entry:
    """The CSV's channel entry: its replaces, skips and skipRange."""
    view = CsvView.of(csv)
    return Entry(
        name=view.name,
        replaces=view.replaces,
        skips=list(view.skips),
        skip_range=str(view.annotations.get(SKIP_RANGE) or ""),
    )
