"""Whether one CRD may be deleted, decided on plain data (no I/O).

Invariants:
- A CRD is deleted only under the `crds-when-unused` policy, only when the listing of its
  custom resources in every namespace succeeded and found none, and only when no installed
  CSV but the uninstalled package's own owns or requires it (copies and CSVs being deleted are
  not installed). Whatever could not be read blocks: nothing unproven is deleted.
- A blocked CRD is remembered on the CRD itself (olm.api.cleanup: `olm-py.io/cleanup` and the
  Operators waiting in `olm-py.io/cleanup-operators`), so a later run finds it after the
  Subscription and CSV are gone; under `keep`, the run forgets what an earlier one asked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.cleanup import CLEANUP_ANNOTATION, CLEANUP_OPERATORS_ANNOTATION, CleanupPolicy
from olm.csv.replacement import is_copy
from olm.operator.objects import owned_crd_names

Obj = Mapping[str, Any]
SHOWN = 10  # custom resources named per CRD; the rest are counted


# The shared readers of plain object bodies (olm.api.body).
_meta, _name, _ns = body.meta, body.name, body.namespace
_annotations = body.annotations


@dataclass(frozen=True)
class Remaining:
    """The custom resources of one CRD, as listed in every namespace. `error` is set when no
    served version could be listed: then nobody knows whether some remain."""

    kind: str
    keys: tuple[str, ...] = ()  # "namespace/name", or "name" when cluster-scoped
    error: str = ""


@dataclass(frozen=True)
class CrdVerdict:
    name: str
    policy: CleanupPolicy
    blockers: tuple[str, ...] = ()
    gone: str = ""  # non-empty: nothing to do ("not found", "being deleted")
    patch: Mapping[str, Any] | None = None  # the CRD's annotations to write (merge patch)
    remaining: int = 0

    @property
    def delete(self) -> bool:
        return self.policy is CleanupPolicy.CRDS_WHEN_UNUSED and not self.blockers and not self.gone


def pending_operators(crd: Obj) -> list[str]:
    """The Operators whose uninstall waits on `crd` (its cleanup-operators annotation)."""
    raw = _annotations(crd).get(CLEANUP_OPERATORS_ANNOTATION) or ""
    return sorted({part.strip() for part in raw.split(",") if part.strip()})


def awaits_cleanup(crd: Obj) -> bool:
    return _annotations(crd).get(CLEANUP_ANNOTATION) == CleanupPolicy.CRDS_WHEN_UNUSED


def required_crd_names(csv: Obj) -> list[str]:
    definitions = (csv.get("spec") or {}).get("customresourcedefinitions") or {}
    return [
        str(entry.get("name"))
        for entry in definitions.get("required") or []
        if isinstance(entry, Mapping) and entry.get("name")
    ]


def judge_crd(
    name: str,
    crd: Obj | None,
    policy: CleanupPolicy,
    remaining: Remaining | None,
    cluster_csvs: Sequence[Obj] | None,
    cluster_csvs_error: str,
    ours: Iterable[tuple[str, str]],
    operator: str = "",
) -> CrdVerdict:
    """Whether CRD `name` may go: what blocks it (custom resources, other CSVs, what could not
    be listed), and the annotation patch that remembers a blocked cleanup (or forgets one)."""
    if crd is None:
        return CrdVerdict(name, policy, gone="not found (already deleted)")
    if _meta(crd).get("deletionTimestamp"):
        return CrdVerdict(name, policy, gone="already being deleted")
    blockers: list[str] = []
    count = 0
    if remaining is None or remaining.error:
        why = remaining.error if remaining else "they were not listed"
        blockers.append(f"cannot tell whether custom resources remain: {why}")
    elif remaining.keys:
        count = len(remaining.keys)
        shown = ", ".join(remaining.keys[:SHOWN])
        more = f" and {count - SHOWN} more" if count > SHOWN else ""
        verb = "remains" if count == 1 else "remain"
        blockers.append(f"{count} {remaining.kind} {verb}: {shown}{more}")
    own = set(ours)
    if cluster_csvs is None:
        blockers.append(
            "cannot tell whether another operator needs it: ClusterServiceVersions of every "
            f"namespace could not be listed: {cluster_csvs_error}"
        )
    else:
        for csv in sorted(cluster_csvs, key=lambda c: (_ns(c), _name(c))):
            if is_copy(csv) or _meta(csv).get("deletionTimestamp") or (_ns(csv), _name(csv)) in own:
                continue
            if name in owned_crd_names(csv):
                blockers.append(f"owned by ClusterServiceVersion {_ns(csv)}/{_name(csv)}")
            elif name in required_crd_names(csv):
                blockers.append(f"required by ClusterServiceVersion {_ns(csv)}/{_name(csv)}")
    return CrdVerdict(
        name,
        policy,
        tuple(blockers),
        patch=mark(crd, operator)
        if policy is CleanupPolicy.CRDS_WHEN_UNUSED and blockers
        else None,
        remaining=count,
    )


def mark(crd: Obj, operator: str) -> Mapping[str, Any] | None:
    """The merge patch recording that `operator`'s uninstall waits on `crd`; None if it says so."""
    operators = sorted({*pending_operators(crd), *([operator] if operator else [])})
    joined = ",".join(operators)
    if (
        awaits_cleanup(crd)
        and (_annotations(crd).get(CLEANUP_OPERATORS_ANNOTATION) or "") == joined
    ):
        return None
    annotations: dict[str, Any] = {CLEANUP_ANNOTATION: CleanupPolicy.CRDS_WHEN_UNUSED.value}
    if joined:
        annotations[CLEANUP_OPERATORS_ANNOTATION] = joined
    return {"metadata": {"annotations": annotations}}


def unmark(crd: Obj, operator: str) -> Mapping[str, Any] | None:
    """Under `keep`: forget a cleanup an earlier uninstall of this Operator left waiting."""
    operators = pending_operators(crd)
    if operator not in operators:
        return None
    rest = [o for o in operators if o != operator]
    annotations: dict[str, Any] = {CLEANUP_OPERATORS_ANNOTATION: ",".join(rest) or None}
    if not rest:
        annotations[CLEANUP_ANNOTATION] = None
    return {"metadata": {"annotations": annotations}}
