"""The upgrade preview of an InstallPlan (issue 26 item 2): olm-py's own annotation and words.

OLM v0 has no preview, so it is an annotation on OLM's own InstallPlan, never a new field, and
`olm plan show` (docs/plan-preview.md):

- PREVIEW_SUMMARY_ANNOTATION on an InstallPlan olm-py made: compact JSON of the preview's
  counts (`Count`) and flags (`Flag`), e.g.
  `{"flags":["widensRBAC"],"granted":1,"revoked":0,...}`. Written once by the InstallPlan
  controller, before any step of the plan runs; informational only (nothing reads it back to
  decide anything, and failing to write it never holds up the plan).
- `Flag`: what a person must not miss before approving. `RuleFlag`: why one RBAC rule is
  flagged. `Change`: what a plan does to one rule, Deployment or object.

Closed sets: the preview never writes a flag, count, rule flag or change not listed here.
"""

from __future__ import annotations

from enum import StrEnum

PREVIEW_SUMMARY_ANNOTATION = "olm-py.io/preview-summary"


class Flag(StrEnum):
    # A rule grants something the replaced CSV's rules did not (a fresh install always does).
    WIDENS_RBAC = "widensRBAC"
    # A granted rule is cluster-wide (clusterPermissions).
    CLUSTER_WIDE = "clusterWide"
    # A granted rule has `*` in its apiGroups, resources or verbs.
    WILDCARDS = "wildcards"
    # A granted rule reaches a sensitive resource or verb (SENSITIVE_RESOURCES, SENSITIVE_VERBS).
    SENSITIVE = "sensitive"
    # A CRD update stops serving (or drops) a version the live CRD serves.
    CRD_VERSION_REMOVED = "crdVersionRemoved"
    # A CRD update fails OLM's upgrade safety check (stored version dropped, existing objects
    # invalid): the plan will fail when approved.
    CRD_UNSAFE = "crdUnsafe"
    # A CRD update removes fields from the schema of a version kept.
    CRD_FIELDS_REMOVED = "crdFieldsRemoved"


class Count(StrEnum):
    GRANTED = "granted"
    REVOKED = "revoked"
    CRDS_CHANGED = "crdsChanged"
    DEPLOYMENTS_CHANGED = "deploymentsChanged"
    CREATED = "created"
    UPDATED = "updated"
    DELETED = "deleted"


class RuleFlag(StrEnum):
    CLUSTER_WIDE = "cluster-wide"
    WILDCARD = "wildcard"
    SENSITIVE = "sensitive"
    # The rule adds rights not covered by the replaced CSV's rules for the same account.
    WIDENS = "widens"


class RuleScope(StrEnum):
    NAMESPACE = "Namespace"  # spec.install.spec.permissions
    CLUSTER = "Cluster"  # spec.install.spec.clusterPermissions


class Change(StrEnum):
    GRANTED = "granted"
    REVOKED = "revoked"
    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"


# Resources and verbs whose grant deserves a second look (read any Secret, change RBAC, act as
# someone else): a rule reaching one is flagged `sensitive`.
SENSITIVE_RESOURCES = frozenset(
    {
        "secrets",
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
        "serviceaccounts/token",
        "pods/exec",
        "pods/attach",
        "nodes/proxy",
        "certificatesigningrequests/approval",
        "mutatingwebhookconfigurations",
        "validatingwebhookconfigurations",
    }
)
SENSITIVE_VERBS = frozenset({"escalate", "bind", "impersonate", "approve"})
WILDCARD = "*"
