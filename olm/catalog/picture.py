"""Pictures of a package's upgrade graph: Mermaid and Graphviz dot (svg/png through `dot`).

Marks: the head (bold), the default channel (in the title), `replaces` edges (solid), `skips`
edges (dashed) and skipRange edges (dotted, to every entry of the channel in the range).
"""

from __future__ import annotations

import shutil
import subprocess

from olm.catalog.graph import GraphError, head
from olm.catalog.model import Channel, Package
from olm.catalog.semver import SemverError, parse_range, parse_tolerant


class PictureError(RuntimeError):
    pass


def _edges(package: Package, channel: Channel) -> list[tuple[str, str, str]]:
    """(from, to, kind) with kind replaces | skips | skipRange."""
    names = {e.name for e in channel.entries}
    edges = []
    for entry in channel.entries:
        if entry.replaces:
            edges.append((entry.replaces, entry.name, "replaces"))
        edges.extend((skipped, entry.name, "skips") for skipped in entry.skips)
        if entry.skip_range:
            try:
                matches = parse_range(entry.skip_range)
            except SemverError:
                continue
            for other in sorted(names - {entry.name}):
                bundle = package.bundles.get(other)
                try:
                    if bundle is not None and matches(parse_tolerant(bundle.version)):
                        edges.append((other, entry.name, "skipRange"))
                except SemverError:
                    continue
    return edges


def _channels(package: Package, only: str | None) -> list[Channel]:
    if only is not None:
        if only not in package.channels:
            raise PictureError(
                f'package "{package.name}" has no channel "{only}"; channels: {", ".join(sorted(package.channels))}'
            )
        return [package.channels[only]]
    return [package.channels[c] for c in sorted(package.channels)]


def _head(channel: Channel) -> str | None:
    try:
        return head(channel)
    except GraphError:
        return None


def mermaid(package: Package, channel: str | None = None) -> str:
    lines = ["flowchart LR"]
    style = {"replaces": "-->", "skips": "-.->|skips|", "skipRange": "-.->|skipRange|"}
    for index, chan in enumerate(_channels(package, channel)):
        default = " (default)" if chan.name == package.default_channel else ""
        lines.append(f'  subgraph c{index}["channel {chan.name}{default}"]')
        ids = {}
        for number, entry in enumerate(chan.entries):
            ids[entry.name] = f"c{index}n{number}"
            label = f"**{entry.name}** (head)" if entry.name == _head(chan) else entry.name
            lines.append(f'    {ids[entry.name]}["{label}"]')
        for source, target, kind in _edges(package, chan):
            if source not in ids:
                ids[source] = f"c{index}x{len(ids)}"
                lines.append(f'    {ids[source]}["{source} (not in channel)"]')
            lines.append(f"    {ids[source]} {style[kind]} {ids[target]}")
        lines.append("  end")
    return "\n".join(lines) + "\n"


def dot(package: Package, channel: str | None = None) -> str:
    lines = [
        f'digraph "{package.name}" {{',
        "  rankdir=LR;",
        "  node [shape=box, fontname=Helvetica];",
    ]
    style = {"replaces": "solid", "skips": "dashed", "skipRange": "dotted"}
    for index, chan in enumerate(_channels(package, channel)):
        default = " (default)" if chan.name == package.default_channel else ""
        lines.append(f'  subgraph "cluster_{index}" {{ label="channel {chan.name}{default}";')
        channel_head = _head(chan)
        for entry in chan.entries:
            extra = (
                ', style="bold,filled", fillcolor="#dbe9f6"' if entry.name == channel_head else ""
            )
            lines.append(f'    "{chan.name}/{entry.name}" [label="{entry.name}"{extra}];')
        for source, target, kind in _edges(package, chan):
            lines.append(
                f'    "{chan.name}/{source}" -> "{chan.name}/{target}" [style={style[kind]}, label="{kind if kind != "replaces" else ""}"];'
            )
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def rendered(package: Package, channel: str | None, fmt: str) -> bytes:
    if fmt == "mermaid":
        return mermaid(package, channel).encode()
    source = dot(package, channel)
    if fmt == "dot":
        return source.encode()
    binary = shutil.which("dot")
    if binary is None:
        raise PictureError(
            f"--format {fmt} needs Graphviz's `dot` (apt-get install graphviz); --format mermaid or dot work without it"
        )
    return subprocess.run(
        [binary, f"-T{fmt}"], input=source.encode(), capture_output=True, check=True
    ).stdout
