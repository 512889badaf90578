"""`olm explain`'s one entry point: the object asked about, found in the snapshot, explained by
the explainer of its kind.

Invariants: pure; None only when the object is not in the snapshot (the command says so, and
how to list what there is); otherwise an explanation with the object as its first link.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from olm.api.kinds import Kind
from olm.explain.catalog import explain_catalog
from olm.explain.csv import explain_csv
from olm.explain.groups import explain_group
from olm.explain.installplan import explain_plan
from olm.explain.model import Explanation, Obj, Snapshot, by_name
from olm.explain.subscription import explain_subscription

Explainer = Callable[[Snapshot, Obj], Explanation]


def _candidates(snapshot: Snapshot, kind: Kind) -> Sequence[Obj]:
    return {
        Kind.SUBSCRIPTION: snapshot.subscriptions,
        Kind.CLUSTER_SERVICE_VERSION: snapshot.csvs,
        Kind.INSTALL_PLAN: snapshot.install_plans,
        Kind.OPERATOR_GROUP: snapshot.operator_groups,
        Kind.CATALOG_SOURCE: snapshot.catalog_sources,
    }[kind]


EXPLAINERS: dict[Kind, Explainer] = {
    Kind.SUBSCRIPTION: explain_subscription,
    Kind.CLUSTER_SERVICE_VERSION: lambda snapshot, csv: explain_csv(snapshot, csv),
    Kind.INSTALL_PLAN: lambda snapshot, plan: explain_plan(snapshot, plan),
    Kind.OPERATOR_GROUP: explain_group,
    Kind.CATALOG_SOURCE: explain_catalog,
}


def find(snapshot: Snapshot, kind: Kind, name: str) -> Obj | None:
    return by_name(_candidates(snapshot, kind), name, snapshot.namespace)


def explain(snapshot: Snapshot, kind: Kind, name: str) -> Explanation | None:
    obj = find(snapshot, kind, name)
    if obj is None:
        return None
    explanation = EXPLAINERS[kind](snapshot, obj)
    if snapshot.unreadable:
        notes = tuple(
            f"could not read {what}; the chain may stop short" for what in snapshot.unreadable
        )
        explanation = Explanation(
            explanation.links,
            explanation.verdict,
            explanation.cause,
            explanation.fixes,
            (*explanation.notes, *notes),
        )
    return explanation
