"""The wake graph is whole and says what it does: every watched kind has an entry, and the
keys its changes wake are of exactly the work kinds its entry lists (over a store where every
rule finds something to wake)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.api.catalogsource import CATALOG_SOURCE_LABEL
from olm.api.csv import CsvPhase, CsvReason
from olm.api.installplan import InstallPlanPhase
from olm.api.labels import Annotation, Label
from olm.api.scope import OPGROUP_AGGREGATE_TO_PREFIX
from olm.controllers.queue import WorkKind
from olm.controllers.store import Store, StoreKind
from olm.controllers.wake.graph import WAKE_GRAPH, related_keys, resync_keys
from olm.controllers.watch import WATCHED
from olm.installplan.status import ATTENUATED_REF
from olm.scope.apiroles import CRD_OWNER_KIND

NS = "ns"
CRD = "things.example.org"
OPERATOR_LABEL = "operators.coreos.com/pkg.ns"


def obj(namespace: str, name: str, rv: str = "1", **parts: Any) -> dict[str, Any]:
    meta = {"namespace": namespace, "name": name, "resourceVersion": rv, "uid": f"uid-{name}"}
    return {"metadata": {**meta, **parts.pop("metadata", {})}, **parts}


def world() -> Store:
    """One of everything, related so that every rule has keys to give."""
    store = Store()
    owned = {"customresourcedefinitions": {"owned": [{"name": CRD}]}}
    store.upsert(
        StoreKind.CSV,
        obj(
            NS,
            "csv.v1",
            spec=owned,
            status={
                "phase": CsvPhase.SUCCEEDED,
                "reason": CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT,
            },
        ),
    )
    store.upsert(StoreKind.CSV, obj(NS, "csv.v2", spec={"replaces": "csv.v1"}))
    store.upsert(
        StoreKind.OPERATOR_GROUP,
        obj(
            NS,
            "og",
            spec={"serviceAccountName": "sa", "selector": {}},
            status={"namespaces": [""]},
        ),
    )
    store.upsert(
        StoreKind.INSTALL_PLAN,
        obj(
            NS,
            "plan",
            status={"phase": InstallPlanPhase.INSTALLING, ATTENUATED_REF: {"name": "sa"}},
        ),
    )
    store.upsert(StoreKind.SUBSCRIPTION, obj(NS, "sub"))
    store.upsert(StoreKind.NAMESPACE, obj("", NS))
    store.upsert(StoreKind.NAMESPACE, obj("", "other"))
    store.upsert(StoreKind.OLM_CONFIG, obj("", "cluster"))
    return store


def changes(kind: StoreKind) -> list[tuple[dict[str, Any], dict[str, Any] | None, bool]]:
    """Events of `kind` that reach each branch: new, relabelled, spec-changed, deleted."""
    namespace = "" if kind in (StoreKind.NAMESPACE, StoreKind.CRD, StoreKind.OLM_CONFIG) else NS
    name = CRD if kind == StoreKind.CRD else "x"
    if kind == StoreKind.NAMESPACE:
        name = NS
    if kind == StoreKind.SERVICE_ACCOUNT:
        name = "sa"  # the group's
    labels_by_owner = [
        {
            Label.OWNER: "csv.v1",
            Label.OWNER_NAMESPACE: NS,
            Label.OWNER_KIND: "ClusterServiceVersion",
        },
        {
            Label.OWNER: "csv.v1",
            Label.OWNER_NAMESPACE: NS,
            Label.OWNER_KIND: "ClusterServiceVersion",
            Label.COPIED_FROM: NS,
        },
        {Label.OWNER: "og", Label.OWNER_NAMESPACE: NS, Label.OWNER_KIND: "OperatorGroup"},
        {OPGROUP_AGGREGATE_TO_PREFIX + "og": "true", OPERATOR_LABEL: ""},
        {CATALOG_SOURCE_LABEL: "catalog"},  # a catalog registry's NetworkPolicy
    ]
    events: list[tuple[dict[str, Any], dict[str, Any] | None, bool]] = []
    for labels in labels_by_owner:
        new = obj(
            namespace,
            name,
            "2",
            metadata={
                "labels": labels,
                "annotations": {Annotation.PROVIDED_APIS: "Thing.v1.example.org"},
                "ownerReferences": [{"kind": CRD_OWNER_KIND, "name": CRD}],
            },
            spec={"serviceAccountName": "sa", "replaces": "csv.v1", "targetNamespaces": [NS]},
            status={"installedCSV": "csv.v1", "namespaces": [NS]},
        )
        old = obj(namespace, name, "1", spec={}, status={})
        status_only = copy.deepcopy(new)
        status_only["status"] = {"phase": "Other"}
        events += [(new, None, False), (new, old, False), (status_only, new, False)]
        events += [(new, new, True)]
    return events


def test_every_watched_kind_has_an_entry_and_nothing_else_does() -> None:
    assert {w.kind for w in WATCHED} == set(WAKE_GRAPH) == set(StoreKind)


@pytest.mark.parametrize("kind", list(StoreKind))
def test_a_change_wakes_exactly_the_work_kinds_its_entry_lists(kind: StoreKind) -> None:
    store = world()
    woken: set[str] = set()
    for new, old, deleted in changes(kind):
        for key in related_keys(kind, new, store, old, deleted=deleted):
            woken.add(key[0])
    assert woken <= WAKE_GRAPH[kind].kinds, f"not in the graph: {woken - WAKE_GRAPH[kind].kinds}"
    assert woken == WAKE_GRAPH[kind].kinds, f"never woken: {WAKE_GRAPH[kind].kinds - woken}"


def test_a_resync_wakes_controller_keys_only() -> None:
    assert {key[0] for key in resync_keys(world())} <= set(WorkKind)


def test_a_resync_wakes_the_gone_owner_of_an_apiservice_so_it_is_collected() -> None:
    store = world()
    owners = {"olm.owner.kind": "ClusterServiceVersion", "olm.owner.namespace": NS}
    gone = obj("", "v1.gone.example.org", "1", metadata={"labels": {**owners, "olm.owner": "gone"}})
    store.upsert(StoreKind.CSV_API_SERVICE, gone)
    store.upsert(StoreKind.CSV, obj(NS, "here", "1"))
    kept = obj("", "v1.here.example.org", "1", metadata={"labels": {**owners, "olm.owner": "here"}})
    store.upsert(StoreKind.CSV_API_SERVICE, kept)
    keys = resync_keys(store)
    assert (WorkKind.CSV, NS, "gone") in keys
    assert keys.count((WorkKind.CSV, NS, "here")) == 1  # once, as a CSV of the store
