"""Every catalog format OLM uses, read into one model (catalog-formats.md §1-3, §6).

- file-based catalogs (a file or a directory tree): `olm.catalog.fbc`;
- bundle directories (`manifests/` + `metadata/annotations.yaml`), alone or one per version
  under a package directory, or packages under a directory of packages;
- legacy package-manifest directories (`*.package.yaml` + one directory per version);
- ConfigMap catalogs (`kind: ConfigMap` with `packages`, `clusterServiceVersions`,
  `customResourceDefinitions`).

Bundles from every non-FBC format carry their manifests inline (`olm.bundle.object`) and an
empty image, so they can be served without unpacking images. Upgrade edges come from the CSVs
(`spec.replaces`, `spec.skips`, the `olm.skipRange` annotation), as `opm` does.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import yaml

from olm.api.views import CsvView
from olm.catalog.fbc import load_fbc
from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package, Problem
from olm.catalog.semver import SemverError, parse_tolerant
from olm.catalog.yamlio import DocumentError, iter_documents

ANNOTATIONS_PREFIX = "operators.operatorframework.io.bundle."
SKIP_RANGE = "olm.skipRange"


def _first_document(path: Path) -> Any:
    try:
        for _, document in iter_documents(path.read_text()):
            return document
    except (OSError, UnicodeDecodeError, DocumentError):
        return None
    return None


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


def _dependencies(metadata: Path, problems: list[Problem], where: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(metadata.glob("*")):
        document = _first_document(path) if path.is_file() else None
        if not isinstance(document, dict):
            continue
        for dependency in document.get("dependencies") or []:
            kind, value = dependency.get("type"), dependency.get("value") or {}
            if kind == "olm.package":
                found.append(
                    {
                        "type": "olm.package.required",
                        "value": {
                            "packageName": value.get("packageName", ""),
                            "versionRange": str(value.get("version", "")),
                        },
                    }
                )
            elif kind == "olm.gvk":
                found.append(
                    {
                        "type": "olm.gvk.required",
                        "value": {k: value.get(k, "") for k in ("group", "kind", "version")},
                    }
                )
            elif kind:
                found.append({"type": kind, "value": value})
        for prop in document.get("properties") or []:
            if isinstance(prop, dict) and prop.get("type"):
                found.append(prop)
    if (metadata / "dependencies.yaml").is_file() and _first_document(
        metadata / "dependencies.yaml"
    ) is None:
        problems.append(
            Problem(
                "dependencies-parse",
                "metadata/dependencies.yaml cannot be parsed",
                "fix its YAML",
                where,
            )
        )
    return found


def _raw_dependencies(metadata: Path) -> list[dict[str, Any]]:
    document = (
        _first_document(metadata / "dependencies.yaml")
        if (metadata / "dependencies.yaml").is_file()
        else None
    )
    found = document.get("dependencies") if isinstance(document, dict) else None
    return [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []


def is_bundle_dir(path: Path) -> bool:
    return (path / "manifests").is_dir() and (path / "metadata").is_dir()


def load_bundle_dir(path: Path, problems: list[Problem]) -> tuple[Bundle, list[str], str] | None:
    """(bundle, its channels, its declared default channel) from a registry+v1 directory."""
    where = str(path)
    annotations: dict[str, Any] = {}
    for candidate in sorted((path / "metadata").glob("*")):
        document = _first_document(candidate) if candidate.is_file() else None
        if isinstance(document, dict) and isinstance(document.get("annotations"), dict):
            annotations = document["annotations"]
            break
    if not annotations:
        problems.append(
            Problem(
                "bundle-annotations",
                "Could not find annotations file",
                "add metadata/annotations.yaml",
                where,
            )
        )
        return None
    objects = [
        d
        for d in (
            _first_document(p)
            for p in sorted((path / "manifests").glob("*"))
            if p.is_file() and not p.name.startswith(".")
        )
        if isinstance(d, dict)
    ]
    csv = next((o for o in objects if o.get("kind") == "ClusterServiceVersion"), None)
    package = str(annotations.get(ANNOTATIONS_PREFIX + "package.v1", ""))
    if csv is None:
        problems.append(
            Problem(
                "bundle-csv",
                "no ClusterServiceVersion in manifests/",
                "add the operator's CSV",
                where,
            )
        )
        return None
    if not package:
        problems.append(
            Problem(
                "bundle-annotations",
                f'Missing annotation "{ANNOTATIONS_PREFIX}package.v1"',
                "name the package",
                where,
            )
        )
        return None
    channels = [
        c.strip()
        for c in str(annotations.get(ANNOTATIONS_PREFIX + "channels.v1", "")).split(",")
        if c.strip()
    ]
    if not channels:
        problems.append(
            Problem(
                "bundle-annotations",
                f'Missing annotation "{ANNOTATIONS_PREFIX}channels.v1"',
                "list the bundle's channels",
                where,
            )
        )
    extra = _dependencies(path / "metadata", problems, where)
    raw_dependencies = _raw_dependencies(path / "metadata")
    bundle = Bundle(
        name=str(csv["metadata"].get("name", "")),
        package=package,
        properties=bundle_properties(package, csv, objects, extra),
        related_images=_related_images(csv),
        source=where,
        dependencies=raw_dependencies,
        format="bundle",
    )
    return (
        bundle,
        channels,
        str(annotations.get(ANNOTATIONS_PREFIX + "channel.default.v1", "") or ""),
    )


def _related_images(csv: dict[str, Any]) -> list[dict[str, str]]:
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


def _entry_for(csv: dict[str, Any]) -> Entry:
    view = CsvView.of(csv)
    return Entry(
        name=view.name,
        replaces=view.replaces,
        skips=list(view.skips),
        skip_range=str(view.annotations.get(SKIP_RANGE) or ""),
    )


def _version_key(bundle: Bundle) -> Any:
    try:
        return (1, parse_tolerant(bundle.version))
    except SemverError:
        return (0, bundle.version)


def load_bundle_package(directory: Path, catalog: Catalog) -> None:
    """A package of bundle directories, one per version (the community-operators layout)."""
    found: list[tuple[Bundle, list[str], str, dict[str, Any]]] = []
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and is_bundle_dir(p)):
        loaded = load_bundle_dir(child, catalog.problems)
        if loaded is None:
            continue
        bundle, channels, default = loaded
        csv = bundle.csv or {}
        found.append((bundle, channels, default, csv))
    for bundle, channels, _default, csv in found:
        package = catalog.packages.setdefault(
            bundle.package, Package(bundle.package, source=str(directory))
        )
        if bundle.name in package.bundles:
            catalog.problems.append(
                Problem(
                    "bundle-duplicate",
                    f'package "{package.name}" has duplicate bundle "{bundle.name}" ({bundle.source})',
                    "keep one directory per CSV name",
                    str(directory),
                )
            )
            continue
        package.bundles[bundle.name] = bundle
        for name in channels:
            channel = package.channels.setdefault(name, Channel(name, package.name))
            channel.entries.append(_entry_for(csv))
    for package in catalog.packages.values():
        if package.default_channel:
            continue
        declared = [(b, d) for b, _, d, _ in found if b.package == package.name and d]
        if declared:
            package.default_channel = max(declared, key=lambda item: _version_key(item[0]))[1]
        elif len(package.channels) == 1:
            package.default_channel = next(iter(package.channels))


def is_package_manifest_dir(path: Path) -> bool:
    return any(p.name.endswith("package.yaml") for p in path.glob("*.yaml"))


def load_package_manifest(directory: Path, catalog: Catalog) -> None:
    """Legacy `*.package.yaml` + version directories (§3)."""
    manifest_files = sorted(p for p in directory.glob("*.yaml") if p.name.endswith("package.yaml"))
    manifest = _first_document(manifest_files[0]) if manifest_files else None
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
                _first_document(f)
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
            related_images=_related_images(csv),
            source=str(child),
            format="package-manifest",
        )
    for raw in channels_raw:
        channel = Channel(str(raw.get("name", "")), name)
        current = str(raw.get("currentCSV") or "")
        seen: set[str] = set()
        while current and current in csvs and current not in seen:
            seen.add(current)
            entry = _entry_for(csvs[current][0])
            channel.entries.append(entry)
            for skipped in entry.skips:
                if skipped in csvs and skipped not in seen and channel.entry(skipped) is None:
                    channel.entries.append(_entry_for(csvs[skipped][0]))
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


def load_configmap(path: Path, catalog: Catalog) -> None:
    """A ConfigMap catalog file: YAML lists in data.packages / clusterServiceVersions / customResourceDefinitions."""
    document = _first_document(path)
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
                channel.entries.append(_entry_for(csv))
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


def _is_configmap(path: Path) -> bool:
    document = _first_document(path) if path.is_file() else None
    return isinstance(document, dict) and document.get("kind") == "ConfigMap"


def detect(path: Path) -> str:
    """fbc | bundle | bundle-package | package-manifest | configmap | configmap-dir | packages"""
    if path.is_file():
        document = _first_document(path)
        return (
            "configmap"
            if isinstance(document, dict) and document.get("kind") == "ConfigMap"
            else "fbc"
        )
    if is_bundle_dir(path):
        return "bundle"
    if is_package_manifest_dir(path):
        return "package-manifest"
    if any(_is_configmap(p) for p in path.glob("*.y*ml")):
        return "configmap-dir"
    children = [p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")]
    if children and any(is_bundle_dir(c) for c in children):
        return "bundle-package"
    if children and all(
        is_bundle_dir(c)
        or is_package_manifest_dir(c)
        or any(is_bundle_dir(g) for g in c.iterdir() if g.is_dir())
        for c in children
    ):
        return "packages"
    return "fbc"


def load(path: Path) -> Catalog:
    """Read any catalog format into the model; problems are collected on the catalog."""
    path = Path(path)
    if not path.exists():
        return Catalog(
            problems=[
                Problem(
                    "catalog-missing",
                    f"{path} does not exist",
                    "pass the catalog's directory or file",
                )
            ]
        )
    kind = detect(path)
    if kind == "fbc":
        return load_fbc(path)
    catalog = Catalog()
    if kind == "configmap":
        load_configmap(path, catalog)
    elif kind == "configmap-dir":
        for child in sorted(path.glob("*.y*ml")):
            if _is_configmap(child):
                load_configmap(child, catalog)
    elif kind == "bundle":
        _single_bundle(path, catalog)
    elif kind == "bundle-package":
        load_bundle_package(path, catalog)
    elif kind == "package-manifest":
        load_package_manifest(path, catalog)
    else:
        for child in sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith(".")):
            if is_package_manifest_dir(child):
                load_package_manifest(child, catalog)
            else:
                load_bundle_package(child, catalog)
    return catalog


def _single_bundle(path: Path, catalog: Catalog) -> None:
    loaded = load_bundle_dir(path, catalog.problems)
    if loaded is None:
        return
    bundle, channels, default = loaded
    package = Package(
        bundle.package,
        default_channel=default or (channels[0] if len(channels) == 1 else ""),
        source=str(path),
    )
    package.bundles[bundle.name] = bundle
    for name in channels:
        package.channels[name] = Channel(
            name, bundle.package, [_entry_for(bundle.csv or {"metadata": {"name": bundle.name}})]
        )
    catalog.packages[package.name] = package
