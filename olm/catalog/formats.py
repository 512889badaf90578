"""Every catalog format OLM uses, told apart and read into one model (catalog-formats.md §1-3, §6).

- file-based catalogs (a file or a directory tree): `olm.catalog.fbc`;
- bundle directories (`manifests/` + `metadata/annotations.yaml`), alone or one per version
  under a package directory (`olm.catalog.bundledir`), or packages under a directory of
  packages;
- legacy package-manifest directories (`*.package.yaml` + one directory per version):
  `olm.catalog.packagemanifest`;
- ConfigMap catalogs (`kind: ConfigMap` with `packages`, `clusterServiceVersions`,
  `customResourceDefinitions`), a file or a directory of them: `olm.catalog.configmap`.

Bundles from every non-FBC format carry their manifests inline (`olm.bundle.object`) and an
empty image, so they can be served without unpacking images. Upgrade edges come from the CSVs
(`spec.replaces`, `spec.skips`, the `olm.skipRange` annotation), as `opm` does
(`olm.catalog.registryv1`).

Invariant: `load` never raises for a catalog's content; what cannot be read is a Problem.
"""

from __future__ import annotations

from pathlib import Path

from olm.catalog.bundledir import is_bundle_dir, load_bundle_package, load_single_bundle
from olm.catalog.configmap import is_configmap, load_configmap
from olm.catalog.fbc import load_fbc
from olm.catalog.model import Catalog, Problem
from olm.catalog.packagemanifest import is_package_manifest_dir, load_package_manifest
from olm.catalog.yamlio import first_document


def detect(path: Path) -> str:
    """fbc | bundle | bundle-package | package-manifest | configmap | configmap-dir | packages"""
    if path.is_file():
        document = first_document(path)
        return (
            "configmap"
            if isinstance(document, dict) and document.get("kind") == "ConfigMap"
            else "fbc"
        )
    if is_bundle_dir(path):
        return "bundle"
    if is_package_manifest_dir(path):
        return "package-manifest"
    if any(is_configmap(p) for p in path.glob("*.y*ml")):
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
            if is_configmap(child):
                load_configmap(child, catalog)
    elif kind == "bundle":
        load_single_bundle(path, catalog)
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
