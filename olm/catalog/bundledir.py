"""Bundle directories (registry+v1: `manifests/` + `metadata/annotations.yaml`), read into the
catalog model (catalog-formats.md §1-2): one bundle alone, or a package of them, one directory
per version (the community-operators layout).

The package, channels and default channel come from the bundle annotations
(`operators.operatorframework.io.bundle.*`); dependencies from `metadata/dependencies.yaml`
(and `properties` in any metadata file). A package's default channel is the one its highest
version that declares one declares; when no bundle does, the only channel it has.

Invariants: a directory that cannot be read is a Problem on the catalog, never an exception;
one bundle per CSV name in a package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm.catalog.model import Bundle, Catalog, Channel, Package, Problem
from olm.catalog.registryv1 import bundle_properties, entry_for, related_images
from olm.catalog.semver import SemverError, parse_tolerant
from olm.catalog.yamlio import first_document

ANNOTATIONS_PREFIX = "operators.operatorframework.io.bundle."


def _dependencies(metadata: Path, problems: list[Problem], where: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(metadata.glob("*")):
        document = first_document(path) if path.is_file() else None
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
    if (metadata / "dependencies.yaml").is_file() and first_document(
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
        first_document(metadata / "dependencies.yaml")
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
        document = first_document(candidate) if candidate.is_file() else None
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
            first_document(p)
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
        related_images=related_images(csv),
        source=where,
        dependencies=raw_dependencies,
        format="bundle",
    )
    return (
        bundle,
        channels,
        str(annotations.get(ANNOTATIONS_PREFIX + "channel.default.v1", "") or ""),
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
            channel.entries.append(entry_for(csv))
    for package in catalog.packages.values():
        if package.default_channel:
            continue
        declared = [(b, d) for b, _, d, _ in found if b.package == package.name and d]
        if declared:
            package.default_channel = max(declared, key=lambda item: _version_key(item[0]))[1]
        elif len(package.channels) == 1:
            package.default_channel = next(iter(package.channels))


def load_single_bundle(path: Path, catalog: Catalog) -> None:
    """One bundle directory as a package of its own."""
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
            name, bundle.package, [entry_for(bundle.csv or {"metadata": {"name": bundle.name}})]
        )
    catalog.packages[package.name] = package
