"""Resolution per namespace on the samples catalog and small hand-made catalogs: OLM's choices,
dependencies, and failures explained in plain words (naming the bundles and the fix)."""

from __future__ import annotations

from olm.resolution.model import Candidate, Installed, Source, Wanted
from olm.resolution.resolver import Resolver
from tests.unit.resolution.world import MEMCACHED_API, SAMPLES, samples, want


def test_a_fresh_subscription_gets_the_channel_head() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve([want(channel="alpha")])
    assert decision.ok and decision.chosen["memcached"].bundle == "memcached-operator.v0.0.2"  # type: ignore[union-attr]


def test_the_default_channel_is_used_when_none_is_given() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve([want()])
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.2"  # type: ignore[union-attr]


def test_starting_csv_is_honoured() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="alpha", starting_csv="memcached-operator.v0.0.1")]
    )
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.1"  # type: ignore[union-attr]


def test_an_installed_csv_moves_one_hop_toward_the_head() -> None:
    installed = Installed(
        "memcached-operator.v0.0.1", "memcached-operator", "0.0.1", (MEMCACHED_API,)
    )
    decision = Resolver(samples(), [installed], [SAMPLES]).resolve(
        [want(channel="alpha", installed_csv=installed.csv)]
    )
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.2"  # type: ignore[union-attr]


def test_at_the_head_the_installed_csv_stays() -> None:
    installed = Installed(
        "memcached-operator.v0.0.2", "memcached-operator", "0.0.2", (MEMCACHED_API,)
    )
    decision = Resolver(samples(), [installed], [SAMPLES]).resolve(
        [want(channel="alpha", installed_csv=installed.csv)]
    )
    assert decision.chosen["memcached"] == installed


def test_a_dependency_by_package_brings_the_provider() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want("dashboard", "memcached-dashboard")]
    )
    assert decision.ok
    assert [c.bundle for c in decision.dependencies] == ["memcached-operator.v0.0.2"]


def test_a_dependency_already_installed_is_reused() -> None:
    installed = Installed(
        "memcached-operator.v0.0.1", "memcached-operator", "0.0.1", (MEMCACHED_API,)
    )
    decision = Resolver(samples(), [installed], [SAMPLES]).resolve(
        [
            want("dashboard", "memcached-dashboard"),
            want(installed_csv=installed.csv, channel="alpha"),
        ]
    )
    assert decision.ok and decision.dependencies == []


def test_skip_range_takes_one_hop_over_versions() -> None:
    source = Source("c", "ns")
    base = dict(package="p", channel="stable", source=source, default_channel=True)
    catalog = [
        Candidate("p.v1", version="1.0.0", position=2, **base),  # type: ignore[arg-type]
        Candidate("p.v2", version="2.0.0", replaces="p.v1", position=1, **base),  # type: ignore[arg-type]
        Candidate(
            "p.v3",
            version="3.0.0",
            replaces="p.v2",
            skip_range=">=1.0.0 <3.0.0",
            position=0,
            **base,
        ),  # type: ignore[arg-type]
    ]
    installed = Installed("p.v1", "p", "1.0.0")
    decision = Resolver(catalog, [installed], [source]).resolve(
        [Wanted("s", "p", "c", "ns", channel="stable", installed_csv="p.v1")]
    )
    assert decision.chosen["s"].bundle == "p.v3"  # type: ignore[union-attr]


# ----- failures, in plain words ----------------------------------------------------------------


def test_missing_package() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve([want(package="memcache-operator")])
    message = decision.failures["memcached"]
    assert 'catalog "olm/samples" has no package "memcache-operator"' in message
    assert "Fix spec.name" in message and "memcached-operator" in message


def test_missing_channel() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve([want(channel="stable")])
    message = decision.failures["memcached"]
    assert (
        'has no channel "stable"' in message
        and "channels: alpha" in message
        and "Fix spec.channel" in message
    )


def test_missing_source() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [Wanted("s", "memcached-operator", "nope", "olm")]
    )
    assert 'catalog source "nope" in namespace "olm" does not exist' in decision.failures["s"]


def test_bad_starting_csv() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want(channel="alpha", starting_csv="memcached-operator.v9")]
    )
    assert (
        'no operators found with name "memcached-operator.v9" in channel "alpha"'
        in decision.failures["memcached"]
    )


def test_unsatisfiable_dependency() -> None:
    without_provider = [c for c in samples() if c.package != "memcached-operator"]
    decision = Resolver(without_provider, [], [SAMPLES]).resolve(
        [want("dashboard", "memcached-dashboard")]
    )
    message = decision.failures["dashboard"]
    assert "it wants memcached-dashboard.v0.1.0" in message
    assert "requires" in message and ("memcached-operator" in message or "Memcached" in message)
    assert "Fix: add a CatalogSource that provides" in message


def test_two_providers_of_one_api() -> None:
    other = Source("other", "olm", own_namespace=False)
    rival = Candidate(
        "rival-memcached.v1.0.0",
        "rival-memcached",
        "stable",
        other,
        "1.0.0",
        provides=(MEMCACHED_API,),
        default_channel=True,
    )
    decision = Resolver([*samples(), rival], [], [SAMPLES, other]).resolve(
        [want(channel="alpha"), Wanted("rival", "rival-memcached", "other", "olm")]
    )
    message = decision.failures["rival"]
    assert (
        "only one operator per namespace may provide API Memcached.v1alpha1.cache.example.com"
        in message
    )
    assert "memcached-operator" in message and "rival-memcached" in message
    assert decision.chosen["memcached"].bundle == "memcached-operator.v0.0.2"  # type: ignore[union-attr]


def test_a_csv_installed_without_a_subscription_blocks_a_second_copy() -> None:
    installed = Installed(
        "memcached-operator.v0.0.1", "memcached-operator", "0.0.1", (MEMCACHED_API,)
    )
    decision = Resolver(samples(), [installed], [SAMPLES]).resolve([want(channel="alpha")])
    message = decision.failures["memcached"]
    assert (
        "ClusterServiceVersion memcached-operator.v0.0.1 (package memcached-operator) is already installed here and no Subscription refers to it"
        in message
    )
    assert (
        "Fix: delete ClusterServiceVersion memcached-operator.v0.0.1, or subscribe to it" in message
    )


def test_one_failing_subscription_does_not_stop_the_others() -> None:
    decision = Resolver(samples(), [], [SAMPLES]).resolve(
        [want("broken", package="nope"), want("fine", "memcached-dashboard")]
    )
    assert (
        "broken" in decision.failures
        and decision.chosen["fine"].bundle == "memcached-dashboard.v0.1.0"
    )  # type: ignore[union-attr]
