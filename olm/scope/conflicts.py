"""OperatorGroup conflicts, decided as OLM v0 decides them (`operator.go` operatorGroupForCSV /
transitionCSVState, `groups.go` ReconcileAPIIntersection, `operatorgroup.go` pruneProvidedAPIs /
findCSVsThatProvideAnyOf).

1. Membership: a CSV's namespace must hold exactly one OperatorGroup; none is
   `Failed/NoOperatorGroup`, several is `Failed/TooManyOperatorGroups` (set once: OLM does not
   rewrite the status while the reason is already TooManyOperatorGroups).
2. Provided APIs between groups. A group's *surface* is its targets (plus its own namespace
   unless it targets all namespaces) and the APIs in its `olm.providedAPIs` annotation. For the
   APIs A a CSV owns, against its group G and every other group:
   - A meets the APIs of a group whose targets intersect G's, and A is already in G's
     annotation: RemoveAPIs (take A out of G's annotation; the CSV is looked at again);
   - A meets them and is not all in G's annotation: APIConflict, the CSV goes
     `Failed/InterOperatorGroupOwnerConflict` and its Deployments are removed;
   - no meeting, A not all in G's annotation: AddAPIs (union A into the annotation);
   - otherwise NoAPIConflict, and the CSV goes on with its phase.
   With `spec.staticProvidedAPIs`, Add and Remove are refused instead:
   `Failed/CannotModifyStaticOperatorGroupProvidedAPIs`.
   A CSV failed for one of these reasons returns to `Pending/RequirementsUnknown` once the check
   passes again.
3. Keeping `olm.providedAPIs` exact: the group sync only *prunes* APIs no member CSV provides any
   more (and not while a member that provides an API missing from the annotation is in phase ""
   or Pending); the CSV sync only adds (AddAPIs) or removes (RemoveAPIs). A group decision that
   rewrites the annotation to "all members' APIs" would undo RemoveAPIs and loop.

Invariants: pure; the decisions depend only on the group objects and CSVs given.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from olm.api import body
from olm.api.csv import CsvPhase, CsvReason
from olm.api.labels import Annotation
from olm.api.scope import ConflictMessage
from olm.api.views import Gvk
from olm.scope.apiroles import format_provided_apis, parse_provided_apis, provided_apis
from olm.scope.copies import is_copied
from olm.scope.namespaces import ALL_NAMESPACES, NamespaceSet, intersection, status_namespaces


class ApiReconciliation(StrEnum):
    """OLM's APIReconciliationResult."""

    REMOVE_APIS = "RemoveAPIs"
    ADD_APIS = "AddAPIs"
    API_CONFLICT = "APIConflict"
    NO_API_CONFLICT = "NoAPIConflict"


# --- 1. membership ----------------------------------------------------------------------------


def membership_problem(
    groups_in_namespace: int, current_reason: str | None
) -> tuple[CsvReason, str] | None:
    """(reason, message) for a CSV in a namespace with no or several groups, None for exactly
    one; also None when the CSV already says TooManyOperatorGroups (OLM writes that once)."""
    if groups_in_namespace == 0:
        return CsvReason.NO_OPERATOR_GROUP, ConflictMessage.NO_OPERATOR_GROUP.value
    if groups_in_namespace > 1:
        if current_reason == CsvReason.TOO_MANY_OPERATOR_GROUPS:
            return None
        return CsvReason.TOO_MANY_OPERATOR_GROUPS, ConflictMessage.TOO_MANY_OPERATOR_GROUPS.value
    return None


# --- 2. provided APIs between groups ----------------------------------------------------------


@dataclass(frozen=True)
class GroupSurface:
    namespace: str
    name: str
    targets: NamespaceSet
    provided: frozenset[Gvk]

    @classmethod
    def of(cls, group: Mapping[str, Any]) -> GroupSurface:
        """OLM's NewOperatorGroup: status.namespaces plus the group's own namespace unless the
        first target is "" (all namespaces); an empty status gives no targets at all."""
        meta = body.meta(group)
        namespace = str(meta.get("namespace") or "")
        targets = list(status_namespaces(group) or ())
        if targets and targets[0] != ALL_NAMESPACES:
            targets.append(namespace)
        annotations = meta.get("annotations") or {}
        return cls(
            namespace,
            str(meta.get("name") or ""),
            frozenset(targets),
            parse_provided_apis(annotations.get(Annotation.PROVIDED_APIS)),
        )

    @property
    def identifier(self) -> str:
        return f"{self.name}/{self.namespace}"

    def intersecting(self, others: Iterable[GroupSurface]) -> list[GroupSurface]:
        return [
            other
            for other in others
            if other.identifier != self.identifier and intersection(self.targets, other.targets)
        ]


def reconcile_api_intersection(
    apis: frozenset[Gvk], group: GroupSurface, others: Iterable[GroupSurface]
) -> ApiReconciliation:
    """OLM's ReconcileAPIIntersection."""
    theirs: set[Gvk] = set()
    for other in group.intersecting(others):
        theirs |= other.provided
    meeting = bool(apis & theirs)
    subset = apis <= group.provided
    if subset and meeting:
        return ApiReconciliation.REMOVE_APIS
    if meeting:
        return ApiReconciliation.API_CONFLICT
    if not subset:
        return ApiReconciliation.ADD_APIS
    return ApiReconciliation.NO_API_CONFLICT


@dataclass(frozen=True)
class ApiDecision:
    """What the provided-API check means for one CSV."""

    result: ApiReconciliation
    # The group's new olm.providedAPIs value, or None when it stays as is.
    provided_apis: str | None = None
    # (phase, reason, message) to move the CSV to, or None to go on with its phase.
    failure: tuple[CsvPhase, CsvReason, str] | None = None
    remove_deployments: bool = False  # OLM's cleanupCSVDeployments on a new failure
    requeue: bool = False  # look at the CSV again after the annotation write
    stop: bool = False  # the phase machine does not run this time


def decide_provided_apis(
    csv: Mapping[str, Any], group: Mapping[str, Any], all_groups: Iterable[Mapping[str, Any]]
) -> ApiDecision:
    """The provided-API step of OLM's transitionCSVState for `csv` in `group` (`all_groups`
    may include `group` itself; it is skipped)."""
    surface = GroupSurface.of(group)
    others = [GroupSurface.of(g) for g in all_groups]
    apis = provided_apis(csv)
    result = reconcile_api_intersection(apis, surface, others)
    reason = (csv.get("status") or {}).get("reason")
    static = bool((group.get("spec") or {}).get("staticProvidedAPIs"))
    if static and result in (ApiReconciliation.ADD_APIS, ApiReconciliation.REMOVE_APIS):
        if reason == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT:
            return ApiDecision(result, stop=True)
        return ApiDecision(
            result,
            failure=(
                CsvPhase.FAILED,
                CsvReason.CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS,
                ConflictMessage.STATIC_GROUP.value,
            ),
            remove_deployments=True,
            stop=True,
        )
    if result == ApiReconciliation.API_CONFLICT:
        if reason == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT:
            return ApiDecision(result, stop=True)
        return ApiDecision(
            result,
            failure=(
                CsvPhase.FAILED,
                CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT,
                ConflictMessage.INTER_GROUP_CONFLICT.value,
            ),
            remove_deployments=True,
            stop=True,
        )
    if result == ApiReconciliation.ADD_APIS:
        union = format_provided_apis(surface.provided | apis)
        current = (body.meta(group).get("annotations") or {}).get(Annotation.PROVIDED_APIS)
        if current == union:
            # OLM: nothing to add after all; let the CSV go on to its requirement checks.
            return ApiDecision(ApiReconciliation.NO_API_CONFLICT)
        return ApiDecision(result, provided_apis=union, requeue=True, stop=True)
    if result == ApiReconciliation.REMOVE_APIS:
        return ApiDecision(
            result,
            provided_apis=format_provided_apis(surface.provided - apis),
            requeue=True,
            stop=True,
        )
    return ApiDecision(result)


# Failed reasons OLM leaves for Pending/RequirementsUnknown once the API check passes again.
RECOVERY_MESSAGES: dict[CsvReason, str] = {
    CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT: ConflictMessage.CONFLICT_RESOLVED.value,
    CsvReason.CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS: ConflictMessage.STATIC_RESOLVED.value,
}


def recovery(csv: Mapping[str, Any]) -> tuple[CsvPhase, CsvReason, str] | None:
    """For a Failed CSV that passed the API check: the Pending transition OLM makes, if its
    failure was a group-API one."""
    status = csv.get("status") or {}
    if status.get("phase") != CsvPhase.FAILED:
        return None
    for reason, message in RECOVERY_MESSAGES.items():
        if status.get("reason") == reason:
            return CsvPhase.PENDING, CsvReason.REQUIREMENTS_UNKNOWN, message
    return None


# --- 3. olm.providedAPIs kept exact by the group sync ------------------------------------------


def pruned_provided_apis(group: Mapping[str, Any], csvs: Iterable[Mapping[str, Any]]) -> str | None:
    """OLM's pruneProvidedAPIs: the group's new `olm.providedAPIs` once APIs no member provides
    are dropped, or None to leave it (nothing to drop, `spec.staticProvidedAPIs`, or a member
    providing an API the annotation lacks is still in phase "" or Pending). `csvs` are the CSVs
    in the group's namespace; copies are ignored."""
    if (group.get("spec") or {}).get("staticProvidedAPIs"):
        return None
    annotated = parse_provided_apis(
        (body.meta(group).get("annotations") or {}).get(Annotation.PROVIDED_APIS)
    )
    kept: set[Gvk] = set()
    for csv in csvs:
        if is_copied(csv):
            continue
        for api in provided_apis(csv):
            if api in annotated:
                kept.add(api)
                continue
            phase = (csv.get("status") or {}).get("phase") or ""
            if not body.meta(csv).get("deletionTimestamp") and phase in (
                CsvPhase.NONE,
                CsvPhase.PENDING,
            ):
                return None
    if len(kept) < len(annotated):
        return format_provided_apis(kept)
    return None


def providers_of(apis: Iterable[Gvk], csvs: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(namespace, name) of every non-copied CSV providing any of `apis` (OLM requeues them
    after a group sync, so a conflict that went away is noticed)."""
    wanted = frozenset(apis)
    return sorted(
        (str(body.meta(csv).get("namespace")), str(body.meta(csv).get("name")))
        for csv in csvs
        if not is_copied(csv) and provided_apis(csv) & wanted
    )
