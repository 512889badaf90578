"""olm.skipRange grammar, exactly blang/semver v4's ParseRange (catalog-formats.md §4.4)."""

from __future__ import annotations

import pytest

from olm.catalog.semver import SemverError, parse_range, parse_tolerant, parse_version

MATCHES = [
    # plain comparators
    (">=1.0.0", "1.0.0", True),
    (">=1.0.0", "0.9.9", False),
    (">1.0.0", "1.0.0", False),
    (">1.0.0", "1.0.1", True),
    ("<1.0.0", "0.9.9", True),
    ("<1.0.0", "1.0.0", False),
    ("<=1.0.0", "1.0.0", True),
    ("=1.0.0", "1.0.0", True),
    ("==1.0.0", "1.0.0", True),
    ("1.0.0", "1.0.0", True),
    ("1.0.0", "1.0.1", False),
    ("!1.0.0", "1.0.0", False),
    ("!=1.0.0", "1.0.1", True),
    # AND, OR, spaces after operators
    (">=1.0.0 <2.0.0", "1.5.0", True),
    (">=1.0.0 <2.0.0", "2.0.0", False),
    (">= 1.0.0 < 2.0.0", "1.9.9", True),
    ("<1.0.0 || >=2.0.0", "1.5.0", False),
    ("<1.0.0 || >=2.0.0", "2.0.0", True),
    (">=1.0.0 <1.1.0 || >=2.0.0 <2.1.0", "2.0.5", True),
    (">=1.0.0 <1.1.0 || >=2.0.0 <2.1.0", "1.5.0", False),
    # pre-releases: plain precedence, no npm-style exclusion
    ("<1.0.3", "1.0.3-rc.1", True),
    (">=1.0.0", "1.0.0-alpha", False),
    (">=0.2.0-0 <0.3.1-0", "0.3.0", True),
    (">=0.2.0-0 <0.3.1-0", "0.3.1", False),
    (">=0.2.0-0 <0.3.1-0", "0.2.0-alpha", True),
    ("<1.0.0-beta", "1.0.0-alpha", True),
    ("<1.0.0-alpha.2", "1.0.0-alpha.10", False),
    ("<1.0.0-alpha.beta", "1.0.0-alpha.1", True),
    # build metadata is ignored
    ("=1.0.0", "1.0.0+build.5", True),
    (">1.0.0", "1.0.0+build.5", False),
    # wildcards
    ("1.2.x", "1.2.9", True),
    ("1.2.x", "1.3.0", False),
    ("=1.2.x", "1.2.0", True),
    (">=1.2.x", "1.2.0", True),
    (">1.2.x", "1.2.9", False),
    (">1.2.x", "1.3.0", True),
    ("<1.2.x", "1.1.9", True),
    ("<1.2.x", "1.2.0", False),
    ("<=1.2.x", "1.2.99", True),
    ("<=1.2.x", "1.3.0", False),
    ("!=1.2.x", "1.2.5", False),
    ("!=1.2.x", "1.3.0", False),  # quirk: blang ANDs <1.2.0 and >=1.3.0, so nothing matches
    ("!=1.2.x", "1.1.0", False),
    (">=1.0.0-xyz", "1.0.0-xyz", True),  # an x in a pre-release takes the wildcard path, harmlessly
    ("1.x", "1.9.9", True),
    ("1.x", "2.0.0", False),
    (">1.x", "2.0.0", True),
    ("1.x.x", "1.0.5", True),  # quirk: 1.x.x is 1.0.x
    ("1.x.x", "1.1.0", False),
    # a hyphen "range" is =1.0.0 AND =2.0.0 (the lone "-" is dropped): it matches nothing
    ("1.0.0 - 2.0.0", "1.5.0", False),
    ("1.0.0 - 2.0.0", "1.0.0", False),
    # a space after "!=" does not split (its last character is "=")
    (">=1.0.0 != 1.5.0", "1.5.0", False),
    (">=1.0.0 != 1.5.0", "1.6.0", True),
    # tested versions are parsed tolerantly
    (">=1.0.0 <2.0.0", "v1.2", True),
    ("<2.0.0", " 1.9.9 ", True),
]


@pytest.mark.parametrize(("expression", "version", "expected"), MATCHES)
def test_range_matching(expression: str, version: str, expected: bool) -> None:
    assert parse_range(expression).contains(version) is expected


ERRORS = [
    ("~1.2.0", "comparator"),
    ("^1.2.0", "comparator"),
    ("*", "Last element in range is '||'"),  # one-character tokens are dropped: an empty range
    ("|| >=1.0.0", "First element in range is '||'"),
    (">=1.0.0 ||", "Last element in range is '||'"),
    (">=1.0", "Could not parse"),
    (">=01.0.0", "leading zeroes"),
    ("1.X", "Could not"),
    ("", "Last element in range is '||'"),
    (">=v1.0.0", "comparator"),
]


@pytest.mark.parametrize(("expression", "fragment"), ERRORS)
def test_range_errors(expression: str, fragment: str) -> None:
    with pytest.raises(SemverError, match=fragment):
        parse_range(expression)


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("1.0.0", True),
        ("1.0.0-rc.1+build", True),
        ("v1.0.0", False),
        ("1.0", False),
        ("1.0.0-01", False),
        ("1.0.0+", False),
    ],
)
def test_strict_versions(text: str, ok: bool) -> None:
    if ok:
        assert str(parse_version(text)) == text
    else:
        with pytest.raises(SemverError):
            parse_version(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1.2", "1.2.0"), ("01.02.03", "1.2.3"), (" 2 ", "2.0.0"), ("1.2.3-rc.1", "1.2.3-rc.1")],
)
def test_tolerant_versions(text: str, expected: str) -> None:
    assert str(parse_tolerant(text)) == expected


def test_short_tolerant_version_with_prerelease_is_refused() -> None:
    with pytest.raises(SemverError):
        parse_tolerant("1.2-rc.1")
