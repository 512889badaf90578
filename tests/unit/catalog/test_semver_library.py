"""olm.catalog.semver on python-semver keeps blang/semver v4's behaviour where the two
libraries could differ: strictness, messages, build metadata, pre-release precedence."""

from __future__ import annotations

import pytest

from olm.catalog.semver import SemverError, Version, parse_range, parse_tolerant, parse_version


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Version string empty"),
        ("v1.0.0", "Invalid character(s) found in major number 'v1'"),
        ("1.0", "No Major.Minor.Patch elements found"),
        ("1.0.0.0", "No Major.Minor.Patch elements found"),
        ("01.0.0", "Major number must not contain leading zeroes '01'"),
        ("1.00.0", "Minor number must not contain leading zeroes '00'"),
        # Python's `$` would let a trailing newline through; blang refuses it
        ("1.0.0\n", "Invalid character(s) found in patch number '0\\n'"),
        # non-ASCII digits are digits to Python's str.isdigit and int(), not to blang
        ("\u0661.0.0", "Invalid character(s) found in major number"),
        (" 1.0.0", "Invalid character(s) found in major number"),
        ("1.0.0-", "Invalid character(s) found in prerelease ''"),
        ("1.0.0-a..b", "Invalid character(s) found in prerelease ''"),
        ("1.0.0-a_b", "Invalid character(s) found in prerelease 'a_b'"),
        ("1.0.0-01", "Numeric PreRelease version must not contain leading zeroes '01'"),
        ("1.0.0+", "Invalid character(s) found in build meta data ''"),
        ("1.0.0+a+b", "Invalid character(s) found in build meta data 'a+b'"),
    ],
)
def test_strict_refusals_say_why_in_blangs_words(text: str, message: str) -> None:
    with pytest.raises(SemverError) as refused:
        parse_version(text)
    assert message in str(refused.value)


@pytest.mark.parametrize(
    "text", ["0.0.0", "1.0.0-0a", "1.0.0-a-b.c-d", "1.0.0+001.b-c", "1.0.0-0.0+0", "10.20.30"]
)
def test_strict_versions_print_as_written(text: str) -> None:
    assert str(parse_version(text)) == text


def test_build_metadata_is_ignored_by_precedence_and_hash_but_kept_in_text() -> None:
    plain, built = parse_version("1.0.0"), parse_version("1.0.0+build.5")
    assert plain == built and hash(plain) == hash(built) and not plain < built
    assert str(built) == "1.0.0+build.5" and built.build == "build.5"
    assert len({plain, built, parse_version("1.0.0+other")}) == 1


def test_prerelease_precedence_is_semver_2s() -> None:
    ordered = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    versions = [parse_version(text) for text in ordered]
    assert sorted(reversed(versions)) == versions
    assert [str(v) for v in sorted(versions, reverse=True)] == list(reversed(ordered))


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("1.0.0-9", "1.0.0-10"),  # numeric identifiers compare as numbers
        ("1.0.0-99999999999999999999", "1.0.0-100000000000000000000"),
        ("1.0.0-999", "1.0.0-0a"),  # numeric below alphanumeric
        ("1.0.0-Z", "1.0.0-a"),  # ASCII order, as Go compares strings
        ("1.0.0-a", "1.0.0-a.0"),  # more identifiers, higher
        ("1.0.0-rc.1", "1.0.0"),
        ("1.9.9", "1.10.0"),
    ],
)
def test_order(lower: str, higher: str) -> None:
    assert parse_version(lower) < parse_version(higher)
    assert parse_version(higher).compare(parse_version(lower)) == 1


def test_a_version_can_be_built_from_numbers() -> None:
    assert Version(0, 0, 0) == parse_version("0.0.0") < parse_version("0.0.1-0")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v01.002.0003", "1.2.3"), ("\t1\n", "1.0.0"), ("v0.0.0-0+0", "0.0.0-0+0"), ("00.1", "0.1.0")],
)
def test_tolerant_versions(text: str, expected: str) -> None:
    assert str(parse_tolerant(text)) == expected


@pytest.mark.parametrize("text", ["vv1.0.0", "1.2.3.4", "1-rc", "1.0.0-01", "", "v"])
def test_tolerant_refusals(text: str) -> None:
    with pytest.raises(SemverError):
        parse_tolerant(text)


def test_range_bounds_with_build_metadata_compare_without_it() -> None:
    assert parse_range("=1.0.0+a").contains("1.0.0+b")
    assert not parse_range(">1.0.0+a").contains("1.0.0")
