"""Catalog text (a CSV's `description`, Markdown written by the operator's author) as safe HTML.

Invariants: raw HTML in the source is never passed through as markup: markdown-it renders with
`html` off (a `<script>` is shown as text), and the result is then sanitised by nh3 (an
allow-list of tags and attributes; links get rel="noopener noreferrer nofollow"; only http,
https and mailto URLs). Pure: text in, markup out.
"""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

_RENDERER = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

TAGS = frozenset(
    {
        "a", "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
        "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
    }
)  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "th": {"align"}, "td": {"align"}}
SCHEMES = frozenset({"http", "https", "mailto"})


def render(text: str | None) -> Markup:
    """`text` (Markdown) as sanitised HTML; empty for no text."""
    if not text:
        return Markup("")
    html = _RENDERER.render(text)
    clean = nh3.clean(
        html,
        tags=set(TAGS),
        attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        url_schemes=set(SCHEMES),
        link_rel="noopener noreferrer nofollow",
    )
    return Markup(clean)
