"""The parity suite's list of known differences (tests/parity/known_differences.yaml): each
entry names a scenario, kind, object, point and JSON path (globs where only `*` and `?` are
special) and the docs/differences.md heading that explains it. `unlisted` keeps the
differences no entry matches.

Pure: plain data in, plain data out (the file is read by the callers).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tests.parity.normalize import Difference
from tests.support.paths import REPO


@functools.cache
def _glob_pattern(pattern: str) -> re.Pattern[str]:
    expression = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return re.compile(expression + r"\Z", re.S)


def _glob(text: str, pattern: str) -> bool:
    """Glob where only `*` and `?` are special (JSON paths are full of brackets)."""
    return _glob_pattern(pattern).match(text) is not None


@dataclass(frozen=True)
class KnownDifference:
    """One entry of known_differences.yaml."""

    scenario: str  # scenario name, or "*"
    kind: str  # object kind, or "*"
    path: str  # glob over the JSON path ("" for a whole object)
    reason: str
    heading: str  # the docs/differences.md heading that explains it
    object: str = "*"  # glob over "namespace/name" (or "name" when cluster-scoped)
    point: str = "*"  # glob over the snapshot point

    def matches(self, scenario: str, difference: Difference) -> bool:
        name = difference.object.split(" ", 1)[1] if " " in difference.object else ""
        return (
            _glob(scenario, self.scenario)
            and _glob(difference.kind, self.kind)
            and _glob(name, self.object)
            and _glob(difference.point, self.point)
            and _glob(difference.path, self.path)
        )


def load_known(entries: Iterable[Mapping[str, Any]]) -> list[KnownDifference]:
    """known_differences.yaml's list -> entries; a missing or unknown field is an error."""
    fields = set(KnownDifference.__dataclass_fields__)
    out = []
    for index, entry in enumerate(entries):
        unknown = set(entry) - fields
        missing = {"scenario", "kind", "path", "reason", "heading"} - set(entry)
        if unknown or missing:
            raise ValueError(
                f"known_differences[{index}]: unknown fields {sorted(unknown)}, "
                f"missing fields {sorted(missing)}"
            )
        out.append(KnownDifference(**{k: str(v) for k, v in entry.items()}))
    return out


def unlisted(
    scenario: str, differences: Iterable[Difference], known: Iterable[KnownDifference]
) -> list[Difference]:
    known = list(known)
    return [d for d in differences if not any(k.matches(scenario, d) for k in known)]


def headings(markdown: str) -> set[str]:
    """Every heading text of a Markdown document, and every bold lead-in of a list item."""
    out = {m.group(1).strip() for m in re.finditer(r"^#+\s+(.+)$", markdown, re.M)}
    out |= {m.group(1).strip() for m in re.finditer(r"^- \*\*(.+?)\*\*", markdown, re.M)}
    return out


KNOWN = REPO / "tests" / "parity" / "known_differences.yaml"
