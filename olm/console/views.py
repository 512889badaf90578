"""Pages as HTML: the console's Jinja2 templates (olm/console/templates), autoescaped.

Invariants: pure (a template name and a context in, a page out); every value is escaped unless
it is `Markup` made by olm.console.markdown; no template has an inline script or style (the
Content-Security-Policy would refuse it); every form that posts carries `csrf`.
"""

from __future__ import annotations

from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from olm.console.markdown import render as markdown

_ENVIRONMENT = Environment(
    loader=PackageLoader("olm.console", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENVIRONMENT.filters["markdown"] = markdown


def page(template: str, **context: Any) -> str:
    """The page `template` rendered with `context` (`session`, `csrf`, `read_only` default)."""
    context.setdefault("session", None)
    context.setdefault("csrf", "")
    context.setdefault("read_only", False)
    context.setdefault("error", "")
    context.setdefault("notes", ())
    return _ENVIRONMENT.get_template(template).render(**context)
