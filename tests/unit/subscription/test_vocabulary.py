"""The Subscription vocabulary is OLM v0's (olm-behaviour.md §1.2, §5.2; operator-framework/api
subscription_types.go; OLM catalog/operator.go)."""

from __future__ import annotations

from olm.api.subscription import (
    SubscriptionConditionType,
    SubscriptionReason,
    SubscriptionState,
    SubscriptionStatusReason,
)

OLM_STATES = {"", "UpgradeFailed", "UpgradeAvailable", "UpgradePending", "AtLatestKnown"}
OLM_CONDITION_TYPES = {
    "CatalogSourcesUnhealthy",
    "InstallPlanMissing",
    "InstallPlanPending",
    "InstallPlanFailed",
    "ResolutionFailed",
    "BundleUnpacking",
    "BundleUnpackFailed",
    "Deprecated",
    "PackageDeprecated",
    "ChannelDeprecated",
    "BundleDeprecated",
}
# The API's reason constants (§1.2) ...
OLM_API_REASONS = {
    "NoCatalogSourcesFound",
    "AllCatalogSourcesHealthy",
    "CatalogSourcesAdded",
    "CatalogSourcesUpdated",
    "CatalogSourcesDeleted",
    "UnhealthyCatalogSourceFound",
    "ReferencedInstallPlanNotFound",
    "InstallPlanNotYetReconciled",
    "InstallPlanFailed",
}
# ... and the ones the namespace sync writes (§5.2), plus the deprecation roll-up's.
OLM_SYNC_REASONS = {
    "ConstraintsNotSatisfiable",
    "ErrorPreventedResolution",
    "UnpackingInProgress",
    "BundleUnpackFailed",
    "ErrorPreventedUnpacking",
    "EnsureInstallPlanFailed",
    "Deprecated",
}


def test_states_are_exactly_olms() -> None:
    assert {s.value for s in SubscriptionState} == OLM_STATES


def test_condition_types_are_exactly_olms() -> None:
    assert {t.value for t in SubscriptionConditionType} == OLM_CONDITION_TYPES


def test_condition_reasons_are_exactly_olms() -> None:
    assert {r.value for r in SubscriptionReason} == OLM_API_REASONS | OLM_SYNC_REASONS


def test_status_reasons_are_the_apis() -> None:
    assert {r.value for r in SubscriptionStatusReason} == {"InvalidCatalog", "UpgradeSucceeded"}
