"""The templates: no inline script, style or event handler (the CSP would refuse them), and
every form that posts carries the CSRF token."""

from __future__ import annotations

import re
from importlib import resources

from olm.console import views

TEMPLATES = resources.files("olm.console") / "templates"


def _templates() -> dict[str, str]:
    return {t.name: t.read_text() for t in TEMPLATES.iterdir() if t.name.endswith(".html")}


def test_no_inline_script_style_or_handler() -> None:
    for name, text in _templates().items():
        scripts = re.findall(r"<script[^>]*>", text)
        assert all("src=" in s for s in scripts), name
        assert "<style" not in text and " style=" not in text, name
        assert not re.search(r"\son[a-z]+\s*=", text), name


def test_every_post_form_carries_the_csrf_token() -> None:
    for name, text in _templates().items():
        for form in re.findall(r'<form method="post".*?</form>', text, flags=re.S):
            assert 'name="csrf"' in form, name


def test_values_are_escaped() -> None:
    html = views.page("error.html", title="<script>x</script>", error="<b>bad</b>")
    assert "<script>x" not in html and "&lt;script&gt;x" in html and "&lt;b&gt;bad" in html
