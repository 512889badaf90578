"""The closed vocabularies are complete: exactly OLM v0's phases, reasons and keys."""

from __future__ import annotations

import kopf

from olm.api.cleanup import (
    CLEANUP_ANNOTATION,
    CLEANUP_OPERATORS_ANNOTATION,
    DEFAULT_CLEANUP,
    CleanupPolicy,
)
from olm.api.csv import CsvPhase, CsvReason, RequirementState
from olm.api.labels import CSV_CLEANUP_FINALIZER, Annotation, Label
from olm.api.preview import (
    PREVIEW_SUMMARY_ANNOTATION,
    Change,
    Count,
    Flag,
    RuleFlag,
    RuleScope,
)
from olm.controllers.watch import WATCHED, configure
from olm.preview.plan import Preview, summary
from olm.preview.render import FLAG_WORDS

# OLM v0's API (operator-framework/api v1alpha1 clusterserviceversion_types.go), as listed in
# olm-behaviour.md §2.2.
OLM_REASONS = set(
    [
        "RequirementsUnknown",
        "RequirementsNotMet",
        "AllRequirementsMet",
        "OwnerConflict",
        "InstallComponentFailed",
        "InstallComponentFailedNoRetry",
        "InvalidInstallStrategy",
        "InstallWaiting",
        "InstallSucceeded",
        "InstallCheckFailed",
        "ComponentUnhealthy",
        "BeingReplaced",
        "Replaced",
        "NeedsReinstall",
        "NeedsCertRotation",
        "APIServiceResourceIssue",
        "APIServiceResourcesNeedReinstall",
        "APIServiceInstallFailed",
        "Copied",
        "InvalidInstallModes",
        "NoTargetNamespaces",
        "UnsupportedOperatorGroup",
        "NoOperatorGroup",
        "TooManyOperatorGroups",
        "InterOperatorGroupOwnerConflict",
        "CannotModifyStaticOperatorGroupProvidedAPIs",
        "DetectedClusterChange",
        "InvalidWebhookDescription",
        "OperatorConditionNotUpgradeable",
        "WaitingOnCleanup",
    ]
)
OLM_PHASES = {
    "",
    "Pending",
    "InstallReady",
    "Installing",
    "Succeeded",
    "Failed",
    "Unknown",
    "Replacing",
    "Deleting",
}


def test_csv_reasons_are_exactly_olms() -> None:
    assert {reason.value for reason in CsvReason} == OLM_REASONS


def test_csv_phases_are_exactly_olms() -> None:
    assert {phase.value for phase in CsvPhase} == OLM_PHASES


def test_requirement_states_are_olms() -> None:
    assert {s.value for s in RequirementState} == {
        "Present",
        "NotPresent",
        "PresentNotSatisfied",
        "PresentNotAvailable",
        "DeploymentFound",
        "DeploymentNotFound",
    }


def test_label_and_annotation_keys() -> None:
    assert Label.OWNER == "olm.owner" and Label.OWNER_KIND == "olm.owner.kind"
    assert Label.DEPLOYMENT_SPEC_HASH == "olm.deployment-spec-hash"
    assert {a.value for a in Annotation} >= {
        "olm.operatorGroup",
        "olm.operatorNamespace",
        "olm.targetNamespaces",
        "olm.providedAPIs",
    }
    assert CSV_CLEANUP_FINALIZER == "operators.coreos.com/csv-cleanup"


def test_kopf_settings_write_nothing_and_need_no_peering() -> None:
    settings = kopf.OperatorSettings()
    configure(settings)
    assert settings.posting.enabled is False
    assert settings.peering.standalone is True
    assert settings.peering.mandatory is False
    assert settings.watching.server_timeout == 300
    # The kinds watched only for Operator objects, and catalog registries' NetworkPolicies, are
    # filtered by the API server (OLM's caches keep only olm.managed=true ones); no other kind is
    # (APIServices are all watched: a CSV's, olm.managed or not, go when it goes).
    filtered = {
        (selector.group, selector.version, selector.any_name): value
        for selector, value in settings.watching.label_selectors.items()
    }
    assert filtered == {
        ("", "v1", "services"): "olm.managed=true",
        ("", "v1", "secrets"): "olm.managed=true",
        ("", "v1", "configmaps"): "olm.managed=true",
        ("networking.k8s.io", "v1", "networkpolicies"): "olm.managed=true",
        ("", "v1", "pods"): "olm.catalogSource",  # catalog registry pods
    }


def test_every_watched_kind_has_a_unique_store_name() -> None:
    names = [w.kind for w in WATCHED]
    assert len(names) == len(set(names))


def test_cleanup_annotation_is_olm_pys_closed_set() -> None:
    # olm-py's own keys live under olm-py.io/, never under OLM's prefixes.
    assert CLEANUP_ANNOTATION == "olm-py.io/cleanup"
    assert CLEANUP_OPERATORS_ANNOTATION == "olm-py.io/cleanup-operators"
    assert {policy.value for policy in CleanupPolicy} == {"keep", "crds-when-unused"}
    assert DEFAULT_CLEANUP is CleanupPolicy.KEEP


def test_auto_approve_is_olm_pys_closed_set_smallest_first() -> None:
    from olm.api.versionpolicy import (
        AUTO_APPROVE_ANNOTATION,
        AUTO_APPROVED_ANNOTATION,
        AUTO_APPROVED_EVENT,
        INVALID_AUTO_APPROVE_EVENT,
        AutoApprove,
    )

    assert AUTO_APPROVE_ANNOTATION == "olm-py.io/auto-approve"
    assert AUTO_APPROVED_ANNOTATION == "olm-py.io/auto-approved"
    assert [p.value for p in AutoApprove] == ["first", "patch", "minor", "all"]
    assert {AUTO_APPROVED_EVENT, INVALID_AUTO_APPROVE_EVENT} == {
        "InstallPlanAutoApproved",
        "InvalidAutoApprove",
    }


def test_version_range_says_itself_in_olm_pys_own_condition() -> None:
    from olm.api.subscription import SubscriptionConditionType
    from olm.api.versionpolicy import (
        INVALID_VERSION_RANGE_EVENT,
        VERSION_RANGE_ANNOTATION,
        OlmPyConditionType,
        VersionHeldReason,
    )

    assert VERSION_RANGE_ANNOTATION == "olm-py.io/version-range"
    assert [c.value for c in OlmPyConditionType] == [
        "VersionHeld",
        "Rollback",
        "AutoApproveInvalid",
    ]
    # never one of OLM's own condition types: OLM's tools read those
    assert not {c.value for c in OlmPyConditionType} & {c.value for c in SubscriptionConditionType}
    assert {r.value for r in VersionHeldReason} == {
        "OutsideVersionRange",
        "WithinVersionRange",
        "InvalidVersionRange",
    }
    assert INVALID_VERSION_RANGE_EVENT == "InvalidVersionRange"


def test_plan_per_subscription_annotations_are_olm_pys() -> None:
    from olm.api.planpolicy import PLAN_PER_SUBSCRIPTION_ANNOTATION, SHARED_PLAN_ANNOTATION

    assert PLAN_PER_SUBSCRIPTION_ANNOTATION == "olm-py.io/plan-per-subscription"
    assert SHARED_PLAN_ANNOTATION == "olm-py.io/shared-plan"


def test_rollback_vocabulary_is_olm_pys() -> None:
    from olm.api.versionpolicy import (
        ROLLBACK_ANNOTATION,
        ROLLBACK_PLAN_ANNOTATION,
        RollbackReason,
    )

    assert ROLLBACK_ANNOTATION == "olm-py.io/rollback-to"
    assert ROLLBACK_PLAN_ANNOTATION == "olm-py.io/rollback"
    assert {r.value for r in RollbackReason} == {"RollbackPlanned", "RollbackRefused", "RolledBack"}


def test_preview_vocabulary_is_olm_pys_closed_set() -> None:
    assert PREVIEW_SUMMARY_ANNOTATION == "olm-py.io/preview-summary"
    assert {f.value for f in Flag} == {
        "widensRBAC",
        "clusterWide",
        "wildcards",
        "sensitive",
        "crdVersionRemoved",
        "crdUnsafe",
        "crdFieldsRemoved",
    }
    assert {c.value for c in Count} == {
        "granted",
        "revoked",
        "crdsChanged",
        "deploymentsChanged",
        "created",
        "updated",
        "deleted",
    }
    assert {f.value for f in RuleFlag} == {"cluster-wide", "wildcard", "sensitive", "widens"}
    assert {s.value for s in RuleScope} == {"Namespace", "Cluster"}
    assert {c.value for c in Change} == {
        "granted",
        "revoked",
        "added",
        "removed",
        "changed",
        "create",
        "update",
        "delete",
    }
    # Every flag has its words in `olm plan show`; the summary holds exactly the counts.
    assert set(FLAG_WORDS) == set(Flag)
    empty = summary(Preview("p", "ns", "", "", False))
    assert set(empty) == {"flags", *(c.value for c in Count)}
