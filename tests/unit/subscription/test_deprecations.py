"""Deprecation conditions on Subscriptions, as OLM v0.38 writes them (catalog health
reconciler `updateDeprecatedStatus`, resolver `source_registry.go`); the cases are those of
OLM's Subscription e2e ("should report deprecation conditions when package, channel, and
bundle are referenced in an olm.deprecations object", "... only package and channel
deprecation conditions when bundle is no longer deprecated", "... deprecated status when
catalog is updated to deprecate an installed bundle") and the empty-channel special case."""

from __future__ import annotations

import copy
from typing import Any

from olm.catalog.model import Catalog
from olm.subscription.decide import decide
from olm.subscription.deprecations import (
    Deprecations,
    deprecation_conditions,
    installed_deprecations,
)
from tests.unit.subscription.world import (
    GLOBAL,
    NOW,
    V1,
    V2,
    apply,
    csv,
    samples,
    subscription,
    world,
)

PACKAGE = "memcached-operator"
PACKAGE_SAYS = "olm.package/memcached-operator: use the memcached-ng package"
CHANNEL_SAYS = "olm.channel/alpha: alpha is no longer updated"
BUNDLE_SAYS = f"olm.bundle/{V2}: {V2} has a known bug"


def deprecated(*, package: bool = True, channel: bool = True, bundle: bool = True) -> Catalog:
    """The samples catalog with memcached-operator's package, alpha channel and v0.0.2 bundle
    deprecated (each as asked)."""
    catalog = copy.deepcopy(samples())
    entries: list[dict[str, Any]] = []
    if package:
        entries.append(
            {"reference": {"schema": "olm.package"}, "message": "use the memcached-ng package"}
        )
    if channel:
        entries.append(
            {
                "reference": {"schema": "olm.channel", "name": "alpha"},
                "message": "alpha is no longer updated",
            }
        )
    if bundle:
        entries.append(
            {
                "reference": {"schema": "olm.bundle", "name": V2},
                "message": f"{V2} has a known bug",
            }
        )
    catalog.packages[PACKAGE].deprecations = {
        "schema": "olm.deprecations",
        "package": PACKAGE,
        "entries": entries,
    }
    return catalog


def installed(**spec: Any) -> dict[str, Any]:
    return subscription(
        status={"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown"}, **spec
    )


def by_type(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions") or []}


def decided(catalog: Catalog, **spec: Any) -> dict[str, Any]:
    """The Subscription's status after the decision over `catalog`."""
    snapshot = world([installed(**spec)], csvs=[csv(V2)], loaded={(GLOBAL, "samples"): catalog})
    [write] = decide(snapshot).statuses
    return write.status


# ----- what the catalog says about the installed bundle --------------------------------------


def test_the_installed_entry_carries_each_levels_message_with_olms_prefix() -> None:
    assert installed_deprecations(deprecated(), PACKAGE, "alpha", V2) == Deprecations(
        PACKAGE_SAYS, CHANNEL_SAYS, BUNDLE_SAYS
    )
    # v0.0.1 is not deprecated itself; its package and channel are.
    assert installed_deprecations(deprecated(), PACKAGE, "alpha", V1) == Deprecations(
        PACKAGE_SAYS, CHANNEL_SAYS, None
    )


def test_nothing_is_said_about_a_csv_that_is_no_entry_of_the_channel() -> None:
    assert installed_deprecations(deprecated(), PACKAGE, "alpha", "") is None
    assert installed_deprecations(deprecated(), PACKAGE, "alpha", "other.v1") is None
    assert installed_deprecations(deprecated(), PACKAGE, "no-such-channel", V2) is None
    assert installed_deprecations(deprecated(), "no-such-package", "alpha", V2) is None


def test_without_a_channel_any_channel_holding_the_csv_is_read() -> None:
    found = installed_deprecations(deprecated(), PACKAGE, "", V2)
    assert found is not None and found.bundle == BUNDLE_SAYS


# ----- the conditions ------------------------------------------------------------------------


def test_package_channel_and_bundle_deprecated_set_three_conditions_and_the_rollup() -> None:
    status = decided(deprecated())
    conditions = by_type(status)
    assert {
        kind: (c["status"], c.get("reason"), c["message"])
        for kind, c in conditions.items()
        if "Deprecated" in kind
    } == {
        "PackageDeprecated": ("True", None, PACKAGE_SAYS),
        "ChannelDeprecated": ("True", None, CHANNEL_SAYS),
        "BundleDeprecated": ("True", None, BUNDLE_SAYS),
        "Deprecated": ("True", None, f"{PACKAGE_SAYS}; {CHANNEL_SAYS}; {BUNDLE_SAYS}"),
    }
    assert conditions["Deprecated"]["lastTransitionTime"] == "2030-01-02T03:04:05Z"


def test_a_bundle_no_longer_deprecated_loses_only_its_condition() -> None:
    snapshot = world([installed()], csvs=[csv(V2)], loaded={(GLOBAL, "samples"): deprecated()})
    first = apply(snapshot, decide(snapshot))
    lifted = world(
        list(first.subscriptions),
        csvs=[csv(V2)],
        loaded={(GLOBAL, "samples"): deprecated(bundle=False)},
    )
    [write] = decide(lifted).statuses
    conditions = by_type(write.status)
    assert "BundleDeprecated" not in conditions
    assert conditions["PackageDeprecated"]["message"] == PACKAGE_SAYS
    assert conditions["ChannelDeprecated"]["message"] == CHANNEL_SAYS
    assert conditions["Deprecated"]["message"] == f"{PACKAGE_SAYS}; {CHANNEL_SAYS}"


def test_a_catalog_updated_to_deprecate_the_installed_bundle_reports_it() -> None:
    snapshot = world([installed()], csvs=[csv(V2)])
    settled = apply(snapshot, decide(snapshot))
    assert not any(
        "Deprecated" in c["type"] for c in settled.subscriptions[0]["status"].get("conditions", [])
    )
    updated = world(
        list(settled.subscriptions),
        csvs=[csv(V2)],
        loaded={(GLOBAL, "samples"): deprecated(package=False, channel=False)},
    )
    [write] = decide(updated).statuses
    conditions = by_type(write.status)
    assert conditions["BundleDeprecated"]["message"] == BUNDLE_SAYS
    assert conditions["Deprecated"]["message"] == BUNDLE_SAYS
    assert "PackageDeprecated" not in conditions and "ChannelDeprecated" not in conditions


def test_nothing_deprecated_any_more_removes_the_rollup_too() -> None:
    before = deprecation_conditions([], Deprecations(PACKAGE_SAYS, None, None), "alpha", NOW)
    assert [c["type"] for c in before] == ["PackageDeprecated", "Deprecated"]
    assert deprecation_conditions(before, Deprecations(), "alpha", NOW) == []


def test_without_spec_channel_no_channel_condition_is_written_and_an_old_one_goes() -> None:
    old = [{"type": "ChannelDeprecated", "status": "True", "message": CHANNEL_SAYS}]
    after = deprecation_conditions(
        old, Deprecations(PACKAGE_SAYS, CHANNEL_SAYS, None), spec_channel="", now=NOW
    )
    assert [c["type"] for c in after] == ["PackageDeprecated", "Deprecated"]
    assert after[1]["message"] == PACKAGE_SAYS


def test_conditions_stay_as_they_are_when_the_installed_csv_is_not_in_the_catalog() -> None:
    old = [{"type": "BundleDeprecated", "status": "True", "message": BUNDLE_SAYS}]
    assert deprecation_conditions(old, None, "alpha", NOW) == old


def test_the_same_deprecations_decided_again_write_nothing() -> None:
    snapshot = world([installed()], csvs=[csv(V2)], loaded={(GLOBAL, "samples"): deprecated()})
    assert decide(apply(snapshot, decide(snapshot))).empty


def test_a_catalog_not_loaded_leaves_the_conditions_alone() -> None:
    status = {
        "currentCSV": V2,
        "installedCSV": V2,
        "state": "AtLatestKnown",
        "conditions": [{"type": "BundleDeprecated", "status": "True", "message": BUNDLE_SAYS}],
    }
    snapshot = world([subscription(status=status)], csvs=[csv(V2)], loaded={})
    for write in decide(snapshot).statuses:
        assert by_type(write.status)["BundleDeprecated"]["message"] == BUNDLE_SAYS


def test_an_upgrade_to_a_bundle_nothing_deprecates_clears_every_condition() -> None:
    """OLM's "v0.3.0 no longer marked deprecated": the new installed CSV's entry says nothing,
    so the three levels and the roll-up all go."""
    snapshot = world([installed()], csvs=[csv(V2)], loaded={(GLOBAL, "samples"): deprecated()})
    marked = apply(snapshot, decide(snapshot))
    clean = world(list(marked.subscriptions), csvs=[csv(V2)])
    [write] = decide(clean).statuses
    assert not [kind for kind in by_type(write.status) if "Deprecated" in kind]
