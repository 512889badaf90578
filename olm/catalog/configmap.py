"""ConfigMap catalogs (catalog-formats.md §6): a `kind: ConfigMap` whose `data` holds YAML lists
in `packages`, `clusterServiceVersions` and `customResourceDefinitions`, read from a file or
as the API returns it (a CatalogSource of `sourceType: configmap`).

A channel's entries are found by walking `spec.replaces` back from its `currentCSV`; a bundle
carries its CSV and the CRDs it owns inline. A default channel not declared is the only channel.

Invariants: data that cannot be parsed is a Problem on the catalog, never an exception; the
walk visits each CSV once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from olm.api.views import CsvView
from olm.catalog.model import Bundle, Catalog, Channel, Package, Problem
from olm.catalog.registryv1 import bundle_properties, entry_for
from olm.catalog.yamlio import first_document


def is_configmap(path: Path) -> bool:
    """The file at `path` holds a ConfigMap (its first document)."""
    document = first_document(path) if path.is_file() else None
    return isinstance(document, dict) and document.get("kind") == "ConfigMap"


def load_configmap(path: Path, catalog: Catalog) -> None:
    """A ConfigMap catalog file: YAML lists in data.packages / clusterServiceVersions / customResourceDefinitions."""
    document = first_document(path)
    configmap_catalog(document if isinstance(document, dict) else {}, catalog, str(path))


def configmap_catalog(document: dict[str, Any], catalog: Catalog, where: str) -> None:
    """Read a ConfigMap object (as the API returns it) into `catalog`."""
    path = where
    data = document.get("data") or {}
    try:
        packages = yaml.safe_load(data.get("packages") or "[]") or []
        csvs = yaml.safe_load(data.get("clusterServiceVersions") or "[]") or []
        crds = yaml.safe_load(data.get("customResourceDefinitions") or "[]") or []
    except yaml.YAMLError as exc:
        catalog.problems.append(
            Problem(
                "configmap-parse",
                f"cannot parse ConfigMap data: {exc}",
                "fix the YAML in data",
                path,
            )
        )
        return
    by_name = {str(c["metadata"]["name"]): c for c in csvs if isinstance(c, dict)}
    crd_by_name = {str(c["metadata"]["name"]): c for c in crds if isinstance(c, dict)}
    for raw in packages:
        name = str(raw.get("packageName", ""))
        package = Package(name, default_channel=str(raw.get("defaultChannel") or ""), source=path)
        for channel_raw in raw.get("channels") or []:
            channel = Channel(str(channel_raw.get("name", "")), name)
            current, seen = str(channel_raw.get("currentCSV") or ""), set()
            while current in by_name and current not in seen:
                seen.add(current)
                csv = by_name[current]
                channel.entries.append(entry_for(csv))
                view = CsvView.of(csv)
                owned = [c.name for c in view.owned_crds]
                objects = [csv] + [crd_by_name[n] for n in owned if n in crd_by_name]
                package.bundles[current] = Bundle(
                    current,
                    name,
                    properties=bundle_properties(name, csv, objects, []),
                    source=path,
                    format="configmap",
                )
                current = view.replaces
            package.channels[channel.name] = channel
        if not package.default_channel and len(package.channels) == 1:
            package.default_channel = next(iter(package.channels))
        catalog.packages[name] = package
