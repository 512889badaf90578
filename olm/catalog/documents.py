"""What a catalog says about a bundle beyond its graph: its CSV document and deprecations.

Both the registry's gRPC answers (`csvJson`, `deprecation`) and the PackageManifest API read
these, so they are decided once, here:
- `bundle_csv`: the CSV among the bundle's objects; else the CSV a registry served for it
  (`Bundle.csv_json`, kept when a catalog is read over gRPC); else one synthesized from the
  `olm.csv.metadata` property, as opm does for bundles known by image only. None when the
  catalog has nothing to say.
- `csv_metadata`: the other way round, the `olm.csv.metadata` property `opm render` writes for a
  bundle image's CSV (its metadata's annotations and labels, and the spec fields a catalog
  shows), so a catalog of bundles by image still describes them.
- `deprecation`: the message of the `olm.deprecations` entry for a package, a channel or a
  bundle, as `{"message": ...}`, or None.

Invariant: pure; never raises on malformed catalog data (it reads as "nothing said").
"""

from __future__ import annotations

import json
from typing import Any

from olm.catalog.model import Bundle, Package

PACKAGE_SCHEMA = "olm.package"
CHANNEL_SCHEMA = "olm.channel"
BUNDLE_SCHEMA = "olm.bundle"
CSV_METADATA = "olm.csv.metadata"
# The properties the registry API does not serve (operator-registry's
# convertModelPropertiesToAPIProperties): so neither OLM's resolver nor a CEL rule sees them.
HIDDEN_PROPERTIES = ("olm.bundle.object", CSV_METADATA)
# The CSV spec fields operator-registry's property.CSVMetadata keeps (by their JSON names).
CSV_METADATA_SPEC_FIELDS = (
    "apiservicedefinitions",
    "customresourcedefinitions",
    "description",
    "displayName",
    "installModes",
    "keywords",
    "links",
    "maintainers",
    "maturity",
    "minKubeVersion",
    "nativeAPIs",
    "provider",
)
# JSON names in the property that differ from the CSV's.
_RENAMED = {
    "apiservicedefinitions": "apiServiceDefinitions",
    "customresourcedefinitions": "crdDescriptions",
}


def deprecation(package: Package, schema: str, name: str = "") -> dict[str, str] | None:
    for entry in (package.deprecations or {}).get("entries") or []:
        if not isinstance(entry, dict):
            continue
        reference = entry.get("reference") or {}
        if reference.get("schema") == schema and (
            schema == PACKAGE_SCHEMA or reference.get("name") == name
        ):
            return {"message": str(entry.get("message", ""))}
    return None


def bundle_csv(package: Package, bundle: Bundle) -> dict[str, Any] | None:
    csv = bundle.csv
    if csv is not None:
        return csv
    if bundle.csv_json:
        try:
            served = json.loads(bundle.csv_json)
        except ValueError:
            return None
        return served if isinstance(served, dict) else None
    metadata = next(iter(bundle.props(CSV_METADATA)), None)
    if not isinstance(metadata, dict):
        return None
    back = {v: k for k, v in _RENAMED.items()}
    spec = {back.get(k, k): v for k, v in metadata.items() if k not in ("annotations", "labels")}
    spec.update(
        version=bundle.version,
        install={"strategy": "deployment"},
        relatedImages=bundle.related_images,
    )
    spec.setdefault("description", package.description)
    if package.icon:
        spec["icon"] = [package.icon]
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": bundle.name,
            "annotations": metadata.get("annotations") or {},
            "labels": metadata.get("labels") or {},
        },
        "spec": spec,
    }


def csv_metadata(csv: dict[str, Any]) -> dict[str, Any]:
    """The `olm.csv.metadata` property value for a CSV: what `bundle_csv` reads back."""
    found_meta, found_spec = csv.get("metadata"), csv.get("spec")
    meta: dict[str, Any] = found_meta if isinstance(found_meta, dict) else {}
    spec: dict[str, Any] = found_spec if isinstance(found_spec, dict) else {}
    value: dict[str, Any] = {
        _RENAMED.get(field, field): spec[field]
        for field in CSV_METADATA_SPEC_FIELDS
        if spec.get(field) not in (None, "", [], {})
    }
    for field in ("annotations", "labels"):
        if meta.get(field):
            value[field] = meta[field]
    return value
