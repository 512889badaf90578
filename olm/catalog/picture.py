"""Pictures of a package's upgrade graph: Mermaid, Graphviz dot, SVG (drawn here), and PNG
(through Graphviz's `dot` when it is installed).

Marks: the head (bold), the default channel (in the title), `replaces` edges (solid), `skips`
edges (dashed) and skipRange edges (dotted, to every entry of the channel in the range).
"""

from __future__ import annotations

import shutil
import subprocess
from html import escape

from olm.catalog.graph import GraphError, entries_in_order, head
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


def svg(package: Package, channel: str | None = None) -> str:
    """A self-contained SVG: one row per channel, oldest entry left, head right (bold)."""
    width, height, gap_x, gap_y, left, top = 230, 34, 60, 120, 20, 50
    rows = _channels(package, channel)
    layouts = []
    for chan in rows:
        order = list(reversed(entries_in_order(chan)))
        dangling = sorted({s for s, _, _ in _edges(package, chan)} - set(order))
        layouts.append((chan, dangling + order, set(dangling)))
    columns = max((len(names) for _, names, _ in layouts), default=1)
    total_w = left * 2 + columns * (width + gap_x)
    total_h = top + len(rows) * (height + gap_y) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{total_h}" font-family="sans-serif" font-size="11">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>',
        f'<rect width="{total_w}" height="{total_h}" fill="white"/>',
        f'<text x="{left}" y="22" font-size="15" font-weight="bold">{escape(package.name)}</text>',
    ]
    dashes = {
        "replaces": "",
        "skips": ' stroke-dasharray="6 3"',
        "skipRange": ' stroke-dasharray="2 3"',
    }
    for row, (chan, names, outside) in enumerate(layouts):
        y = top + row * (height + gap_y) + 30
        default = " (default channel)" if chan.name == package.default_channel else ""
        out.append(
            f'<text x="{left}" y="{y - 12}" font-weight="bold">channel {escape(chan.name)}{escape(default)}</text>'
        )
        position = {name: (left + column * (width + gap_x), y) for column, name in enumerate(names)}
        channel_head = _head(chan)
        for name, (x, node_y) in position.items():
            stroke = ' stroke-width="3"' if name == channel_head else ""
            fill = (
                "#eeeeee" if name in outside else ("#dbe9f6" if name == channel_head else "#ffffff")
            )
            out.append(
                f'<rect x="{x}" y="{node_y}" width="{width}" height="{height}" rx="5" fill="{fill}" stroke="black"{stroke}/>'
            )
            label = name + (" (head)" if name == channel_head else "")
            out.append(
                f'<text x="{x + width / 2}" y="{node_y + 21}" text-anchor="middle">{escape(label)}</text>'
            )
        for source, target, kind in _edges(package, chan):
            (x1, y1), (x2, y2) = position[source], position[target]
            start, end = (x1 + width, y1 + height / 2), (x2, y2 + height / 2)
            if kind == "replaces":
                path = f"M {start[0]} {start[1]} L {end[0]} {end[1]}"
            else:
                bend = -45 if kind == "skips" else height + 45
                path = f"M {x1 + width / 2} {y1 + (0 if kind == 'skips' else height)} C {x1 + width / 2} {y1 + bend}, {x2 + width / 2} {y2 + bend}, {x2 + width / 2} {y2 + (0 if kind == 'skips' else height)}"
            out.append(
                f'<path d="{path}" fill="none" stroke="black"{dashes[kind]} marker-end="url(#arrow)"><title>{kind}</title></path>'
            )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def rendered(package: Package, channel: str | None, fmt: str) -> bytes:
    if fmt == "mermaid":
        return mermaid(package, channel).encode()
    if fmt == "svg":
        return svg(package, channel).encode()
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
