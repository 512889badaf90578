"""API server warnings (the `Warning` response header, RFC 7234 code 299): heard by the gateway,
collected by whoever asks for them around a few requests.

OLM records the warnings its InstallPlan steps meet (a CRD's deprecated version, when the step
reads that version's objects) as a Warning Event `AppliedWithWarnings` on the plan; olm-py's
InstallPlan controller collects them here the same way.

Invariants:
- Collection is per thread (`collecting()` nests; the innermost collector hears), so one
  worker's warnings never reach another's plan; requests made with no collector open are heard
  by nobody.
- `texts` returns each warning's text only (no code, agent or date), unquoted, in order.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterable, Iterator

_local = threading.local()
# 299 <agent> "<text>" ["<date>"]: the text is a quoted string with backslash escapes.
_WARNING = re.compile(r'^\s*\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"')


def texts(values: Iterable[str]) -> list[str]:
    """The texts of `Warning` header values (one value may hold several, comma-separated)."""
    found = []
    for value in values:
        rest = value
        while rest:
            match = _WARNING.match(rest)
            if match is None:
                break
            found.append(re.sub(r"\\(.)", r"\1", match.group(1)))
            rest = rest[match.end() :].lstrip()
            # An optional quoted date, then the next warning after a comma.
            rest = re.sub(r'^"[^"]*"\s*', "", rest)
            rest = rest[1:] if rest.startswith(",") else ""
    return found


def heard(values: Iterable[str]) -> None:
    """Called by the gateway with a response's `Warning` header values."""
    sink: list[str] | None = getattr(_local, "sink", None)
    if sink is not None:
        sink.extend(texts(values))


@contextlib.contextmanager
def collecting() -> Iterator[list[str]]:
    """The warnings of the requests this thread makes inside the block."""
    previous = getattr(_local, "sink", None)
    sink: list[str] = []
    _local.sink = sink
    try:
        yield sink
    finally:
        _local.sink = previous
