"""Why an OperatorGroup (or a namespace's lack of one) keeps operators from installing (OLM v0
§4; olm.scope.conflicts, olm.groups).

- Membership: a namespace needs exactly one OperatorGroup. None: create one (targeting the
  namespace when the operator supports OwnNamespace, else every namespace); several: delete all
  but one (they are named).
- The group's own conditions: MultipleOperatorGroup, OperatorGroupServiceAccount
  (ServiceAccountNotFound: create it), and olm-py's MissingTargetNamespaces and
  InvalidTargetNamespaces.
- Provided APIs: a CSV refused with InterOperatorGroupOwnerConflict meets another group whose
  targets intersect its group's and whose `olm.providedAPIs` holds one of its APIs (the same
  surfaces OLM compares, `olm.scope.conflicts.GroupSurface`). The fixes: narrow that group's
  targets, or remove the CSV that provides the API there.

Invariant: pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.body import name, namespace
from olm.api.csv import CsvReason
from olm.api.kinds import Kind
from olm.api.labels import Annotation
from olm.api.operatorgroup import OperatorGroupConditionType
from olm.api.views import CsvView, InstallModeType
from olm.csv.replacement import is_copy
from olm.explain import commands
from olm.explain.model import (
    NAMESPACE_KIND,
    Explanation,
    Fix,
    Link,
    Obj,
    Snapshot,
    healthy,
    in_progress,
    problem,
    spec,
    status,
    true_condition,
)
from olm.scope.apiroles import format_provided_apis, provided_apis
from olm.scope.conflicts import GroupSurface
from olm.scope.namespaces import ALL_NAMESPACES, intersection, status_namespaces

KIND = Kind.OPERATOR_GROUP.value
Types = OperatorGroupConditionType


def _targets_text(group: Obj) -> str:
    targets = status_namespaces(group)
    if targets is None:
        return "no targets yet"
    if list(targets) == [ALL_NAMESPACES]:
        return "every namespace"
    return ", ".join(targets) or "no namespace (its selector matches none)"


def membership(
    snapshot: Snapshot, group_namespace: str, csv: Obj | None = None
) -> Explanation | None:
    """The namespace has no OperatorGroup or several: the explanation, else None."""
    groups = snapshot.groups_in(group_namespace)
    if len(groups) == 1:
        return None
    if not groups:
        own = csv is None or CsvView.of(csv).supports(InstallModeType.OWN_NAMESPACE)
        targets = [group_namespace] if own else None
        return problem(
            Link(NAMESPACE_KIND, group_namespace, "", "no OperatorGroup", "holds no OperatorGroup"),
            f"namespace {group_namespace} has no OperatorGroup, so OLM installs no operator there",
            Fix(
                "create one "
                + (
                    f"targeting namespace {group_namespace}" if own else "targeting every namespace"
                ),
                commands.operator_group(group_namespace, targets),
            ),
        )
    names = [name(g) for g in groups]
    return problem(
        Link(
            NAMESPACE_KIND,
            group_namespace,
            "",
            f"{len(groups)} OperatorGroups",
            f"holds {len(groups)} OperatorGroups ({', '.join(names)})",
        ),
        f"namespace {group_namespace} has {len(groups)} OperatorGroups ({', '.join(names)}); "
        "OLM needs exactly one and uses none of them",
        *(
            Fix(
                f"keep {names[0]}, delete {other}",
                commands.delete(Kind.OPERATOR_GROUP, other, group_namespace),
            )
            for other in names[1:]
        ),
    )


def explain_group(snapshot: Snapshot, group: Obj) -> Explanation:
    group_name, group_ns = name(group), namespace(group)
    link = Link(KIND, group_name, group_ns, f"targets {_targets_text(group)}", "")
    several = membership(snapshot, group_ns)
    if several is not None:
        return several.after(link)
    said = _condition_problem(snapshot, group)
    if said is not None:
        return said
    if status_namespaces(group) is None:
        return in_progress(
            link,
            f"OperatorGroup {group_name} has no status.namespaces yet: olm-py has not synced it",
        )
    refused = [
        c
        for c in snapshot.csvs
        if namespace(c) == group_ns
        and not is_copy(c)
        and status(c).get("reason") == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT
    ]
    if refused:
        conflict = api_conflict(snapshot, refused[0])
        if conflict is not None:
            return conflict.after(link)
    annotations = body.annotations(group)
    apis = annotations.get(Annotation.PROVIDED_APIS.value) or ""
    return healthy(
        Link(
            KIND,
            group_name,
            group_ns,
            f"targets {_targets_text(group)}",
            f"provides {apis or 'no API yet'}",
        ),
        f"OperatorGroup {group_name} is the one group of namespace {group_ns} and targets {_targets_text(group)}",
    )


def _condition_link(group: Obj, condition: Mapping[str, Any]) -> Link:
    return Link(
        KIND,
        name(group),
        namespace(group),
        str(condition.get("reason") or ""),
        str(condition.get("message") or ""),
    )


def _condition_problem(snapshot: Snapshot, group: Obj) -> Explanation | None:
    """What the group's own conditions say is wrong with it, with the fix; None if nothing."""
    group_name, group_ns = name(group), namespace(group)
    edit_targets = Fix(
        "fix spec.targetNamespaces", commands.edit(Kind.OPERATOR_GROUP, group_name, group_ns)
    )
    account = true_condition(group, Types.SERVICE_ACCOUNT)
    if account is not None:
        sa = str(spec(group).get("serviceAccountName") or "")
        return problem(
            _condition_link(group, account),
            f"OperatorGroup {group_name} names ServiceAccount {sa} (spec.serviceAccountName), "
            f"which does not exist in namespace {group_ns}",
            Fix(
                "create the ServiceAccount (and grant it what the operators need)",
                commands.create_service_account(sa, group_ns),
            ),
            Fix(
                "or install with olm-py's own rights: remove spec.serviceAccountName",
                commands.json_patch(
                    Kind.OPERATOR_GROUP,
                    group_name,
                    group_ns,
                    [{"op": "remove", "path": "/spec/serviceAccountName"}],
                ),
            ),
        )
    missing = true_condition(group, Types.MISSING_TARGET_NAMESPACES)
    if missing is not None:
        absent = [
            t
            for t in spec(group).get("targetNamespaces") or []
            if isinstance(t, str) and t and t not in snapshot.namespaces
        ]
        return problem(
            _condition_link(group, missing),
            str(missing.get("message") or "") or f"{group_name} targets absent namespaces",
            *(Fix(f"create namespace {t}", commands.create_namespace(t)) for t in absent),
            edit_targets,
        )
    invalid = true_condition(group, Types.INVALID_TARGET_NAMESPACES)
    if invalid is not None:
        return problem(
            _condition_link(group, invalid),
            str(invalid.get("message") or "") or f"{group_name} has invalid targetNamespaces",
            edit_targets,
        )
    return None


def api_conflict(snapshot: Snapshot, csv: Obj) -> Explanation | None:
    """For a CSV refused with InterOperatorGroupOwnerConflict: the other group(s) whose targets
    meet its group's and that provide one of its APIs, and the CSVs that provide it there."""
    groups = snapshot.groups_in(namespace(csv))
    if len(groups) != 1:
        return None
    mine = GroupSurface.of(groups[0])
    apis = provided_apis(csv)
    surfaces = [GroupSurface.of(g) for g in snapshot.operator_groups]
    rivals = [other for other in mine.intersecting(surfaces) if other.provided & apis]
    if not rivals:
        return None
    rival = rivals[0]
    shared = rival.provided & apis
    shared_text = format_provided_apis(shared)
    overlap = sorted(t or "every namespace" for t in intersection(rival.targets, mine.targets))
    providers = [
        c
        for c in snapshot.all_csvs()
        if namespace(c) == rival.namespace and not is_copy(c) and provided_apis(c) & shared
    ]
    link = Link(
        KIND,
        rival.name,
        rival.namespace,
        f"provides {shared_text}",
        f"its targets meet those of OperatorGroup {mine.namespace}/{mine.name} "
        f"(both reach {', '.join(overlap)}) and it already provides {shared_text}"
        + (f" (through CSV {', '.join(name(p) for p in providers)})" if providers else ""),
    )
    fixes = []
    rival_group = next(
        (
            g
            for g in snapshot.operator_groups
            if (namespace(g), name(g)) == (rival.namespace, rival.name)
        ),
        None,
    )
    wanted = spec(rival_group).get("targetNamespaces") if rival_group is not None else None
    if isinstance(wanted, list):
        narrowed = sorted(t for t in wanted if isinstance(t, str) and t not in mine.targets)
        if narrowed:
            fixes.append(
                Fix(
                    f"narrow OperatorGroup {rival.namespace}/{rival.name} so it no longer targets "
                    f"{', '.join(sorted(set(wanted) - set(narrowed)))}",
                    commands.merge_patch(
                        Kind.OPERATOR_GROUP,
                        rival.name,
                        rival.namespace,
                        {"spec": {"targetNamespaces": narrowed}},
                    ),
                )
            )
    for provider in providers[:2]:
        fixes.append(
            Fix(
                f"or remove the operator that provides {shared_text} there (its CRDs and operands stay)",
                commands.delete(Kind.CLUSTER_SERVICE_VERSION, name(provider), namespace(provider)),
            )
        )
    return problem(
        link,
        f"OperatorGroup {rival.namespace}/{rival.name} already provides {shared_text} to namespaces "
        f"this operator's group targets too; only one group may provide an API to a namespace",
        *fixes,
    )
