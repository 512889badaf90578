"""One in-memory model for every catalog format: packages, channels, bundles.

Invariants: a `Problem` always says where (file, document), which rule, what is wrong and how
to fix it; loaders collect problems instead of stopping at the first one, so a user sees
everything wrong with a catalog at once.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a catalog."""

    rule: str
    message: str
    hint: str = ""
    path: str = ""
    location: str = ""  # document index, package/channel/bundle, ...
    level: str = "error"  # or "warning": reported, but the catalog stays valid

    def __str__(self) -> str:
        where = ":".join(part for part in (self.path, self.location) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.level != "error":
            text = f"{self.level}: {text}"
        text += f" [{self.rule}]"
        return f"{text} (fix: {self.hint})" if self.hint else text


@dataclass
class Entry:
    name: str
    replaces: str = ""
    skips: list[str] = field(default_factory=list)
    skip_range: str = ""


@dataclass
class Channel:
    name: str
    package: str
    entries: list[Entry] = field(default_factory=list)

    def entry(self, name: str) -> Entry | None:
        return next((e for e in self.entries if e.name == name), None)


@dataclass
class Bundle:
    name: str
    package: str
    image: str = ""
    properties: list[dict[str, Any]] = field(default_factory=list)
    related_images: list[dict[str, str]] = field(default_factory=list)
    source: str = ""
    # Dependencies as the author wrote them (metadata/dependencies.yaml), when known.
    dependencies: list[dict[str, Any]] | None = None
    # Where the bundle came from: fbc | bundle | package-manifest | configmap.
    format: str = "fbc"
    # The CSV a registry served for the bundle (`csvJson`), when read over gRPC: the only CSV
    # known of a bundle whose objects come from its image (olm.catalog.documents.bundle_csv).
    csv_json: str = ""

    def props(self, kind: str) -> list[Any]:
        return [p.get("value") for p in self.properties if p.get("type") == kind]

    @property
    def version(self) -> str:
        packages = self.props("olm.package")
        return (
            str(packages[0].get("version", ""))
            if packages and isinstance(packages[0], dict)
            else ""
        )

    @property
    def objects(self) -> list[dict[str, Any]]:
        found = []
        for value in self.props("olm.bundle.object"):
            try:
                found.append(json.loads(base64.b64decode(value["data"])))
            except (KeyError, TypeError, ValueError):
                continue
        return found

    @property
    def csv(self) -> dict[str, Any] | None:
        return next((o for o in self.objects if o.get("kind") == "ClusterServiceVersion"), None)


@dataclass
class Package:
    name: str
    default_channel: str = ""
    description: str = ""
    icon: dict[str, Any] | None = None
    channels: dict[str, Channel] = field(default_factory=dict)
    bundles: dict[str, Bundle] = field(default_factory=dict)
    deprecations: dict[str, Any] | None = None
    source: str = ""


@dataclass
class Catalog:
    packages: dict[str, Package] = field(default_factory=dict)
    others: list[dict[str, Any]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def bundle_count(self) -> int:
        return sum(len(p.bundles) for p in self.packages.values())
