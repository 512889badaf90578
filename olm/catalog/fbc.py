"""File-based catalogs (FBC): read a file or directory tree of blobs into the catalog model.

Invariants (operator-registry §1.1-1.9): every regular file under the root is read unless an
`.indexignore` excludes it; each file is a YAML or JSON stream of blobs; `olm.package`,
`olm.channel`, `olm.bundle` and `olm.deprecations` build the model and anything else is kept
as an "other" blob. Unlike `opm`, loading never stops at the first problem: every problem is
recorded with its file and document.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package, Problem
from olm.catalog.yamlio import DocumentError, iter_documents

KNOWN_SCHEMAS = ("olm.package", "olm.channel", "olm.bundle", "olm.deprecations")
DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


class _Ignore:
    """gitignore-style patterns from the `.indexignore` files above a path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.patterns: dict[Path, list[str]] = {}

    def _load(self, directory: Path) -> list[str]:
        if directory not in self.patterns:
            path = directory / ".indexignore"
            lines = path.read_text().splitlines() if path.is_file() else []
            self.patterns[directory] = [
                ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")
            ]
        return self.patterns[directory]

    def ignored(self, path: Path) -> bool:
        if path.name == ".indexignore":
            return True
        result = False
        directory = self.root
        parts = path.relative_to(self.root).parts
        for depth in range(len(parts)):
            relative = "/".join(parts[depth:])
            for pattern in self._load(directory):
                negate = pattern.startswith("!")
                body = pattern[1:] if negate else pattern
                body = body.rstrip("/")
                anchored = body.startswith("/")
                body = body.lstrip("/")
                candidates = [relative] if anchored or "/" in body else [relative, *parts[depth:]]
                if any(
                    fnmatch.fnmatchcase(c, body) or fnmatch.fnmatchcase(c, body + "/*")
                    for c in candidates
                ):
                    result = not negate
            directory = directory / parts[depth]
        return result


def catalog_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    ignore = _Ignore(root)
    files = []
    for directory, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for filename in sorted(filenames):
            path = Path(directory) / filename
            if path.is_file() and not ignore.ignored(path):
                files.append(path)
    return files


def _meta(
    blob: dict[str, Any], where: tuple[str, str], problems: list[Problem]
) -> dict[str, str] | None:
    folded: dict[str, str] = {}
    for key in blob:
        if not isinstance(key, str):
            continue
        low = key.lower()
        if low in folded:
            problems.append(
                Problem(
                    "blob-duplicate-keys",
                    f'duplicate keys for key "{low}"',
                    "keep one spelling of the key",
                    *where,
                )
            )
            return None
        folded[low] = key
    meta: dict[str, str] = {}
    for field in ("schema", "package", "name"):
        if field in folded:
            value = blob[folded[field]]
            if not isinstance(value, str):
                problems.append(
                    Problem(
                        "blob-meta-type",
                        f'expected value for key "{field}" to be a string',
                        f"quote the {field}",
                        *where,
                    )
                )
                return None
            meta[field] = value
    if not meta.get("schema"):
        problems.append(
            Problem(
                "blob-missing-schema",
                "object is missing root schema field",
                "add a schema: olm.package | olm.channel | olm.bundle | olm.deprecations",
                *where,
            )
        )
        return None
    return meta


def _get(blob: dict[str, Any], field: str) -> Any:
    """Go's encoding/json matches field names case-insensitively."""
    if field in blob:
        return blob[field]
    low = field.lower()
    return next((v for k, v in blob.items() if isinstance(k, str) and k.lower() == low), None)


def _str_list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def read_blobs(root: Path) -> tuple[list[tuple[dict[str, Any], tuple[str, str]]], list[Problem]]:
    """Every blob under `root` with its (file, document) location, and parse problems."""
    blobs: list[tuple[dict[str, Any], tuple[str, str]]] = []
    problems: list[Problem] = []
    if not root.exists():
        problems.append(
            Problem(
                "catalog-missing", f"{root} does not exist", "pass the catalog's directory or file"
            )
        )
        return blobs, problems
    for path in catalog_files(root):
        shown = str(path.relative_to(root)) if root.is_dir() else str(path)
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(
                Problem(
                    "file-unreadable",
                    f"cannot read: {exc}",
                    "remove the file or list it in .indexignore",
                    shown,
                )
            )
            continue
        try:
            for index, document in iter_documents(text):
                where = (shown, f"document {index + 1}")
                if not isinstance(document, dict):
                    problems.append(
                        Problem(
                            "blob-not-object",
                            f"a catalog document must be an object, got {type(document).__name__}",
                            "each YAML document / JSON value must be one blob",
                            *where,
                        )
                    )
                    continue
                blobs.append((document, where))
        except DocumentError as exc:
            line = f", line {exc.line}" if exc.line else ""
            problems.append(
                Problem(
                    "file-parse",
                    f"{exc}",
                    "fix the syntax, or list non-catalog files in .indexignore",
                    shown,
                    f"document {exc.document + 1}{line}",
                )
            )
    return blobs, problems


def load_fbc(root: Path) -> Catalog:
    blobs, problems = read_blobs(root)
    return blobs_to_catalog(blobs, problems)


def blobs_to_catalog(
    blobs: list[tuple[dict[str, Any], tuple[str, str]]], problems: list[Problem] | None = None
) -> Catalog:
    catalog = Catalog(problems=list(problems or []))
    typed: dict[str, list[tuple[dict[str, Any], dict[str, str], tuple[str, str]]]] = {
        s: [] for s in KNOWN_SCHEMAS
    }
    for blob, where in blobs:
        meta = _meta(blob, where, catalog.problems)
        if meta is None:
            continue
        if meta["schema"] in typed:
            typed[meta["schema"]].append((blob, meta, where))
        else:
            catalog.others.append(blob)
    for blob, meta, where in typed["olm.package"]:
        _add_package(catalog, blob, meta, where)
    for blob, meta, where in typed["olm.channel"]:
        _add_channel(catalog, blob, meta, where)
    for blob, meta, where in typed["olm.bundle"]:
        _add_bundle(catalog, blob, meta, where)
    for blob, meta, where in typed["olm.deprecations"]:
        _add_deprecations(catalog, blob, meta, where)
    return catalog


def _add_package(
    catalog: Catalog, blob: dict[str, Any], meta: dict[str, str], where: tuple[str, str]
) -> None:
    name = meta.get("name", "")
    if not name:
        catalog.problems.append(
            Problem(
                "package-name",
                "config contains package with no name",
                "set name on the olm.package blob",
                *where,
            )
        )
        return
    if name in catalog.packages:
        catalog.problems.append(
            Problem(
                "package-duplicate",
                f'duplicate package "{name}"',
                "keep one olm.package blob per package",
                *where,
            )
        )
        return
    if len(name) > 63 or not DNS_LABEL.fullmatch(name):
        catalog.problems.append(
            Problem(
                "package-name-format",
                f'invalid package name "{name}": must be a DNS-1123 label',
                "use lowercase letters, digits and '-', at most 63 characters",
                *where,
            )
        )
    default = _get(blob, "defaultChannel")
    catalog.packages[name] = Package(
        name=name,
        default_channel=default if isinstance(default, str) else "",
        description=str(_get(blob, "description") or ""),
        icon=_get(blob, "icon") if isinstance(_get(blob, "icon"), dict) else None,
        source=where[0],
    )


def _add_channel(
    catalog: Catalog, blob: dict[str, Any], meta: dict[str, str], where: tuple[str, str]
) -> None:
    package_name, name = meta.get("package", ""), meta.get("name", "")
    package = catalog.packages.get(package_name)
    if package is None:
        catalog.problems.append(
            Problem(
                "channel-package",
                f'unknown package "{package_name}" for channel "{name}"',
                "add the olm.package blob, or fix the channel's package",
                *where,
            )
        )
        return
    if not name:
        catalog.problems.append(
            Problem(
                "channel-name",
                f'package "{package_name}" contains channel with no name',
                "set name on the olm.channel blob",
                *where,
            )
        )
        return
    if name in package.channels:
        catalog.problems.append(
            Problem(
                "channel-duplicate",
                f'package "{package_name}" has duplicate channel "{name}"',
                "merge the two olm.channel blobs",
                *where,
            )
        )
        return
    channel = Channel(name, package_name)
    entries = _get(blob, "entries")
    if entries is not None and not isinstance(entries, list):
        catalog.problems.append(
            Problem(
                "channel-entries-type",
                f'channel "{name}" entries must be a list',
                "write entries as a list of {name, replaces, skips, skipRange}",
                *where,
            )
        )
        entries = []
    for index, raw in enumerate(entries or []):
        if (
            not isinstance(raw, dict)
            or not isinstance(_get(raw, "name"), str)
            or not _get(raw, "name")
        ):
            catalog.problems.append(
                Problem(
                    "channel-entry",
                    f'channel "{name}" entry {index} has no name',
                    "every entry needs the bundle's name",
                    *where,
                )
            )
            continue
        entry = Entry(
            name=_get(raw, "name"),
            replaces=str(_get(raw, "replaces") or ""),
            skips=_str_list(_get(raw, "skips")),
            skip_range=str(_get(raw, "skipRange") or ""),
        )
        if channel.entry(entry.name) is not None:
            catalog.problems.append(
                Problem(
                    "channel-entry-duplicate",
                    f'invalid package "{package_name}", channel "{name}": duplicate entry "{entry.name}"',
                    "list each bundle once per channel",
                    *where,
                )
            )
            continue
        channel.entries.append(entry)
    package.channels[name] = channel


def _add_bundle(
    catalog: Catalog, blob: dict[str, Any], meta: dict[str, str], where: tuple[str, str]
) -> None:
    package_name, name = meta.get("package", ""), meta.get("name", "")
    if not package_name:
        catalog.problems.append(
            Problem(
                "bundle-package",
                f'package name must be set for bundle "{name}"',
                "set package on the olm.bundle blob",
                *where,
            )
        )
        return
    package = catalog.packages.get(package_name)
    if package is None:
        catalog.problems.append(
            Problem(
                "bundle-package",
                f'unknown package "{package_name}" for bundle "{name}"',
                "add the olm.package blob, or fix the bundle's package",
                *where,
            )
        )
        return
    if name in package.bundles:
        catalog.problems.append(
            Problem(
                "bundle-duplicate",
                f'package "{package_name}" has duplicate bundle "{name}"',
                "keep one olm.bundle blob per bundle",
                *where,
            )
        )
        return
    properties = _get(blob, "properties")
    if properties is not None and not isinstance(properties, list):
        catalog.problems.append(
            Problem(
                "bundle-properties-type",
                f'bundle "{name}" properties must be a list',
                "write properties as a list of {type, value}",
                *where,
            )
        )
        properties = []
    related = _get(blob, "relatedImages")
    package.bundles[name] = Bundle(
        name=name,
        package=package_name,
        image=str(_get(blob, "image") or ""),
        properties=[p for p in properties or [] if isinstance(p, dict)],
        related_images=[r for r in related if isinstance(r, dict)]
        if isinstance(related, list)
        else [],
        source=f"{where[0]}:{where[1]}",
    )


def _add_deprecations(
    catalog: Catalog, blob: dict[str, Any], meta: dict[str, str], where: tuple[str, str]
) -> None:
    package = catalog.packages.get(meta.get("package", ""))
    if package is None:
        catalog.problems.append(
            Problem(
                "deprecations-package",
                f'cannot apply deprecations to an unknown package "{meta.get("package", "")}"',
                "fix the package of the olm.deprecations blob",
                *where,
            )
        )
        return
    if package.deprecations is not None:
        catalog.problems.append(
            Problem(
                "deprecations-duplicate",
                f'expected a maximum of one deprecation per package: "{package.name}"',
                "merge the olm.deprecations blobs",
                *where,
            )
        )
        return
    package.deprecations = blob
