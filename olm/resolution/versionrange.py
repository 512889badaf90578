"""A Subscription's version range (olm-py's `olm-py.io/version-range` annotation, beyond OLM).

The range is OLM's own range syntax (blang/semver, as in `olm.skipRange` and
`olm.package.required`: `>=16.0.0 <17.0.0`, `1.2.x`, `<2.0.0 || >=3.0.0`), plus the two
shorthands users bring from npm and Helm, expanded before parsing:

- `~1.2.3` is `>=1.2.3 <1.3.0`, `~1.2` is `>=1.2.0 <1.3.0`, `~1` is `>=1.0.0 <2.0.0`;
- `^1.2.3` is `>=1.2.3 <2.0.0`, `^0.2.3` is `>=0.2.3 <0.3.0`, `^0.0.3` is `>=0.0.3 <0.0.4`.

A prerelease (`17.0.0-rc.1`) is in a range only when the range names a prerelease, as in npm:
blang alone would let `17.0.0-rc.1` into `<17.0.0`, the opposite of what a pin means.

Invariants: pure; a range that does not parse raises SemverError with a message naming the
annotation's value; `held_back` lists only versions newer than the current one, newest first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from olm.api.versionpolicy import VERSION_RANGE_ANNOTATION, VersionHeldReason
from olm.catalog.semver import Range, SemverError, parse_range, parse_tolerant
from olm.resolution.model import Candidate, Installed, Wanted

_SHORTHAND = re.compile(r"^([~^])\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?$")


def _expand(token: str) -> str:
    """One `~`/`^` token as a blang range, or the token unchanged."""
    found = _SHORTHAND.match(token)
    if found is None:
        return token
    kind, major_text, minor_text, patch_text = found.groups()
    major, minor, patch = int(major_text), int(minor_text or 0), int(patch_text or 0)
    low = f">={major}.{minor}.{patch}"
    if kind == "~":
        high = f"<{major}.{minor + 1}.0" if minor_text is not None else f"<{major + 1}.0.0"
    elif major or minor_text is None:
        high = f"<{major + 1}.0.0"
    elif minor or patch_text is None:
        high = f"<0.{minor + 1}.0"
    else:
        high = f"<0.0.{patch + 1}"
    return f"{low} {high}"


def expand_shorthands(text: str) -> str:
    """`text` with every `~x.y.z` and `^x.y.z` written out in blang's syntax."""
    alternatives = [part.strip() for part in text.split("||")]
    expanded = [" ".join(_expand(token) for token in part.split()) for part in alternatives]
    return " || ".join(expanded)


def parse_version_range(text: str) -> Range:
    """The range an annotation value means; SemverError says why when it is not one."""
    stripped = text.strip()
    if not stripped:
        raise SemverError("the value is empty")
    try:
        return parse_range(expand_shorthands(stripped))
    except SemverError as exc:
        raise SemverError(str(exc)) from None


def in_range(version_range: Range, version: str) -> bool:
    """Whether `version` is in the range; a prerelease only when the range itself names a
    prerelease (npm's rule: `<17.0.0` must not let 17.0.0-rc.1 in)."""
    try:
        parsed = parse_tolerant(version)
    except SemverError:
        return False  # a bundle whose version does not parse is never in a range
    if parsed.prerelease and not _names_prerelease(version_range.text):
        return False
    return version_range(parsed)


def _names_prerelease(text: str) -> bool:
    return any("-" in token.lstrip("<>=!~^") for token in text.split())


def held_back(version_range: Range, current: str, versions: Iterable[str]) -> list[str]:
    """The versions newer than `current` (any, when "") that the range leaves out, newest
    first, each once."""
    try:
        floor = parse_tolerant(current) if current else None
    except SemverError:
        floor = None
    newer = []
    for text in set(versions):
        try:
            version = parse_tolerant(text)
        except SemverError:
            continue
        if (floor is None or version > floor) and not in_range(version_range, text):
            newer.append(version)
    return [str(v) for v in sorted(newer, reverse=True)]


# ----- the resolver's use: narrowing a Subscription's options, saying what is held -----------


def _fix(name: str, example: str) -> str:
    return (
        f"kubectl annotate subscription {name} --overwrite {VERSION_RANGE_ANNOTATION}='{example}'"
    )


def restrict(
    wanted: Wanted, pool: Sequence[Candidate], installed: bool
) -> tuple[list[Candidate] | None, str]:
    """The Subscription's channel `pool` narrowed to its range: (candidates, "") or ([], why
    it has none); (None, "") when the range does not parse and something is installed (the
    Subscription then stays where it is)."""
    try:
        allowed = parse_version_range(wanted.version_range)
    except SemverError as exc:
        if installed:
            return None, ""
        return [], (
            f"its annotation {VERSION_RANGE_ANNOTATION}={wanted.version_range!r} is not a "
            f"version range ({exc}). Fix: {_fix(wanted.name, '>=1.0.0 <2.0.0')}"
        )
    kept = [c for c in pool if in_range(allowed, c.version)]
    if installed or kept:
        if wanted.starting_csv and not installed:
            start = next((c for c in pool if c.bundle == wanted.starting_csv), None)
            if start is not None and start not in kept:
                return [], (
                    f"its spec.startingCSV {start.bundle} (version {start.version}) is outside "
                    f"its {VERSION_RANGE_ANNOTATION} {wanted.version_range!r}. Fix the one or "
                    f"the other, e.g. {_fix(wanted.name, f'>={start.version}')}"
                )
        return kept, ""
    there = held_back(allowed, "", (c.version for c in pool))
    example = f">={there[-1]}" if there else ">=0.0.0"
    return [], (
        f"no bundle of package {wanted.package!r} in its channel is within its "
        f"{VERSION_RANGE_ANNOTATION} {wanted.version_range!r} (versions there: "
        f"{', '.join(there) or 'none'}). Fix: {_fix(wanted.name, example)}"
    )


def hold(
    wanted: Wanted, current: Candidate | Installed, pool: Sequence[Candidate]
) -> tuple[str, str]:
    """(VersionHeldReason, message) for a Subscription with a range, once resolved to `current`."""
    name = current.bundle if isinstance(current, Candidate) else current.csv
    where = f"package {wanted.package} in catalog {wanted.source_namespace}/{wanted.source}"
    if wanted.channel:
        where += f", channel {wanted.channel}"
    try:
        allowed = parse_version_range(wanted.version_range)
    except SemverError as exc:
        return VersionHeldReason.INVALID_VERSION_RANGE.value, (
            f"{VERSION_RANGE_ANNOTATION}={wanted.version_range!r} is not a version range "
            f"({exc}): olm-py keeps {wanted.name} on {name} {current.version} and installs "
            f"nothing new until it is fixed. Fix: {_fix(wanted.name, '>=' + current.version)}"
        )
    held = held_back(allowed, current.version, (c.version for c in pool))
    if not held:
        return VersionHeldReason.WITHIN_VERSION_RANGE.value, (
            f"no newer version of {where} is outside {VERSION_RANGE_ANNOTATION} "
            f"{wanted.version_range!r}; on {name} {current.version}"
        )
    return VersionHeldReason.OUTSIDE_VERSION_RANGE.value, (
        f"{VERSION_RANGE_ANNOTATION} {wanted.version_range!r} holds back "
        f"{', '.join(held)} of {where}; on {name} {current.version}. To take "
        f"{'them' if len(held) > 1 else 'it'}, widen the range "
        f"({_fix(wanted.name, '>=' + current.version + ' <=' + held[0])}) "
        f"or remove it (kubectl annotate subscription {wanted.name} {VERSION_RANGE_ANNOTATION}-)"
    )
