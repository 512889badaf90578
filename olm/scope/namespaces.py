"""OLM v0's namespace sets (`groups.go` NamespaceSet) and the `olm.operatorgroup.uid/<uid>`
namespace labels (`operator.go` syncNamespace).

Invariants:
- A set holding exactly `""` means all namespaces: it contains every namespace, and
  intersecting it with a set gives that set.
- `olm.targetNamespaces` is read as OLM reads it: split on ","; a missing or empty value is
  `{""}`, all namespaces.
- A namespace carries `olm.operatorgroup.uid/<uid>: ""` for exactly the groups whose
  `status.namespaces` name it (all-namespaces groups label nothing); other labels with that
  prefix are removed; labels without it are never touched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from olm.api import body
from olm.api.labels import OPERATOR_GROUP_UID_LABEL_PREFIX

ALL_NAMESPACES = ""
NamespaceSet = frozenset[str]
ALL: NamespaceSet = frozenset({ALL_NAMESPACES})


def from_annotation(value: str | None) -> NamespaceSet:
    """The set an `olm.targetNamespaces` value names (None and "" read as all namespaces)."""
    return frozenset((value or "").split(","))


def is_all(namespaces: NamespaceSet) -> bool:
    return namespaces == ALL


def contains(namespaces: NamespaceSet, namespace: str) -> bool:
    return is_all(namespaces) or namespace in namespaces


def intersection(left: NamespaceSet, right: NamespaceSet) -> NamespaceSet:
    if is_all(left):
        return right
    if is_all(right):
        return left
    return left & right


def status_namespaces(group: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The group's `status.namespaces`, or None while the group has not computed it yet."""
    status = group.get("status") or {}
    if "namespaces" not in status and not status.get("lastUpdated"):
        return None
    return tuple(str(n) for n in status.get("namespaces") or [])


def build_target_namespaces(namespaces: Iterable[str]) -> str:
    """`olm.targetNamespaces` for these targets: sorted and comma-joined (OLM's
    BuildTargetNamespaces)."""
    return ",".join(sorted(namespaces))


def is_own_namespace_only(targets: Iterable[str], namespace: str) -> bool:
    """OLM copies nothing and grants nothing extra when the targets are exactly [namespace]."""
    listed = list(targets)
    return len(listed) == 1 and listed[0] == namespace


def group_label_key(group: Mapping[str, Any]) -> str | None:
    """`olm.operatorgroup.uid/<uid>`, or None while the group has no uid (OLM: "Missing UID")."""
    uid = str(body.meta(group).get("uid") or "")
    return OPERATOR_GROUP_UID_LABEL_PREFIX + uid if uid else None


def desired_group_labels(namespace: str, groups: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """The `olm.operatorgroup.uid/*` labels `namespace` should carry."""
    wanted: dict[str, str] = {}
    for group in groups:
        targets = frozenset(status_namespaces(group) or ())
        key = group_label_key(group)
        if key and not is_all(targets) and namespace in targets:
            wanted[key] = ""
    return wanted


def namespace_label_patch(
    namespace: str, labels: Mapping[str, str], groups: Iterable[Mapping[str, Any]]
) -> dict[str, str | None] | None:
    """A merge patch of `metadata.labels` (None deletes a key) that brings the namespace's
    group labels in step, or None when they already are."""
    wanted = desired_group_labels(namespace, groups)
    patch: dict[str, str | None] = {
        key: None
        for key in labels
        if key.startswith(OPERATOR_GROUP_UID_LABEL_PREFIX) and key not in wanted
    }
    patch.update({key: value for key, value in wanted.items() if labels.get(key) != value})
    return patch or None


def namespaces_to_relabel(before: Iterable[str] | None, after: Iterable[str] | None) -> list[str]:
    """Namespaces whose labels a target change touches: added or removed ones, never "" (OLM's
    namespacesAddedOrRemoved). Pass `after=None` when the group was deleted."""
    old, new = set(before or ()), set(after or ())
    return sorted((old ^ new) - {ALL_NAMESPACES})
