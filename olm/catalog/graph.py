"""The channel upgrade graph (catalog-formats.md §4).

- head: the one entry nobody `replaces` or `skips` (skipRange edges do not count);
- the replaces chain from the head, where an edge to a skipped entry ends the walk;
- stranded entries (neither on the chain nor skipped) and cycles;
- upgrade candidates of an installed version, and the path of hops to the head.
"""

from __future__ import annotations

from dataclasses import dataclass

from olm.catalog.model import Bundle, Channel
from olm.catalog.semver import SemverError, parse_range, parse_tolerant


class GraphError(ValueError):
    pass


def heads(channel: Channel) -> list[str]:
    names = {e.name for e in channel.entries}
    pointed = set()
    for entry in channel.entries:
        if entry.replaces in names:
            pointed.add(entry.replaces)
        pointed.update(s for s in entry.skips if s in names)
    return sorted(names - pointed)


def head(channel: Channel) -> str:
    found = heads(channel)
    if not found:
        raise GraphError("no channel head found in graph")
    if len(found) > 1:
        raise GraphError(f"multiple channel heads found in graph: {', '.join(found)}")
    return found[0]


@dataclass(frozen=True)
class ChainCheck:
    chain: list[str]
    cycle: list[str]
    stranded: list[str]


def check_chain(channel: Channel) -> ChainCheck:
    """Walk `replaces` from the head (opm's validateReplacesChain)."""
    start = head(channel)
    by_name = {e.name: e for e in channel.entries}
    skipped = {s for e in channel.entries for s in e.skips}
    chain: list[str] = []
    current: str | None = start
    cycle: list[str] = []
    while current is not None and current in by_name:
        if current in chain:
            cycle = [*chain[chain.index(current) :], current]
            break
        chain.append(current)
        nxt = by_name[current].replaces
        current = nxt if nxt and nxt not in skipped else None
    stranded = sorted(set(by_name) - set(chain) - skipped)
    return ChainCheck(chain, cycle, stranded)


def entries_in_order(channel: Channel) -> list[str]:
    """Entries head first along the chain, then the rest by name (for display)."""
    try:
        chain = check_chain(channel).chain
    except GraphError:
        chain = []
    return chain + sorted(e.name for e in channel.entries if e.name not in chain)


def upgrade_candidates(
    channel: Channel, bundles: dict[str, Bundle], installed: str, installed_version: str = ""
) -> list[str]:
    """Entries that may replace `installed`: it is their `replaces`, in their `skips`, or its
    version is in their skipRange. Ordered nearest the head first, as OLM prefers them."""
    version = None
    if not installed_version and installed in bundles:
        installed_version = bundles[installed].version
    if installed_version:
        try:
            version = parse_tolerant(installed_version)
        except SemverError:
            version = None
    found = []
    for entry in channel.entries:
        if entry.name == installed:
            continue
        in_range = False
        if entry.skip_range and version is not None:
            try:
                in_range = parse_range(entry.skip_range)(version)
            except SemverError:
                in_range = False  # OLM ignores an unparsable skipRange at runtime
        if entry.replaces == installed or installed in entry.skips or in_range:
            found.append(entry.name)
    order = {name: index for index, name in enumerate(entries_in_order(channel))}
    return sorted(found, key=lambda n: order.get(n, len(order)))


def path_to_head(
    channel: Channel,
    bundles: dict[str, Bundle],
    installed: str,
    installed_version: str = "",
    limit: int = 1000,
) -> list[str]:
    """The hops OLM would take from `installed`, one resolution at a time, to the head."""
    path: list[str] = []
    current, version = installed, installed_version
    for _ in range(limit):
        options = upgrade_candidates(channel, bundles, current, version)
        if not options:
            return path
        current = options[0]
        version = bundles[current].version if current in bundles else ""
        if current in path:
            raise GraphError(f"cycle while following upgrades: {' -> '.join([*path, current])}")
        path.append(current)
    return path
