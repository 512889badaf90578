"""The catalog browser's view-model: PackageManifests as cards, filtered and faceted, and one
package's page (channels, versions, install modes).

Invariants: pure (PackageManifest bodies in, frozen views out); a malformed manifest yields a
card with what could be read, never an exception; filters are exact matches on facet values
and a case-insensitive substring search over name, display name, description, provider and
keywords; cards are sorted by display name, then catalog.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from olm.api import body

Obj = Mapping[str, Any]
INSTALL_MODES = ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")


def _map(value: Any) -> Mapping[str, Any]:
    # API bodies are plain dicts (JSON); `dict` is checked much faster than the Mapping ABC.
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else []


@dataclass(frozen=True)
class Entry:
    name: str
    version: str
    deprecated: bool = False


@dataclass(frozen=True)
class ChannelView:
    name: str
    current_csv: str
    version: str
    entries: tuple[Entry, ...]
    install_modes: tuple[str, ...]
    description: str
    owned: tuple[Mapping[str, str], ...]
    deprecated: str = ""


@dataclass(frozen=True)
class Card:
    name: str
    catalog: str
    catalog_namespace: str
    catalog_display: str
    display_name: str
    provider: str
    summary: str
    capability: str
    install_modes: tuple[str, ...]
    categories: tuple[str, ...]
    keywords: tuple[str, ...]
    default_channel: str
    version: str
    channels: tuple[ChannelView, ...] = field(default=(), compare=False)

    @property
    def key(self) -> str:
        return f"{self.catalog_namespace}/{self.name}"

    def channel(self, name: str | None) -> ChannelView | None:
        wanted = name or self.default_channel
        found = next((c for c in self.channels if c.name == wanted), None)
        return found or (self.channels[0] if self.channels else None)


def _modes(desc: Obj) -> tuple[str, ...]:
    return tuple(
        str(m.get("type"))
        for m in map(_map, _list(desc.get("installModes")))
        if m.get("supported") is True and m.get("type") in INSTALL_MODES
    )


def _channel(item: Obj) -> ChannelView:
    desc = _map(item.get("currentCSVDesc"))
    entries = tuple(
        Entry(str(e.get("name") or ""), str(e.get("version") or ""), bool(e.get("deprecation")))
        for e in map(_map, _list(item.get("entries")))
    )
    owned = tuple(
        {k: str(v) for k, v in _map(d).items() if isinstance(v, str)}
        for d in _list(_map(desc.get("customresourcedefinitions")).get("owned"))
    )
    deprecation = _map(item.get("deprecation")).get("message")
    return ChannelView(
        name=str(item.get("name") or ""),
        current_csv=str(item.get("currentCSV") or ""),
        version=str(desc.get("version") or ""),
        entries=entries,
        install_modes=_modes(desc),
        description=str(desc.get("description") or ""),
        owned=owned,
        deprecated=str(deprecation or ""),
    )


def card(manifest: Obj) -> Card:
    """One PackageManifest as a card (its default channel's head CSV describes it)."""
    status = _map(manifest.get("status"))
    channels = tuple(_channel(_map(c)) for c in _list(status.get("channels")))
    default = str(status.get("defaultChannel") or "")
    head = next((c for c in _list(status.get("channels")) if _map(c).get("name") == default), None)
    if head is None and channels:
        head = _list(status.get("channels"))[0]
    desc = _map(_map(head).get("currentCSVDesc"))
    annotations = _map(desc.get("annotations"))
    name = str(status.get("packageName") or body.name(manifest) or "")
    return Card(
        name=name,
        catalog=str(status.get("catalogSource") or ""),
        catalog_namespace=str(status.get("catalogSourceNamespace") or body.namespace(manifest)),
        catalog_display=str(status.get("catalogSourceDisplayName") or ""),
        display_name=str(desc.get("displayName") or name),
        provider=str(_map(status.get("provider")).get("name") or ""),
        summary=str(annotations.get("description") or ""),
        capability=str(annotations.get("capabilities") or ""),
        install_modes=_modes(desc),
        categories=tuple(
            c.strip() for c in str(annotations.get("categories") or "").split(",") if c.strip()
        ),
        keywords=tuple(str(k) for k in _list(desc.get("keywords"))),
        default_channel=default,
        version=str(desc.get("version") or ""),
        channels=channels,
    )


@dataclass(frozen=True)
class Filters:
    query: str = ""
    catalog: str = ""
    provider: str = ""
    capability: str = ""
    install_mode: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> Filters:
        def get(key: str) -> str:
            return str(query.get(key) or "").strip()[:200]

        return cls(get("q"), get("catalog"), get("provider"), get("capability"), get("mode"))

    def as_query(self) -> str:
        """These filters as a query string (for the links to other pages of results)."""
        pairs = (
            ("q", self.query),
            ("catalog", self.catalog),
            ("provider", self.provider),
            ("capability", self.capability),
            ("mode", self.install_mode),
        )
        return urlencode([(k, v) for k, v in pairs if v])

    def matches(self, item: Card) -> bool:
        if self.catalog and item.catalog != self.catalog:
            return False
        if self.provider and item.provider != self.provider:
            return False
        if self.capability and item.capability != self.capability:
            return False
        if self.install_mode and self.install_mode not in item.install_modes:
            return False
        if self.query:
            words = self.query.lower()
            haystack = " ".join(
                (item.name, item.display_name, item.summary, item.provider, *item.keywords)
            ).lower()
            return words in haystack
        return True


@dataclass(frozen=True)
class Facets:
    catalogs: tuple[tuple[str, int], ...]
    providers: tuple[tuple[str, int], ...]
    capabilities: tuple[tuple[str, int], ...]
    install_modes: tuple[tuple[str, int], ...]


def _counted(values: Iterable[str]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(Counter(v for v in values if v).items()))


def facets(cards: Sequence[Card]) -> Facets:
    return Facets(
        _counted(c.catalog for c in cards),
        _counted(c.provider for c in cards),
        _counted(c.capability for c in cards),
        _counted(m for c in cards for m in c.install_modes),
    )


PAGE_SIZE = 60


@dataclass(frozen=True)
class Page:
    """One page of the filtered cards (numbered from 1), and where the others are."""

    cards: tuple[Card, ...]
    number: int
    pages: int
    matched: int


def page_of(cards: Sequence[Card], requested: str | None, size: int = PAGE_SIZE) -> Page:
    pages = max(1, -(-len(cards) // size))
    try:
        number = min(max(1, int(requested or 1)), pages)
    except ValueError:
        number = 1
    start = (number - 1) * size
    return Page(tuple(cards[start : start + size]), number, pages, len(cards))


def browse(manifests: Iterable[Obj], filters: Filters) -> tuple[list[Card], Facets]:
    """The cards that pass `filters`, sorted, and the facets of all cards."""
    cards = [card(m) for m in manifests]
    shown = sorted(
        (c for c in cards if filters.matches(c)),
        key=lambda c: (c.display_name.lower(), c.catalog, c.name),
    )
    return shown, facets(cards)
