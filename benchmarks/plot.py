"""Tiny SVG bar charts, so benchmark plots need no plotting library."""

from __future__ import annotations

from html import escape
from pathlib import Path


def bar_chart(
    path: Path, title: str, unit: str, bars: list[tuple[str, float]], goal: float | None = None
) -> None:
    width, row, left, top = 720, 28, 220, 40
    height = top + row * len(bars) + 40
    peak = max([value for _, value in bars] + ([goal] if goal else [])) or 1.0
    scale = (width - left - 80) / peak
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="15" font-weight="bold">{escape(title)}</text>',
    ]
    for index, (label, value) in enumerate(bars):
        y = top + index * row
        parts.append(f'<text x="{left - 8}" y="{y + 17}" text-anchor="end">{escape(label)}</text>')
        parts.append(
            f'<rect x="{left}" y="{y + 4}" width="{max(1.0, value * scale):.1f}" height="{row - 8}" fill="#4878a8"/>'
        )
        parts.append(
            f'<text x="{left + value * scale + 6:.1f}" y="{y + 17}">{value:.2f} {escape(unit)}</text>'
        )
    if goal:
        x = left + goal * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{height - 30}" stroke="#c03030" stroke-dasharray="4"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{height - 14}" fill="#c03030" text-anchor="middle">goal {goal:g} {escape(unit)}</text>'
        )
    parts.append("</svg>")
    path.write_text("\n".join(parts))
