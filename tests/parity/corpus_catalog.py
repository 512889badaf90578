"""One file-based catalog of the whole community corpus, every bundle's objects inline.

The corpus (`../shared/corpus/community-operators`, INDEX.md) holds 44 packages in the bundle
and package-manifest formats. Each is read with olm-py's own loaders (`olm.catalog.formats`,
which put every manifest inline as `olm.bundle.object` with an empty image, as the real OLM needs
here: docs/parity.md) and rendered as one FBC folder that `opm serve` serves on both sides.

`opm serve` refuses a whole catalog when one channel has no single head or strands bundles
(operator-registry's model validation), and several corpus packages were published for
`opm index add --mode semver` (INDEX.md: semver-mode, FBC templates, stranded bundles). Such a
channel is *repaired* as the semver mode would build it: its entries sorted by version, each
replacing the one before; skips and skipRange stay. Every repair is returned, so the report
can say which packages were served as published and which were not.

Invariants: pure over the loaded model (no cluster); the same corpus gives the same catalog,
byte for byte; a channel opm accepts is never changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from olm.catalog.formats import load
from olm.catalog.model import Catalog, Channel, Entry, Package
from olm.catalog.render import blobs
from olm.catalog.semver import SemverError, parse_tolerant

SUBFOLDERS = ("operators", "upstream-community-operators")


def package_dirs(corpus: Path) -> list[Path]:
    """The 44 package folders, bundle format first (INDEX.md's order)."""
    return [
        p
        for sub in SUBFOLDERS
        for p in sorted((corpus / sub).iterdir())
        if p.is_dir() and not p.name.startswith(".")
    ]


def load_corpus(corpus: Path) -> Catalog:
    """Every package of the corpus in one model (problems kept, never raised)."""
    merged = Catalog()
    for folder in package_dirs(corpus):
        catalog = load(folder)
        merged.problems += catalog.problems
        for name, package in catalog.packages.items():
            merged.packages.setdefault(name, package)
        merged.others += catalog.others
    return merged


@dataclass(frozen=True)
class Repair:
    package: str
    channel: str
    why: str  # "no single head (a, b)" / "stranded (x)"


def heads(channel: Channel) -> list[str]:
    """opm's head candidates: entries no other entry of the channel replaces or skips."""
    named = {e.replaces for e in channel.entries} | {s for e in channel.entries for s in e.skips}
    return [e.name for e in channel.entries if e.name not in named]


def stranded(channel: Channel) -> list[str]:
    """opm's validateReplacesChain: entries neither on the replaces walk from the single head
    nor skipped by an entry on it."""
    found = heads(channel)
    if len(found) != 1:
        return []
    by_name = {e.name: e for e in channel.entries}
    walked: set[str] = set()
    skipped: set[str] = set()
    current = found[0]
    while current in by_name and current not in walked:
        walked.add(current)
        skipped.update(by_name[current].skips)
        current = by_name[current].replaces
    return [e.name for e in channel.entries if e.name not in walked and e.name not in skipped]


def _version_key(package: Package, name: str) -> tuple[int, Any, str]:
    bundle = package.bundles.get(name)
    try:
        return (1, parse_tolerant(bundle.version if bundle else ""), name)
    except SemverError:
        return (0, None, name)


def semver_chain(package: Package, channel: Channel) -> Channel:
    """The channel as `--mode semver` builds it: sorted by version, each entry replacing the
    last one before it that no entry skips (so the walk from the head never stops early at a
    skipped name); its own skips and skipRange kept."""
    ordered = sorted(channel.entries, key=lambda e: _version_key(package, e.name))
    skipped = {s for e in channel.entries for s in e.skips}
    entries: list[Entry] = []
    previous = ""
    for entry in ordered:
        entries.append(Entry(entry.name, previous, list(entry.skips), entry.skip_range))
        if entry.name not in skipped:
            previous = entry.name
    return Channel(channel.name, channel.package, entries)


def repair(catalog: Catalog) -> list[Repair]:
    """Make every channel acceptable to opm (in place); returns what was changed and why."""
    repairs: list[Repair] = []
    for package in catalog.packages.values():
        for name, channel in sorted(package.channels.items()):
            candidates = heads(channel)
            lost = stranded(channel)
            if len(candidates) == 1 and not lost:
                continue
            why = (
                f"no single head ({', '.join(candidates) or 'a cycle'})"
                if len(candidates) != 1
                else f"stranded ({', '.join(lost)})"
            )
            package.channels[name] = semver_chain(package, channel)
            repairs.append(Repair(package.name, name, why))
        if package.default_channel not in package.channels and package.channels:
            package.default_channel = sorted(package.channels)[0]
    return repairs


def write(catalog: Catalog, directory: Path) -> Path:
    """The catalog as DIRECTORY/<package>/catalog.yaml (one folder per package, as opm
    writes them); returns DIRECTORY."""
    by_package: dict[str, list[dict[str, Any]]] = {}
    for blob in blobs(catalog):
        by_package.setdefault(str(blob.get("package") or blob.get("name")), []).append(blob)
    for package, documents in by_package.items():
        folder = directory / package
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "catalog.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=True))
    return directory
