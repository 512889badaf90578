"""File-based catalogs for parity scenarios, with every bundle's objects inline.

The real OLM unpacks a bundle that has only an image with a Job, which kwok "runs" without
output (docs/parity.md), so both sides are given inline bundles: `olm.package`, `olm.channel`,
and per bundle an `olm.bundle` with `image: ""`, `olm.package`, one `olm.gvk` per owned CRD
version and one `olm.bundle.object` per manifest. `opm serve` serves the folder on both sides.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """YAML as the API server reads it: timestamps stay strings (`createdAt: 2025-09-11T...`)."""


_Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_manifests(directory: Path) -> list[dict[str, Any]]:
    """Every object of a bundle's manifests/ folder."""
    objects: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.y*ml")) + sorted(directory.glob("*.json")):
        objects += [doc for doc in yaml.load_all(path.read_text(), Loader=_Loader) if doc]
    return objects


@dataclass
class Bundle:
    objects: list[dict[str, Any]]  # the CSV and the rest of the bundle's manifests
    replaces: str = ""
    properties: list[dict[str, Any]] = field(default_factory=list)  # more, e.g. olm.constraint

    @property
    def csv(self) -> dict[str, Any]:
        return next(o for o in self.objects if o.get("kind") == "ClusterServiceVersion")

    @property
    def name(self) -> str:
        name: str = self.csv["metadata"]["name"]
        return name


@dataclass
class Package:
    name: str
    channel: str
    bundles: list[Bundle] = field(default_factory=list)
    deprecations: list[dict[str, Any]] = field(default_factory=list)  # olm.deprecations entries


def bundle_properties(package: str, bundle: Bundle) -> list[dict[str, Any]]:
    properties: list[dict[str, Any]] = [
        {
            "type": "olm.package",
            "value": {
                "packageName": package,
                "version": str(bundle.csv["spec"].get("version", "")),
            },
        }
    ]
    for crd in (o for o in bundle.objects if o.get("kind") == "CustomResourceDefinition"):
        for version in crd["spec"]["versions"]:
            properties.append(
                {
                    "type": "olm.gvk",
                    "value": {
                        "group": crd["spec"]["group"],
                        "kind": crd["spec"]["names"]["kind"],
                        "version": version["name"],
                    },
                }
            )
    for obj in bundle.objects:
        data = base64.b64encode(json.dumps(obj, sort_keys=True).encode()).decode()
        properties.append({"type": "olm.bundle.object", "value": {"data": data}})
    return properties + bundle.properties


def render(package: Package) -> list[dict[str, Any]]:
    """The FBC documents of one package with one channel."""
    entries: list[dict[str, Any]] = []
    for bundle in package.bundles:
        entry: dict[str, Any] = {"name": bundle.name}
        if bundle.replaces:
            entry["replaces"] = bundle.replaces
        entries.append(entry)
    docs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": package.name, "defaultChannel": package.channel},
        {
            "schema": "olm.channel",
            "package": package.name,
            "name": package.channel,
            "entries": entries,
        },
    ]
    docs += [
        {
            "schema": "olm.bundle",
            "name": b.name,
            "package": package.name,
            "image": "",
            "properties": bundle_properties(package.name, b),
        }
        for b in package.bundles
    ]
    if package.deprecations:
        docs.append(
            {"schema": "olm.deprecations", "package": package.name, "entries": package.deprecations}
        )
    return docs


def write_catalog(directory: Path, packages: list[Package]) -> Path:
    """Write the packages as `DIRECTORY/<package>/catalog.yaml`; returns DIRECTORY."""
    for package in packages:
        folder = directory / package.name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "catalog.yaml").write_text(yaml.safe_dump_all(render(package), sort_keys=True))
    return directory
