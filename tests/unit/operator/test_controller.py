"""The adoption and Operator controllers over the in-memory gateway: labels and the Operator
are written once, a second pass over the written state writes nothing, a deleted Operator comes
back while components remain, and a refused name is said once."""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from olm.controllers.operator import (
    COMPONENT_OF_STORE,
    STORE_KIND,
    AdoptionController,
    OperatorController,
    controllers,
    trim,
)
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.controllers.wake.operator import operator_keys, resync_operator_keys
from olm.kube.fake import FakeGateway
from tests.unit.operator.objects import (
    CSV_NAME,
    KEY,
    MANAGED,
    NS,
    csv,
    obj,
    owner,
    plan,
    subscription,
)

NAME = f"memcached-operator.{NS}"
OPERATOR = ("operators.coreos.com/v1", "Operator")


def sync(store: Store, fake: FakeGateway) -> None:
    """What the watch would bring: the store holds exactly what the fake holds now."""
    wanted: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for o in fake.objects.values():
        kind = "operator" if o["kind"] == "Operator" else STORE_KIND.get(o["kind"])
        if kind is not None:
            meta = o["metadata"]
            wanted.setdefault(kind, {})[(meta.get("namespace") or "", meta["name"])] = o
    for kind in [*COMPONENT_OF_STORE, "operator"]:
        store.retain(kind, store.snapshot(kind), set(wanted.get(kind, {})))
        for o in wanted.get(kind, {}).values():
            store.upsert(kind, trim(kind, copy.deepcopy(o)))


def world(
    *objs: dict[str, Any],
) -> tuple[FakeGateway, Store, AdoptionController, OperatorController]:
    fake = FakeGateway()
    for o in objs:
        fake.put(o)
    store = Store()
    sync(store, fake)
    adoption, operators = controllers(store, fake, WorkQueue())
    return fake, store, adoption, operators


def installed() -> list[dict[str, Any]]:
    secret = obj(
        "v1",
        "Secret",
        "memcached-operator-service-cert",
        labels=MANAGED,
        owners=[owner()],
        data={"tls.key": "c2VjcmV0"},
    )
    applied = '{"data": {"tls.key": "c2VjcmV0"}}'
    secret["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": applied
    }
    return [
        subscription(),
        csv(),
        plan("install-1", {KEY: ""}),
        plan("install-2"),
        obj("apps/v1", "Deployment", "memcached-operator", labels=MANAGED, owners=[owner()]),
        obj("v1", "ServiceAccount", "memcached-operator", labels=MANAGED, owners=[owner()]),
        secret,
        obj(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "memcacheds.cache.example.com",
            "",
            MANAGED,
        ),
    ]


def labels_of(fake: FakeGateway, api: str, kind: str, namespace: str, name: str) -> dict[str, str]:
    return dict(fake.get(api, kind, namespace, name)["metadata"].get("labels") or {})


def fix_csv_uid(fake: FakeGateway, store: Store) -> None:
    """The fake gives the CSV a uid of its own; owners in the tests name CSV_UID."""
    body = fake.get("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, CSV_NAME)
    body["metadata"]["uid"] = "uid-csv"
    fake.objects[("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, CSV_NAME)] = body
    sync(store, fake)


def test_adoption_labels_the_components_once_by_merge_patch() -> None:
    fake, store, adoption, _ = world(*installed())
    fix_csv_uid(fake, store)
    adoption.reconcile("", NS)
    v1a1 = "operators.coreos.com/v1alpha1"
    assert KEY in labels_of(fake, v1a1, "Subscription", NS, "memcached")
    assert KEY in labels_of(fake, v1a1, "ClusterServiceVersion", NS, CSV_NAME)
    assert KEY in labels_of(fake, v1a1, "InstallPlan", NS, "install-2")
    assert KEY not in labels_of(fake, v1a1, "InstallPlan", NS, "install-1")
    assert KEY in labels_of(fake, "apps/v1", "Deployment", NS, "memcached-operator")
    assert KEY in labels_of(fake, "v1", "ServiceAccount", NS, "memcached-operator")
    assert KEY in labels_of(fake, "v1", "Secret", NS, "memcached-operator-service-cert")
    crd = labels_of(
        fake,
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "",
        "memcacheds.cache.example.com",
    )
    assert KEY in crd
    writes = fake.take_writes()
    assert {w.verb for w in writes} == {"patch"}  # never an apply: nothing else is touched
    # written through: the same store decides nothing more, and so does a fresh one
    adoption.reconcile("", NS)
    sync(store, fake)
    adoption.reconcile("", NS)
    assert fake.writes == []


def test_the_operator_is_created_with_its_components_then_left_alone() -> None:
    fake, store, adoption, operators = world(*installed())
    fix_csv_uid(fake, store)
    adoption.reconcile("", NS)
    sync(store, fake)
    fake.take_writes()
    operators.reconcile("", NAME)
    body = fake.get(*OPERATOR, None, NAME)
    refs = body["status"]["components"]["refs"]
    assert [r["kind"] for r in refs] == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
        "Deployment",
        "InstallPlan",
        "Secret",
        "ServiceAccount",
        "Subscription",
    ]
    secret = store.get("secret", NS, "memcached-operator-service-cert")
    assert secret is not None and "data" not in secret
    assert "annotations" not in secret["metadata"]  # kubectl's last-applied copy has the data
    fake.take_writes()
    operators.reconcile("", NAME)
    sync(store, fake)
    operators.reconcile("", NAME)
    assert fake.writes == []


def test_a_deleted_operator_comes_back_while_components_remain_and_not_after() -> None:
    fake, store, adoption, operators = world(*installed())
    adoption.reconcile("", NS)
    sync(store, fake)
    operators.reconcile("", NAME)
    fake.remove(*OPERATOR, None, NAME)
    sync(store, fake)
    operators.reconcile("", NAME)
    assert fake.get(*OPERATOR, None, NAME)["metadata"]["name"] == NAME
    # the components go (nothing of them is deleted by olm-py: the user does it)
    for key in [k for k in fake.objects if k[1] != "Operator"]:
        del fake.objects[key]
    sync(store, fake)
    operators.reconcile("", NAME)
    assert "refs" not in fake.get(*OPERATOR, None, NAME)["status"]["components"]
    fake.remove(*OPERATOR, None, NAME)
    sync(store, fake)
    fake.take_writes()
    operators.reconcile("", NAME)
    assert fake.writes == []


def test_nothing_is_ever_deleted() -> None:
    fake, store, adoption, operators = world(*installed())
    for _ in range(2):
        adoption.reconcile("", NS)
        sync(store, fake)
        operators.reconcile("", NAME)
        sync(store, fake)
    assert not [w for w in fake.writes if w.verb == "delete"]


def test_a_refused_key_or_name_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    bad = subscription("bad", package="mémcached", installed=None, plan=None)
    upper_key = f"operators.coreos.com/My_Op.{NS}"
    upper = subscription("upper", package="My_Op", installed=None, plan=None)
    fake, store, adoption, operators = world(bad, upper)
    with caplog.at_level(logging.WARNING, logger="olm.operator"):
        for _ in range(3):
            adoption.reconcile("", NS)
            sync(store, fake)
            operators.reconcile("", f"My_Op.{NS}")
    assert upper_key in labels_of(
        fake, "operators.coreos.com/v1alpha1", "Subscription", NS, "upper"
    )
    assert not [k for k in fake.objects if k[1] == "Operator"]
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 2, said
    assert any("Subscription ns/bad" in m and "spec.name" in m for m in said)
    assert any("Operator My_Op.ns" in m and "object name" in m for m in said)


def test_wakes() -> None:
    store = Store()
    labelled = subscription(labels={KEY: ""})
    assert operator_keys("subscription", labelled, store) == [
        ("operator", "", NAME),
        ("adoption", "", NS),
    ]
    dep = obj("apps/v1", "Deployment", "d", labels=MANAGED, owners=[owner()])
    # a new owned object wakes its CSV's namespace; a status change of it does not
    assert operator_keys("deployment", dep, store) == [("adoption", "", NS)]
    assert operator_keys("deployment", {**dep, "status": {"x": 1}}, store, old=dep) == []
    # a label taken off wakes the Operator it named
    assert operator_keys("deployment", dep, store, old=labelled_copy(dep)) == [
        ("operator", "", NAME),
        ("adoption", "", NS),
    ]
    assert operator_keys("operator", {"metadata": {"name": "o"}}, store) == [("operator", "", "o")]
    assert operator_keys("copiedcsv", labelled, store) == []


def labelled_copy(o: dict[str, Any]) -> dict[str, Any]:
    return {**o, "metadata": {**o["metadata"], "labels": {**o["metadata"]["labels"], KEY: ""}}}


def test_resync_wakes_operators_named_by_labels_and_adoption_namespaces() -> None:
    store = Store()
    store.upsert("serviceaccount", labelled_copy(obj("v1", "ServiceAccount", "sa", labels=MANAGED)))
    store.upsert("operator", {"metadata": {"name": "o-user"}})
    store.upsert("subscription", subscription())
    assert resync_operator_keys(store) == [
        ("operator", "", NAME),
        ("operator", "", "o-user"),
        ("adoption", "", NS),
    ]
