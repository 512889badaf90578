"""The uninstall of one package from one namespace, decided on plain data (no I/O).

`decide(snapshot, remaining)` says what `olm uninstall-operator` deletes itself, what the
garbage collector and olm-py remove after it, what stays and why, and, per CRD the package
owns, whether it is deleted now. Invariants:

- Operands (custom resources) are never deleted, and a CRD is deleted only when the listing of
  its custom resources succeeded and found none, and no installed CSV other than the package's
  own (copies and CSVs being deleted are not installed) owns or requires it.
- A CRD is deleted only under the `crds-when-unused` policy (olm.api.cleanup): from the flag,
  else the Subscription's annotation, else (no Subscription: a later run) the CRD's own
  annotation that an earlier run wrote. `keep` is the default.
- Only objects that are the package's are deleted: its Subscriptions (by `spec.name`), the
  original CSVs they name or OLM's component label marks, and InstallPlans that install
  nothing but those CSVs and that no other Subscription points at. What the garbage collector
  removes is reported, not deleted (ownerReferences all to objects that go).
- The same input gives the same plan; running the plan twice is harmless (a second run finds
  less and does less).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.cleanup import (
    CLEANUP_ANNOTATION,
    DEFAULT_CLEANUP,
    CleanupPolicy,
)
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.csv.replacement import is_copy
from olm.operator.names import component_label_key, package_operator_name
from olm.operator.objects import owned_crd_names
from olm.uninstall.crds import (
    CrdVerdict,
    Remaining,
    awaits_cleanup,
    judge_crd,
    pending_operators,
    unmark,
)

Obj = Mapping[str, Any]
CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
SUBSCRIPTION = KINDS[Kind.SUBSCRIPTION]
INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
CRD_API = "apiextensions.k8s.io/v1"
CRD_KIND = "CustomResourceDefinition"


@dataclass(frozen=True, order=True)
class Ref:
    kind: str
    namespace: str  # "" for cluster-scoped objects
    name: str
    api_version: str = field(default="", compare=False)

    def __str__(self) -> str:
        return (
            f"{self.kind} {self.namespace}/{self.name}"
            if self.namespace
            else f"{self.kind} {self.name}"
        )


@dataclass(frozen=True)
class Snapshot:
    package: str  # "" with --pending: every CRD awaiting cleanup, of any package
    namespace: str
    subscriptions: Sequence[Obj] = ()  # every Subscription of the namespace
    csvs: Sequence[Obj] = ()  # every CSV of the namespace
    install_plans: Sequence[Obj] = ()  # every InstallPlan of the namespace
    crds: Sequence[Obj] = ()  # every CRD of the cluster
    cluster_csvs: Sequence[Obj] | None = ()  # every CSV of the cluster; None: not listable
    cluster_csvs_error: str = ""
    dependents: Sequence[Obj] = ()  # objects of the namespace that may be owned (for the report)
    label_owned: Mapping[str, Sequence[Ref]] = field(default_factory=dict)  # csv -> cluster RBAC
    operator: Obj | None = None  # the Operator `<package>.<namespace>`, if it exists
    operator_groups: Sequence[Obj] = ()
    flag: CleanupPolicy | None = None  # --crds-when-unused


@dataclass(frozen=True)
class Removed:
    """An object someone else removes once the explicit deletes are done."""

    ref: Ref
    by: str  # "garbage collector" | "olm-py"
    why: str


@dataclass(frozen=True)
class Left:
    ref: Ref
    why: str


@dataclass(frozen=True)
class Plan:
    package: str
    namespace: str
    policy: CleanupPolicy
    policy_source: str
    deletes: tuple[Ref, ...] = ()  # in this order
    removed: tuple[Removed, ...] = ()
    left: tuple[Left, ...] = ()
    crds: tuple[CrdVerdict, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def found(self) -> bool:
        return bool(self.deletes or self.crds)

    @property
    def blocked(self) -> tuple[CrdVerdict, ...]:
        return tuple(
            v for v in self.crds if v.policy is CleanupPolicy.CRDS_WHEN_UNUSED and v.blockers
        )


# The shared readers of plain object bodies (olm.api.body).
_meta, _name, _ns = body.meta, body.name, body.namespace
_annotations = body.annotations


def _ref(obj: Obj, kind: str = "", api_version: str = "") -> Ref:
    return Ref(
        kind or str(obj.get("kind") or ""),
        _ns(obj),
        _name(obj),
        api_version or str(obj.get("apiVersion") or ""),
    )


def operator_name(package: str, namespace: str) -> str:
    return package_operator_name(package, namespace)


def parse_policy(value: str | None) -> CleanupPolicy | None:
    """The policy an annotation value names; None for a value outside the closed set."""
    try:
        return CleanupPolicy(value or DEFAULT_CLEANUP)
    except ValueError:
        return None


def package_subscriptions(snapshot: Snapshot) -> list[Obj]:
    return sorted(
        (
            s
            for s in snapshot.subscriptions
            if snapshot.package and (s.get("spec") or {}).get("name") == snapshot.package
        ),
        key=_name,
    )


def package_csvs(snapshot: Snapshot) -> list[Obj]:
    """The package's original CSVs in the namespace: those its Subscriptions name (installed,
    or current), and those OLM's component label marks (a Subscription deleted earlier)."""
    if not snapshot.package:
        return []
    named: set[str] = set()
    for sub in package_subscriptions(snapshot):
        status = sub.get("status") or {}
        named.update(str(status[k]) for k in ("installedCSV", "currentCSV") if status.get(k))
    key = component_label_key(operator_name(snapshot.package, snapshot.namespace))
    return sorted(
        (
            csv
            for csv in snapshot.csvs
            if not is_copy(csv)
            and (
                _name(csv) in named or (key is not None and key in (_meta(csv).get("labels") or {}))
            )
        ),
        key=_name,
    )


def candidate_crds(snapshot: Snapshot) -> list[str]:
    """The CRDs this run judges: those the package's CSVs own, those an earlier run marked for
    this package, and those OLM's component label marks; with --pending, every marked CRD."""
    names: set[str] = set()
    if not snapshot.package:
        names.update(_name(c) for c in snapshot.crds if awaits_cleanup(c))
        return sorted(names)
    for csv in package_csvs(snapshot):
        names.update(owned_crd_names(csv))
    me = operator_name(snapshot.package, snapshot.namespace)
    key = component_label_key(me)
    for crd in snapshot.crds:
        if me in pending_operators(crd) or (key and key in (_meta(crd).get("labels") or {})):
            names.add(_name(crd))
    return sorted(names)


def _policy(snapshot: Snapshot, subs: Sequence[Obj]) -> tuple[CleanupPolicy | None, str, list[str]]:
    """The run's policy, where it came from, and notes; None: no Subscription says, each CRD's
    own annotation decides."""
    if snapshot.flag is not None:
        return snapshot.flag, "from --crds-when-unused", []
    if not subs:
        return None, "", []
    notes: list[str] = []
    chosen: list[CleanupPolicy] = []
    for sub in subs:
        value = _annotations(sub).get(CLEANUP_ANNOTATION)
        policy = parse_policy(value)
        if policy is None:
            notes.append(
                f"Subscription {_ns(sub)}/{_name(sub)}: {CLEANUP_ANNOTATION}={value!r} is not one "
                f"of {', '.join(p.value for p in CleanupPolicy)}; read as keep"
            )
            policy = CleanupPolicy.KEEP
        chosen.append(policy)
    # Several Subscriptions for one package (OLM refuses to resolve that): delete CRDs only if
    # every one of them asks for it.
    if all(p is CleanupPolicy.CRDS_WHEN_UNUSED for p in chosen):
        return (
            CleanupPolicy.CRDS_WHEN_UNUSED,
            f"from the Subscription's {CLEANUP_ANNOTATION} annotation",
            notes,
        )
    source = (
        f"the default; annotate the Subscription {CLEANUP_ANNOTATION}=crds-when-unused "
        "or pass --crds-when-unused to delete unused CRDs"
    )
    if any(_annotations(s).get(CLEANUP_ANNOTATION) for s in subs):
        source = f"from the Subscription's {CLEANUP_ANNOTATION} annotation"
    return CleanupPolicy.KEEP, source, notes


def _plans(
    snapshot: Snapshot, subs: Sequence[Obj], csv_names: set[str]
) -> tuple[list[Ref], list[Left]]:
    """The package's InstallPlans: deleted when they install nothing but its CSVs and no other
    Subscription points at them; else left to the garbage collector (they are owned by every
    Subscription of the namespace, as OLM makes them)."""
    sub_uids = {str(_meta(s).get("uid") or "") for s in subs} - {""}
    ours_refd = {_plan_ref(s) for s in subs} - {""}
    others = [s for s in snapshot.subscriptions if s not in subs]
    deleted: list[Ref] = []
    left: list[Left] = []
    for plan in sorted(snapshot.install_plans, key=_name):
        names = set((plan.get("spec") or {}).get("clusterServiceVersionNames") or [])
        owners = {str(o.get("uid")) for o in _meta(plan).get("ownerReferences") or []}
        if not (owners & sub_uids or _name(plan) in ours_refd or names & csv_names):
            continue
        ref = _ref(plan, INSTALL_PLAN.kind.value, INSTALL_PLAN.api_version)
        pointing = sorted(_name(s) for s in others if _plan_ref(s) == _name(plan))
        foreign = sorted(names - csv_names)
        if pointing:
            left.append(Left(ref, f"Subscription {', '.join(pointing)} points at it"))
        elif foreign:
            left.append(
                Left(
                    ref,
                    f"it also installs {', '.join(foreign)}; the garbage collector removes it "
                    "once none of the Subscriptions owning it remains",
                )
            )
        else:
            deleted.append(ref)
    return deleted, left


def _plan_ref(sub: Obj) -> str:
    status = sub.get("status") or {}
    return str(
        (status.get("installPlanRef") or {}).get("name")
        or (status.get("installplan") or {}).get("name")
        or ""
    )


def _removed(snapshot: Snapshot, deletes: Sequence[Ref], csvs: Sequence[Obj]) -> list[Removed]:
    """What goes after the explicit deletes: dependents whose every owner goes (the garbage
    collector, transitively), the copies of the CSVs and the cluster RBAC labelled as theirs
    (olm-py: the scope controller and the csv-cleanup finalizer)."""
    plans = {r.name for r in deletes if r.kind == INSTALL_PLAN.kind.value}
    going = [
        *package_subscriptions(snapshot),
        *csvs,
        *(p for p in snapshot.install_plans if _name(p) in plans),
    ]
    uids = {str(_meta(obj).get("uid")) for obj in going if _meta(obj).get("uid")}
    result: list[Removed] = []
    pending = list(snapshot.dependents)
    changed = True
    while changed:  # the OperatorCondition's Role goes with the OperatorCondition, and so on
        changed = False
        for obj in list(pending):
            owners = _meta(obj).get("ownerReferences") or []
            if owners and all(str(o.get("uid")) in uids for o in owners):
                first = owners[0]
                result.append(
                    Removed(
                        _ref(obj),
                        "garbage collector",
                        f"owned by {first.get('kind')} {first.get('name')}",
                    )
                )
                if _meta(obj).get("uid"):
                    uids.add(str(_meta(obj).get("uid")))
                pending.remove(obj)
                changed = True
    names = {_name(c) for c in csvs}
    for csv in snapshot.cluster_csvs or ():
        labels = _meta(csv).get("labels") or {}
        if (
            is_copy(csv)
            and _name(csv) in names
            and labels.get(Label.COPIED_FROM) == snapshot.namespace
        ):
            result.append(
                Removed(
                    _ref(csv, CSV.kind.value, CSV.api_version),
                    "olm-py",
                    "a copy of the deleted CSV, with the RBAC copied beside it",
                )
            )
    for csv in csvs:
        for ref in snapshot.label_owned.get(_name(csv), ()):
            result.append(Removed(ref, "olm-py", "the CSV's csv-cleanup finalizer"))
    return sorted(result, key=lambda r: (r.by, r.ref))


def decide(snapshot: Snapshot, remaining: Mapping[str, Remaining]) -> Plan:
    """The whole uninstall: `remaining` holds the custom resources of each `candidate_crds`."""
    subs = package_subscriptions(snapshot)
    csvs = package_csvs(snapshot)
    policy, source, notes = _policy(snapshot, subs)
    csv_names = {_name(c) for c in csvs}
    for sub in subs:
        status = sub.get("status") or {}
        csv_names.update(str(status[k]) for k in ("installedCSV", "currentCSV") if status.get(k))
    deletes = [_ref(s, SUBSCRIPTION.kind.value, SUBSCRIPTION.api_version) for s in subs]
    deletes += [_ref(c, CSV.kind.value, CSV.api_version) for c in csvs]
    plans, left = _plans(snapshot, subs, csv_names)
    deletes += plans
    removed = _removed(snapshot, deletes, csvs)
    me = operator_name(snapshot.package, snapshot.namespace) if snapshot.package else ""
    crds_by_name = {_name(c): c for c in snapshot.crds}
    ours = [(_ns(c), _name(c)) for c in csvs]
    verdicts: list[CrdVerdict] = []
    for name in candidate_crds(snapshot):
        crd = crds_by_name.get(name)
        chosen = policy
        if chosen is None:  # no Subscription any more: what an earlier run wrote on the CRD
            chosen = (
                CleanupPolicy.CRDS_WHEN_UNUSED if crd and awaits_cleanup(crd) else DEFAULT_CLEANUP
            )
        verdict = judge_crd(
            name,
            crd,
            chosen,
            remaining.get(name),
            snapshot.cluster_csvs,
            snapshot.cluster_csvs_error,
            ours,
            me,
        )
        if chosen is CleanupPolicy.KEEP and crd is not None and me:
            verdict = CrdVerdict(
                verdict.name,
                chosen,
                verdict.blockers,
                verdict.gone,
                unmark(crd, me),
                verdict.remaining,
            )
        verdicts.append(verdict)
    if policy is None:
        asked = any(v.policy is CleanupPolicy.CRDS_WHEN_UNUSED for v in verdicts)
        policy = CleanupPolicy.CRDS_WHEN_UNUSED if asked else DEFAULT_CLEANUP
        source = (
            f"as each CRD's {CLEANUP_ANNOTATION} annotation says, no Subscription being left"
            if asked
            else "the default, no Subscription being left"
        )
    if not snapshot.package:
        source = f"--pending: every CRD annotated {CLEANUP_ANNOTATION}=crds-when-unused"
    left += _left_beside(snapshot, subs, csvs, me)
    return Plan(
        snapshot.package,
        snapshot.namespace,
        policy,
        source,
        tuple(deletes),
        tuple(removed),
        tuple(left),
        tuple(verdicts),
        tuple(notes),
    )


def _left_beside(
    snapshot: Snapshot, subs: Sequence[Obj], csvs: Sequence[Obj], me: str
) -> list[Left]:
    """The namespace's OperatorGroup and OLM's Operator summary: not the package's to delete."""
    left: list[Left] = []
    others = [s for s in snapshot.subscriptions if s not in subs]
    for group in sorted(snapshot.operator_groups, key=_name) if subs or csvs else ():
        why = "the namespace's, not the package's"
        why += (
            f"; Subscriptions {', '.join(sorted(_name(s) for s in others))} still use it"
            if others
            else "; no other Subscription is left in the namespace: delete it if nothing else needs it"
        )
        left.append(Left(_ref(group, KINDS[Kind.OPERATOR_GROUP].kind.value), why))
    if snapshot.operator is not None:
        key = component_label_key(me) or ""
        name = _name(snapshot.operator)
        left.append(
            Left(
                Ref(KINDS[Kind.OPERATOR].kind.value, "", name),
                f"OLM's summary of the package, which olm-py (as OLM) keeps while anything "
                f"carries the label {key}; once nothing does: kubectl delete operator {name}",
            )
        )
    return left
