"""Catalog Markdown is rendered, and any HTML in it is shown as text, never as markup."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from olm.console.markdown import render

EVENT_ATTRIBUTE = re.compile(r"<[^>]*\son\w+\s*=")


def test_markdown_is_rendered() -> None:
    html = render("# Title\n\n**bold** and [a link](https://example.com)\n\n- one\n- two")
    assert "<h1>Title</h1>" in html and "<strong>bold</strong>" in html
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">a link</a>' in html
    assert "<li>one</li>" in html


def test_raw_html_is_text() -> None:
    html = render('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)"> <b>x</b>')
    assert "<script" not in html and "<img" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_javascript_links_are_dropped() -> None:
    html = render("[click](javascript:alert(1)) [data](data:text/html,hi)")
    assert "javascript:" not in html.replace("[click](javascript:alert(1))", "")
    assert "href" not in html


def test_no_text_is_no_markup() -> None:
    assert render(None) == "" and render("") == ""


@given(
    st.text(alphabet=st.sampled_from(list("<>\"'=/ ascriptimgonerrorhref:()[]*#`\n")), max_size=80)
)
def test_no_input_makes_a_script_or_an_event_handler(text: str) -> None:
    html = str(render(text)).lower()
    assert "<script" not in html and "<img" not in html
    assert not EVENT_ATTRIBUTE.search(html)
