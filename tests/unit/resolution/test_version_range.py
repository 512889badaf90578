"""olm-py's version range (beyond OLM): the annotation's syntax, the resolver keeping a
Subscription inside it, and what the Subscription is told about the versions held back."""

from __future__ import annotations

import pytest

from olm.catalog.semver import SemverError
from olm.resolution.model import Installed
from olm.resolution.resolver import Resolver
from olm.resolution.versionrange import (
    expand_shorthands,
    held_back,
    in_range,
    parse_version_range,
)
from tests.unit.resolution.world import MEMCACHED_API, SAMPLES, samples, want

V003 = Installed("memcached-operator.v0.0.3", "memcached-operator", "0.0.3", (MEMCACHED_API,))
V001 = Installed("memcached-operator.v0.0.1", "memcached-operator", "0.0.1", (MEMCACHED_API,))


@pytest.mark.parametrize(
    ("text", "expanded"),
    [
        ("~1.2.3", ">=1.2.3 <1.3.0"),
        ("~1.2", ">=1.2.0 <1.3.0"),
        ("~1", ">=1.0.0 <2.0.0"),
        ("^1.2.3", ">=1.2.3 <2.0.0"),
        ("^0.2.3", ">=0.2.3 <0.3.0"),
        ("^0.0.3", ">=0.0.3 <0.0.4"),
        ("^0", ">=0.0.0 <1.0.0"),
        (">=16.0.0 <17.0.0", ">=16.0.0 <17.0.0"),
        ("~1.2 || ^3.0.0", ">=1.2.0 <1.3.0 || >=3.0.0 <4.0.0"),
    ],
)
def test_shorthands_are_written_out_in_olms_range_syntax(text: str, expanded: str) -> None:
    assert expand_shorthands(text) == expanded


@pytest.mark.parametrize(
    ("text", "inside", "outside"),
    [
        (">=16.0.0 <17.0.0", "16.1.0", "17.0.0"),
        ("~1.2", "1.2.9", "1.3.0"),
        ("^0.0.3", "0.0.3", "0.0.4"),
        ("1.2.x", "1.2.7", "1.3.0"),
    ],
)
def test_a_range_contains_what_it_says(text: str, inside: str, outside: str) -> None:
    version_range = parse_version_range(text)
    assert version_range.contains(inside) and not version_range.contains(outside)


@pytest.mark.parametrize("text", ["", "   ", "weekly", ">=1.0.0 <=", "~banana"])
def test_a_value_that_is_not_a_range_is_refused(text: str) -> None:
    with pytest.raises(SemverError):
        parse_version_range(text)


def test_held_back_lists_newer_versions_outside_newest_first_once() -> None:
    version_range = parse_version_range("<0.1.0")
    versions = ["0.0.1", "0.0.2", "0.1.0", "0.2.0", "0.2.0", "not-a-version"]
    assert held_back(version_range, "0.0.2", versions) == ["0.2.0", "0.1.0"]
    assert held_back(version_range, "0.2.0", versions) == []


def test_an_installed_csv_is_held_at_the_top_of_its_range() -> None:
    decision = Resolver(samples(), [V003], [SAMPLES]).resolve(
        [want(channel="beta", installed_csv=V003.csv, version_range=">=0.0.1 <0.1.0")]
    )
    assert decision.ok and decision.chosen["memcached"] == V003
    reason, message = decision.version_holds["memcached"]
    assert reason == "OutsideVersionRange"
    assert "holds back 0.1.0 of package memcached-operator" in message
    assert "on memcached-operator.v0.0.3 0.0.3" in message
    assert "olm-py.io/version-range-" in message  # how to take it


def test_an_upgrade_inside_the_range_goes_ahead_and_says_nothing_is_held() -> None:
    decision = Resolver(samples(), [V001], [SAMPLES]).resolve(
        [want(channel="alpha", installed_csv=V001.csv, version_range="~0.0")]
    )
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.2"  # type: ignore[union-attr]
    assert decision.version_holds["memcached"][0] == "WithinVersionRange"


def test_a_new_subscription_gets_the_newest_bundle_in_range_not_the_head() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="beta", version_range="<0.1.0")]
    )
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.3"  # type: ignore[union-attr]
    assert "holds back 0.1.0" in decision.version_holds["memcached"][1]


def test_a_starting_csv_outside_the_range_is_refused_with_the_fix() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="beta", starting_csv="memcached-operator.v0.1.0", version_range="<0.1.0")]
    )
    failure = decision.failures["memcached"]
    assert "spec.startingCSV memcached-operator.v0.1.0 (version 0.1.0) is outside" in failure
    assert "kubectl annotate subscription memcached --overwrite" in failure


def test_a_range_that_leaves_nothing_names_the_versions_there() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="beta", version_range=">=2.0.0")]
    )
    failure = decision.failures["memcached"]
    assert (
        "is within its olm-py.io/version-range '>=2.0.0' (versions there: 0.1.0, 0.0.3)" in failure
    )


def test_a_bad_range_holds_an_installed_subscription_and_says_why() -> None:
    decision = Resolver(samples(), [V001], [SAMPLES]).resolve(
        [want(channel="alpha", installed_csv=V001.csv, version_range="weekly")]
    )
    assert decision.ok and decision.chosen["memcached"] == V001
    reason, message = decision.version_holds["memcached"]
    assert reason == "InvalidVersionRange"
    assert "olm-py.io/version-range='weekly' is not a version range" in message
    assert "keeps memcached on memcached-operator.v0.0.1" in message


def test_a_bad_range_installs_nothing_new() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="alpha", version_range="weekly")]
    )
    assert "memcached" not in decision.chosen
    assert "is not a version range" in decision.failures["memcached"]


def test_without_a_range_nothing_is_said() -> None:
    decision = Resolver(samples(), [V003], [SAMPLES]).resolve(
        [want(channel="beta", installed_csv=V003.csv)]
    )
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.1.0"  # type: ignore[union-attr]
    assert decision.version_holds == {}


@pytest.mark.parametrize(
    ("text", "version", "inside"),
    [
        (">=16.0.0 <17.0.0", "17.0.0-rc.1", False),
        ("^1.2.3", "2.0.0-alpha.1", False),
        (">=16.0.0 <17.0.0", "16.5.0-rc.1", False),
        (">=17.0.0-rc.0 <18.0.0", "17.0.0-rc.1", True),
    ],
)
def test_a_prerelease_is_in_a_range_only_when_the_range_names_one(
    text: str, version: str, inside: bool
) -> None:
    assert in_range(parse_version_range(text), version) is inside
