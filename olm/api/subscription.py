"""Subscription states, condition types and reasons, as OLM v0 names them.

Sources: operator-framework/api `pkg/operators/v1alpha1/subscription_types.go` (states, condition
types, reason constants) and OLM `pkg/controller/operators/catalog/operator.go` (the reasons the
namespace sync writes: ConstraintsNotSatisfiable, ErrorPreventedResolution, ...).
Closed sets: the Subscription controller never writes a value that is not listed here.
"""

from __future__ import annotations

from enum import StrEnum


class SubscriptionState(StrEnum):
    """`status.state`. OLM v0 sets UpgradePending, AtLatestKnown and (fail-forward only)
    UpgradeFailed; UpgradeAvailable is defined but no current OLM code path sets it."""

    NONE = ""
    UPGRADE_FAILED = "UpgradeFailed"
    UPGRADE_AVAILABLE = "UpgradeAvailable"
    UPGRADE_PENDING = "UpgradePending"
    AT_LATEST_KNOWN = "AtLatestKnown"


class SubscriptionConditionType(StrEnum):
    CATALOG_SOURCES_UNHEALTHY = "CatalogSourcesUnhealthy"
    INSTALL_PLAN_MISSING = "InstallPlanMissing"
    INSTALL_PLAN_PENDING = "InstallPlanPending"
    INSTALL_PLAN_FAILED = "InstallPlanFailed"
    RESOLUTION_FAILED = "ResolutionFailed"
    BUNDLE_UNPACKING = "BundleUnpacking"
    BUNDLE_UNPACK_FAILED = "BundleUnpackFailed"
    DEPRECATED = "Deprecated"
    PACKAGE_DEPRECATED = "PackageDeprecated"
    CHANNEL_DEPRECATED = "ChannelDeprecated"
    BUNDLE_DEPRECATED = "BundleDeprecated"


class SubscriptionReason(StrEnum):
    """Condition reasons. InstallPlanPending's reason is the plan's phase (Installing,
    RequiresApproval, Planning) or InstallPlanNotYetReconciled, as OLM writes it."""

    # the API's reason constants
    NO_CATALOG_SOURCES_FOUND = "NoCatalogSourcesFound"
    ALL_CATALOG_SOURCES_HEALTHY = "AllCatalogSourcesHealthy"
    CATALOG_SOURCES_ADDED = "CatalogSourcesAdded"
    CATALOG_SOURCES_UPDATED = "CatalogSourcesUpdated"
    CATALOG_SOURCES_DELETED = "CatalogSourcesDeleted"
    UNHEALTHY_CATALOG_SOURCE_FOUND = "UnhealthyCatalogSourceFound"
    REFERENCED_INSTALL_PLAN_NOT_FOUND = "ReferencedInstallPlanNotFound"
    INSTALL_PLAN_NOT_YET_RECONCILED = "InstallPlanNotYetReconciled"
    INSTALL_PLAN_FAILED = "InstallPlanFailed"
    # written by the catalog-operator's namespace sync
    CONSTRAINTS_NOT_SATISFIABLE = "ConstraintsNotSatisfiable"
    ERROR_PREVENTED_RESOLUTION = "ErrorPreventedResolution"
    UNPACKING_IN_PROGRESS = "UnpackingInProgress"
    BUNDLE_UNPACK_FAILED = "BundleUnpackFailed"
    ERROR_PREVENTED_UNPACKING = "ErrorPreventedUnpacking"
    ENSURE_INSTALL_PLAN_FAILED = "EnsureInstallPlanFailed"
    # named for the deprecation conditions, which OLM (and olm-py) write without a reason
    DEPRECATED = "Deprecated"


class SubscriptionStatusReason(StrEnum):
    """`status.reason` (a ConditionReason in the API; unused by current OLM code paths)."""

    INVALID_CATALOG = "InvalidCatalog"
    UPGRADE_SUCCEEDED = "UpgradeSucceeded"


# The Warning Event OLM records on the Namespace when resolution fails.
RESOLUTION_FAILED_EVENT = "ResolutionFailed"
