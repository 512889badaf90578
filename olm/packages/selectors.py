"""Kubernetes label and field selectors, as a list request carries them (`labelSelector=`,
`fieldSelector=`), parsed and matched on plain label dicts.

Label selector grammar (apimachinery's `labels.Parse`): requirements joined by commas, each
`key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (v1,v2)` or
`key notin (v1,v2)`, `key>N` or `key<N` (N an integer; only labels whose value is an
integer greater or less match). A value may be empty (`key=`). `!=` and `notin` match objects
without the key. Field selectors as apimachinery's `fields.ParseSelector` reads them (its error
wording too): `field=value`, `field==value`, `field!=value`, joined by commas, backslash
escapes in values.

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
_ORDER = re.compile(rf"^\s*({_KEY})\s*([<>])\s*({_VALUE})\s*$")


class SelectorError(ValueError):
    """A selector that does not parse: answered 400 BadRequest."""

    code = 400
    reason = "BadRequest"


class UnsupportedSelector(SelectorError):
    """A selector that parses but is not served (packageserver's storage refuses it with a
    plain error, which the API machinery answers as 500 with no reason)."""

    code = 500
    reason = ""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: str  # in | notin | exists | ! | gt | lt
    values: frozenset[str] = frozenset()
    bound: int = 0  # gt and lt

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "exists":
            return present
        if self.operator == "!":
            return not present
        if self.operator == "in":
            return present and labels[self.key] in self.values
        if self.operator in ("gt", "lt"):
            try:
                value = int(labels[self.key]) if present else None
            except ValueError:
                return False
            if value is None:
                return False
            return value > self.bound if self.operator == "gt" else value < self.bound
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
        elif m := _ORDER.match(part):
            try:
                bound = int(m.group(3))
            except ValueError:
                raise SelectorError(
                    f'unable to parse requirement "{part.strip()}" of labelSelector: for '
                    "'Gt', 'Lt' operators, the value must be an integer"
                ) from None
            operator = "gt" if m.group(2) == ">" else "lt"
            found.append(Requirement(m.group(1), operator, bound=bound))
        else:
            raise SelectorError(
                f'unable to parse requirement "{part.strip()}" of labelSelector: expected '
                "key, !key, key=value, key!=value, key in (a,b), key notin (a,b), key>N or key<N"
            )
    return tuple(found)


def matches(requirements: tuple[Requirement, ...], labels: Mapping[str, str]) -> bool:
    return all(requirement.matches(labels) for requirement in requirements)


def _field_terms(text: str) -> list[str]:
    """Split on commas not escaped by a backslash (apimachinery's `splitTerms`)."""
    terms, start, escaped = [], 0, False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == ",":
            terms.append(text[start:index])
            start = index + 1
    return [*terms, text[start:]] if text else []


def _unescape(value: str) -> str:
    out, escaped = [], False
    for char in value:
        if escaped:
            if char not in "\\,=":
                raise SelectorError(f"invalid field selector: invalid escape sequence: \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char in ",=":
            # Go prints the rune as its number (`%v` of a rune).
            raise SelectorError(
                f"invalid field selector: unescaped character in value: {ord(char)}"
            )
        else:
            out.append(char)
    if escaped:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def parse_fields(text: str) -> tuple[tuple[str, str, str], ...]:
    """(field, operator, value) of a field selector, as apimachinery's `fields.ParseSelector`
    reads it: terms sorted, split at the first `!=`, `==` or `=` (nothing trimmed), values
    unescaped (`\\\\`, `\\,`, `\\=`); operator is `=` (for `=` and `==`) or `!=`."""
    found = []
    for term in sorted(_field_terms(text or "")):
        if not term:
            continue
        split = next(
            (
                (term[:i], op, term[i + len(op) :])
                for i in range(len(term))
                for op in ("!=", "==", "=")
                if term.startswith(op, i)
            ),
            None,
        )
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{term}'")
        field, operator, value = split
        found.append((field, "!=" if operator == "!=" else "=", _unescape(value)))
    return tuple(found)
