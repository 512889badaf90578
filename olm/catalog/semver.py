"""Semantic versions and ranges exactly as OLM reads them (blang/semver v4).

- `Version` is python-semver's (the `semver` library): it decides what is a version and how
  two compare (semver 2.0.0 precedence: a pre-release is below its release, numeric
  identifiers below alphanumeric ones, build metadata ignored), as blang does.
- `parse_version`: strict `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, no leading zeros, no `v`; a
  refusal says why in blang's words (users read them in `olm catalog validate` and in
  Subscription conditions).
- `parse_tolerant`: what OLM uses for versions being *tested* (trims spaces, strips one leading
  `v`, strips leading zeros, pads a missing minor/patch unless the short form has `-`/`+`).
- `parse_range`: `olm.skipRange` and dependency ranges, blang's grammar kept here because no
  library speaks it (python-semver's `match` takes one comparator; npm-style libraries add
  `~`, `^`, hyphen ranges and pre-release exclusion, which OLM does not have). Comparators
  `<`, `<=`, `>`, `>=`, `=`, `==`, none, `!`, `!=`; space-separated terms AND, `||` OR; `x`
  wildcards; no `~`, `^`, `*`, hyphen ranges or brackets. Matching is plain precedence (a
  pre-release is below its release, no npm-style pre-release exclusion, build metadata
  ignored).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from semver import Version as Version


class SemverError(ValueError):
    pass


_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")


def parse_version(text: str) -> Version:
    """Strict semver 2.0.0, as blang's `Parse`."""
    try:
        return Version.parse(text)
    except ValueError:
        raise SemverError(_refusal(text)) from None


def _refusal(text: str) -> str:
    """Why blang's `Parse` refuses `text`, in its words and in its order of checks."""
    if not text:
        return "Version string empty"
    core, plus, build_text = text.partition("+")
    core, dash, pre_text = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3:
        return f"No Major.Minor.Patch elements found in {text!r}"
    for name, part in zip(("major", "minor", "patch"), parts, strict=True):
        if not part.isdigit() or not part.isascii():
            return f"Invalid character(s) found in {name} number {part!r}"
        if len(part) > 1 and part.startswith("0"):
            return f"{name.capitalize()} number must not contain leading zeroes {part!r}"
    for identifier in pre_text.split(".") if dash else ():
        if not identifier or not _IDENTIFIER.fullmatch(identifier):
            return f"Invalid character(s) found in prerelease {identifier!r}"
        if identifier.isdigit() and len(identifier) > 1 and identifier.startswith("0"):
            return f"Numeric PreRelease version must not contain leading zeroes {identifier!r}"
    for identifier in build_text.split(".") if plus else ():
        if not identifier or not _IDENTIFIER.fullmatch(identifier):
            return f"Invalid character(s) found in build meta data {identifier!r}"
    return f"{text!r} is not a semantic version"


def parse_tolerant(text: str) -> Version:
    """blang's `ParseTolerant`, used by OLM for installed and catalog versions."""
    text = text.strip().removeprefix("v")
    core_end = len(text)
    for marker in ("-", "+"):
        index = text.find(marker)
        if index != -1:
            core_end = min(core_end, index)
    core, rest = text[:core_end], text[core_end:]
    parts = core.split(".")
    if len(parts) > 3:
        raise SemverError(f"Too many dots in {text!r}")
    parts = [p.lstrip("0") or "0" if p.isdigit() else p for p in parts]
    if len(parts) < 3:
        if rest:
            raise SemverError(f"Short version cannot contain PreRelease/Build meta data: {text!r}")
        parts += ["0"] * (3 - len(parts))
    return parse_version(".".join(parts) + rest)


Predicate = Callable[[Version], bool]


def _comparator(operator: str, bound: Version) -> Predicate:
    table: dict[str, Predicate] = {
        "": lambda v: v.compare(bound) == 0,
        "=": lambda v: v.compare(bound) == 0,
        "==": lambda v: v.compare(bound) == 0,
        "!": lambda v: v.compare(bound) != 0,
        "!=": lambda v: v.compare(bound) != 0,
        ">": lambda v: v.compare(bound) > 0,
        ">=": lambda v: v.compare(bound) >= 0,
        "<": lambda v: v.compare(bound) < 0,
        "<=": lambda v: v.compare(bound) <= 0,
    }
    if operator not in table:
        raise SemverError(f"Could not parse comparator {operator!r} in {operator}{bound}")
    return table[operator]


def _split_operator(token: str) -> tuple[str, str]:
    for index, char in enumerate(token):
        if char.isdigit():
            return token[:index], token[index:]
    return token, ""


def _flat_wildcard(version: str) -> str:
    """blang's createVersionFromWildcard: 1.x.x -> 1.0.0 (sic), 1.2.x -> 1.2.0, 1.x -> 1.0.0."""
    flat = version.replace(".x.x", ".x", 1).replace(".x", ".0", 1)
    return flat + ".0" if len(flat.split(".")) == 2 else flat


def _bump(version: str, part: int) -> str:
    numbers = version.split(".")
    numbers[part] = str(int(numbers[part]) + 1)
    return ".".join(numbers[: part + 1] + ["0"] * (2 - part))


def _expand_wildcard(token: str) -> list[str]:
    """blang's expandWildcardVersion for one token containing `x` (its quirks included)."""
    operator, version = _split_operator(token)
    if not version:
        raise SemverError(f"Could not get version from string: {token!r}")
    parts = version.split(".")
    kind = {2: "minor", 3: "patch"}.get(len(parts)) if parts[-1] == "x" else None
    flat = _flat_wildcard(version)
    expanded: list[str] = []
    if operator in (">",):
        result, bump = ">=", True
    elif operator == ">=":
        result, bump = ">=", False
    elif operator == "<":
        result, bump = "<", False
    elif operator == "<=":
        result, bump = "<", True
    elif operator in ("", "=", "=="):
        expanded.append(">=" + flat)
        result, bump = "<", True
    elif operator in ("!=", "!"):
        expanded.append("<" + flat)  # AND-ed with the next: blang's != wildcard matches nothing
        result, bump = ">=", True
    else:
        raise SemverError(f"Could not parse comparator {operator!r} in {token!r}")
    if not bump:
        bound = flat
    elif kind == "patch":
        bound = _bump(flat, 1)
    elif kind == "minor":
        bound = _bump(flat, 0)
    else:
        bound = ""
    expanded.append(result + bound)
    return expanded


def _tokens(text: str) -> list[str]:
    """blang's splitAndTrim: split on spaces unless the last non-space char is <, > or =;
    pieces of one character are dropped; inner spaces are removed."""
    tokens: list[str] = []
    last = 0
    last_char = ""
    for index, char in enumerate(text):
        if char == " " and last_char not in ("<", ">", "="):
            if last < index - 1:
                tokens.append(text[last:index])
            last = index + 1
        elif char != " ":
            last_char = char
    if last < len(text) - 1:
        tokens.append(text[last:])
    return [token.replace(" ", "") for token in tokens]


@dataclass(frozen=True)
class Range:
    text: str
    alternatives: tuple[tuple[Predicate, ...], ...]

    def __call__(self, version: Version) -> bool:
        return any(all(p(version) for p in group) for group in self.alternatives)

    def contains(self, version: str | Version) -> bool:
        return self(parse_tolerant(version) if isinstance(version, str) else version)


def parse_range(text: str) -> Range:
    """blang's `ParseRange`, with its error messages' gist."""
    tokens = _tokens(text)
    if not tokens:  # blang reports an empty range (e.g. "" or "*") this way
        raise SemverError("Last element in range is '||'")
    if tokens[0] == "||":
        raise SemverError("First element in range is '||'")
    if tokens[-1] == "||":
        raise SemverError("Last element in range is '||'")
    groups: list[tuple[Predicate, ...]] = []
    current: list[Predicate] = []
    for token in tokens:
        if token == "||":
            groups.append(tuple(current))
            current = []
            continue
        expanded = _expand_wildcard(token) if "x" in token else [token]
        for plain in expanded:
            operator, version = _split_operator(plain)
            if not version and "x" not in token:
                raise SemverError(f"Could not get version from string: {plain!r}")
            try:
                bound = parse_version(version)
            except SemverError as exc:
                raise SemverError(
                    f"Could not parse Range {text!r}: Could not parse version {version!r} in {plain!r}: {exc}"
                ) from exc
            current.append(_comparator(operator, bound))
    groups.append(tuple(current))
    return Range(text, tuple(groups))
