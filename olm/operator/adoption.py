"""Which objects carry an Operator's component label: OLM v0.38's adoption controller
(`pkg/controller/operators/adoption_controller.go`), for one namespace at a time.

For each Subscription with a `spec.name`, the key of `<spec.name>.<namespace>` goes on:
1. the Subscription;
2. its `status.installedCSV` (copies are not seen);
3. its `status.installPlanRef` InstallPlan, and comes off every other InstallPlan of the
   namespace that has it (only the latest plan is a component).
Then, for every `operators.coreos.com/*` key a CSV of the namespace carries (including the ones
step 2 just gave it), the key goes on every object OLM's caches show (`objects.visible`) that
the CSV owns (`objects.owned_by`: in any namespace, or cluster-scoped) and on the CRDs it owns
by name (`spec.customresourcedefinitions.owned`).

Invariants:
- A label is added only where it is missing and removed only where it is present: running
  `decide` again over what its writes produce plans nothing.
- Adding wins: a key some Subscription puts on an InstallPlan is never taken off it.
- A key the API server would refuse (`names.label_key_problem`) is not written anywhere; the
  plan says why instead (OLM retries the refused patch for ever).
- Pure: reads only its argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api.body import labels, meta, name, namespace
from olm.api.labels import COMPONENT_LABEL_VALUE
from olm.api.operator import COMPONENTS_BY_KIND, ComponentKind
from olm.operator.names import (
    component_label_key,
    is_component_key,
    label_key_problem,
    package_operator_name,
)
from olm.operator.objects import owned_by, owned_crd_names, visible

SUBSCRIPTION = COMPONENTS_BY_KIND["Subscription"]
INSTALL_PLAN = COMPONENTS_BY_KIND["InstallPlan"]
CSV = COMPONENTS_BY_KIND["ClusterServiceVersion"]
CRD = COMPONENTS_BY_KIND["CustomResourceDefinition"]

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Candidate:
    """An object of another component kind that may belong to a CSV of the namespace."""

    kind: ComponentKind
    obj: Obj


@dataclass(frozen=True)
class AdoptionSnapshot:
    namespace: str
    subscriptions: Sequence[Obj] = ()
    csvs: Sequence[Obj] = ()  # the namespace's CSVs (copies are left out by OLM's cache)
    plans: Sequence[Obj] = ()  # the namespace's InstallPlans
    # Deployments, ServiceAccounts, RBAC, CRDs, ... that may belong to those CSVs
    # (`objects.may_belong_to_namespace`, and the CRDs they own by name).
    others: Sequence[Candidate] = ()


@dataclass(frozen=True)
class LabelWrite:
    """Labels to add (value "") and to remove on one object, as one JSON merge patch."""

    kind: ComponentKind
    namespace: str
    name: str
    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()

    def patch(self) -> dict[str, Any]:
        changes: dict[str, str | None] = {key: COMPONENT_LABEL_VALUE for key in self.add}
        changes.update({key: None for key in self.remove})
        return {"metadata": {"labels": changes}}

    def applied_to(self, obj: Obj) -> dict[str, Any]:
        """`obj` as the patch leaves it (for writing through to a cache)."""
        new = {k: v for k, v in labels(obj).items() if k not in self.remove}
        new.update({key: COMPONENT_LABEL_VALUE for key in self.add})
        return {**obj, "metadata": {**meta(obj), "labels": new}}

    @property
    def subject(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind.kind} {where}"


@dataclass(frozen=True)
class Problem:
    subject: str  # "Subscription ns/name"
    message: str


@dataclass(frozen=True)
class AdoptionPlan:
    writes: tuple[LabelWrite, ...] = ()
    problems: tuple[Problem, ...] = ()


@dataclass
class _Labels:
    """The label changes planned so far, per object, in the order first met."""

    order: list[tuple[ComponentKind, Obj]] = field(default_factory=list)
    slots: dict[tuple[str, int], int] = field(default_factory=dict)  # (kind, id(obj)) -> slot
    add: dict[int, set[str]] = field(default_factory=dict)
    remove: dict[int, set[str]] = field(default_factory=dict)

    def _slot(self, kind: ComponentKind, obj: Obj) -> int:
        index = self.slots.get((kind.kind, id(obj)))
        if index is None:
            index = self.slots[(kind.kind, id(obj))] = len(self.order)
            self.order.append((kind, obj))
        return index

    def adopt(self, kind: ComponentKind, obj: Obj, key: str) -> None:
        if key in labels(obj):
            return
        self.add.setdefault(self._slot(kind, obj), set()).add(key)

    def disown(self, kind: ComponentKind, obj: Obj, key: str) -> None:
        if key in labels(obj):
            self.remove.setdefault(self._slot(kind, obj), set()).add(key)

    def keys_of(self, kind: ComponentKind, obj: Obj) -> set[str]:
        """The component keys `obj` will carry once the planned writes are done."""
        have = {key for key in labels(obj) if is_component_key(key)}
        index = self.slots.get((kind.kind, id(obj)))
        return have | self.add.get(index, set()) if index is not None else have

    def writes(self) -> tuple[LabelWrite, ...]:
        out = []
        for index, (kind, obj) in enumerate(self.order):
            add = self.add.get(index, set())
            remove = self.remove.get(index, set()) - add
            if add or remove:
                out.append(
                    LabelWrite(
                        kind, namespace(obj), name(obj), tuple(sorted(add)), tuple(sorted(remove))
                    )
                )
        return tuple(out)


def subscription_key(subscription: Obj) -> tuple[str | None, str | None]:
    """(label key, problem) of a Subscription's Operator; (None, None) without spec.name."""
    package = str((subscription.get("spec") or {}).get("name") or "")
    if not package:
        return None, None
    operator = package_operator_name(package, namespace(subscription))
    key = component_label_key(operator)
    if key is None:
        return None, (
            f'spec.name "{package}" gives the Operator name "{operator}", from which no label '
            "key can be made (nothing is left after cutting it to 63 characters)"
        )
    problem = label_key_problem(key)
    if problem is not None:
        return None, (
            f'spec.name "{package}" gives the Operator label key "{key}", which the API '
            f"server would refuse: {problem}. olm-py labels none of this Subscription's "
            "components and makes no Operator object for it; use the package name as the "
            "catalog spells it"
        )
    return key, None


def decide_adoption(snapshot: AdoptionSnapshot) -> AdoptionPlan:
    plan = _Labels()
    problems: list[Problem] = []
    csvs = {name(csv): csv for csv in snapshot.csvs}
    plans = {name(p): p for p in snapshot.plans}
    kept: set[tuple[str, str]] = set()  # (plan, key) some Subscription puts there
    dropped: list[tuple[Obj, str]] = []
    for subscription in snapshot.subscriptions:
        key, problem = subscription_key(subscription)
        if problem is not None:
            where = f"{snapshot.namespace}/{name(subscription)}"
            problems.append(Problem(f"Subscription {where}", problem))
        if key is None:
            continue
        plan.adopt(SUBSCRIPTION, subscription, key)
        status = subscription.get("status") or {}
        installed = csvs.get(str(status.get("installedCSV") or ""))
        if installed is not None:
            plan.adopt(CSV, installed, key)
        ref = status.get("installPlanRef") or {}
        latest = str(ref.get("name") or "")
        if latest and str(ref.get("namespace") or snapshot.namespace) == snapshot.namespace:
            if latest in plans:
                plan.adopt(INSTALL_PLAN, plans[latest], key)
                kept.add((latest, key))
            dropped += [(p, key) for n, p in plans.items() if n != latest]
    for older, key in dropped:
        if (name(older), key) not in kept:
            plan.disown(INSTALL_PLAN, older, key)

    for csv in snapshot.csvs:
        keys = sorted(plan.keys_of(CSV, csv))
        if not keys:
            continue
        owned_crds = set(owned_crd_names(csv))
        for candidate in snapshot.others:
            kind, obj = candidate.kind, candidate.obj
            if not visible(kind, obj):
                continue
            if owned_by(obj, csv) or (kind is CRD and name(obj) in owned_crds):
                for key in keys:
                    plan.adopt(kind, obj, key)
    return AdoptionPlan(plan.writes(), tuple(problems))
