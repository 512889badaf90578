"""Kubernetes label and field selectors, as a list request carries them (`labelSelector=`,
`fieldSelector=`), parsed and matched on plain label dicts.

Label selector grammar (apimachinery's `labels.Parse`): requirements joined by commas, each
`key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)` or
`key notin (v1,v2)`. A value may be empty (`key=`). `!=` and `notin` match objects without
the key. Field selectors: `field=value`, `field==value`, `field!=value`, joined by commas.

Invariant: a selector that does not parse raises `SelectorError` whose message names the
fragment and the expected form (the API answers 400 with it); nothing else raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_VALUE = r"[-A-Za-z0-9_.]*"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(([^)]*)\)\s*$")
_COMPARE = re.compile(rf"^\s*({_KEY})\s*(==|!=|=)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")


class SelectorError(ValueError):
    """A selector that does not parse."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # in | notin | exists | !
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator == "in":
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # notin


def _split(text: str) -> list[str]:
    """Split on commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part for part in parts if part.strip()]


def parse_labels(text: str) -> tuple[Requirement, ...]:
    """The requirements of a label selector ("" selects everything)."""
    found = []
    for part in _split(text or ""):
        if m := _SET.match(part):
            values = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            found.append(Requirement(m.group(1), m.group(2), values))
        elif m := _COMPARE.match(part):
            operator = "notin" if m.group(2) == "!=" else "in"
            found.append(Requirement(m.group(1), operator, frozenset({m.group(3)})))
        elif m := _EXISTS.match(part):
            found.append(Requirement(m.group(2), "!" if m.group(1) else "exists"))
        else:
            raise SelectorError(
                f'unable to parse requirement "{part.strip()}" of labelSelector: expected '
                "key, !key, key=value, key!=value, key in (a,b) or key notin (a,b)"
            )
    return tuple(found)


def matches(requirements: tuple[Requirement, ...], labels: Mapping[str, str]) -> bool:
    return all(requirement.matches(labels) for requirement in requirements)


def parse_fields(text: str) -> tuple[tuple[str, str, str], ...]:
    """(field, operator, value) of a field selector; operator is `=` or `!=`."""
    found = []
    for part in _split(text or ""):
        m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(==|!=|=)\s*([^,]*?)\s*$", part)
        if m is None:
            raise SelectorError(
                f'invalid fieldSelector "{part.strip()}": expected field=value or field!=value'
            )
        found.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return tuple(found)
