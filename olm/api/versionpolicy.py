"""Version policies on a Subscription, beyond OLM: olm-py's `olm-py.io/auto-approve` and
`olm-py.io/version-range` annotations.

OLM v0 approves an InstallPlan either always (`installPlanApproval: Automatic`) or never by
itself (`Manual`). Users ask for the middle (operator-lifecycle-manager#2627, #1895;
operator-controller#954): install unattended, then wait for a person before a risky upgrade.
The annotation (never a field: OLM ignores it, manifests move both ways; docs/beyond-olm.md)
on a Manual Subscription lets olm-py approve the plans whose every step stays within a size:

- `first`: the first install (the startingCSV or the channel head), upgrades wait;
- `patch`: the first install and upgrades within one minor version (0.0.1 -> 0.0.2);
- `minor`: also upgrades within one major version (0.1.0 -> 0.2.0);
- `all`: every plan (as Automatic, but the plan says who approved it).

A plan olm-py approves carries AUTO_APPROVED_ANNOTATION, saying which policy approved which
step, and an Event with AUTO_APPROVED_EVENT says the same. Closed set: any other value is
refused with INVALID_AUTO_APPROVE_EVENT naming the Subscription and the values, and the plan
waits for a person, as Manual does.

`olm-py.io/version-range` (a semver range, olm.resolution.versionrange) keeps the resolver to
the bundles in range: the Subscription neither installs nor upgrades to a version outside it.
Its condition VersionHeld (OlmPyConditionType) says what the range holds back (True, reason
OUTSIDE_VERSION_RANGE, the versions named), that nothing is held (False, WITHIN_VERSION_RANGE),
or that the value is not a range (True, INVALID_VERSION_RANGE: the Subscription stays on what
it has installed, and installs nothing new, until the value is fixed). Without the annotation
the condition is absent, as under OLM.

`olm-py.io/rollback-to` (written by `olm rollback`) names an earlier CSV of the package: the
resolver moves the Subscription back to it, in a Manual plan that olm-py never approves by
itself, after the CRD safety check; the Subscription's Rollback condition says planned,
refused (why) or done.
"""

from __future__ import annotations

from enum import StrEnum

AUTO_APPROVE_ANNOTATION = "olm-py.io/auto-approve"
AUTO_APPROVED_ANNOTATION = "olm-py.io/auto-approved"
AUTO_APPROVED_EVENT = "InstallPlanAutoApproved"
INVALID_AUTO_APPROVE_EVENT = "InvalidAutoApprove"
VERSION_RANGE_ANNOTATION = "olm-py.io/version-range"
# `olm rollback` (docs/beyond-olm.md): the CSV to go back to, and what the plan says it does.
ROLLBACK_ANNOTATION = "olm-py.io/rollback-to"
ROLLBACK_PLAN_ANNOTATION = "olm-py.io/rollback"
INVALID_VERSION_RANGE_EVENT = "InvalidVersionRange"


class AutoApprove(StrEnum):
    """Smallest to largest: each approves what the ones before it approve."""

    FIRST = "first"
    PATCH = "patch"
    MINOR = "minor"
    ALL = "all"


class OlmPyConditionType(StrEnum):
    """Subscription condition types olm-py adds, only where its annotations ask for them."""

    VERSION_HELD = "VersionHeld"
    ROLLBACK = "Rollback"
    # True only while the olm-py.io/auto-approve value is not a policy (reason
    # INVALID_AUTO_APPROVE_EVENT's text); absent otherwise.
    AUTO_APPROVE_INVALID = "AutoApproveInvalid"


class VersionHeldReason(StrEnum):
    OUTSIDE_VERSION_RANGE = "OutsideVersionRange"
    WITHIN_VERSION_RANGE = "WithinVersionRange"
    INVALID_VERSION_RANGE = "InvalidVersionRange"


class RollbackReason(StrEnum):
    """The Rollback condition: True while planned (the plan waits for a person), False when
    refused (the message says why and nothing was planned)."""

    ROLLBACK_PLANNED = "RollbackPlanned"
    ROLLBACK_REFUSED = "RollbackRefused"
    ROLLED_BACK = "RolledBack"
