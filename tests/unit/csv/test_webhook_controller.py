"""The CSV controller over the in-memory gateway, for a CSV with a validating webhook: the
install writes OLM's objects once, a settled Succeeded CSV writes nothing, and the finalizer
removes the cluster-scoped webhook configuration and bindings it owns by label."""

from __future__ import annotations

import copy
import datetime

import pytest

from olm.controllers import csv as csv_controller
from olm.controllers.csv import CsvController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.fake import FakeGateway
from tests.unit.csv.world import NS, csv, healthy, validating

CACHED = {
    "ClusterServiceVersion": "csv",
    "OperatorGroup": "operatorgroup",
    "Deployment": "deployment",
    "OperatorCondition": "operatorcondition",
    "Namespace": "namespace",
    "ClusterRoleBinding": "clusterrolebinding",
    "CustomResourceDefinition": "crd",
}
GROUP = {
    "apiVersion": "operators.coreos.com/v1",
    "kind": "OperatorGroup",
    "metadata": {"name": "og", "namespace": NS},
    "spec": {"targetNamespaces": [NS]},
    "status": {"namespaces": [NS], "lastUpdated": "2026-11-22T11:00:00Z"},
}


def sync(store: Store, fake: FakeGateway) -> None:
    for (_, kind, _, _), obj in fake.objects.items():
        if kind in CACHED:
            store.upsert(CACHED[kind], copy.deepcopy(obj))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime.datetime]:
    now = [datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=datetime.UTC)]
    monkeypatch.setattr(csv_controller, "now", lambda: now[0])
    return now


def changed(fake: FakeGateway) -> list[tuple[str, str, str]]:
    return [(w.verb, w.kind, w.name) for w in fake.take_writes() if w.changed]


def test_install_settle_and_delete(clock: list[datetime.datetime]) -> None:
    fake = FakeGateway([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    fake.put(GROUP)
    body = csv("op.v1", phase="InstallReady", reason="AllRequirementsMet")
    body["spec"]["webhookdefinitions"] = [validating()]
    body["status"]["lastTransitionTime"] = "2026-11-22T12:00:00Z"
    fake.put(body)
    store, queue = Store(), WorkQueue()
    sync(store, fake)
    controller = CsvController(store, fake, queue)

    controller.reconcile(NS, "op.v1")
    writes = changed(fake)
    config = next(name for verb, kind, name in writes if kind == "ValidatingWebhookConfiguration")
    assert config.startswith("vthing.example.com-")
    assert [(verb, kind) for verb, kind, _ in writes if verb == "apply"] == [
        ("apply", "OperatorCondition"),
        ("apply", "Service"),
        ("apply", "Secret"),
        ("apply", "Role"),
        ("apply", "RoleBinding"),
        ("apply", "ClusterRoleBinding"),
        ("apply", "RoleBinding"),
        ("apply", "ValidatingWebhookConfiguration"),
        ("apply", "Deployment"),
    ]
    secret = fake.get("v1", "Secret", NS, "op-service-cert")
    deployment = fake.get("apps/v1", "Deployment", NS, "op")
    assert (
        deployment["spec"]["template"]["metadata"]["annotations"]["olmcahash"]
        == secret["metadata"]["annotations"]["olmcahash"]
    )
    status = fake.get("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, "op.v1")
    assert status["status"]["phase"] == "Installing"
    assert "certsRotateAt" in status["status"]

    fake.put(healthy(deployment))
    sync(store, fake)
    controller.reconcile(NS, "op.v1")
    assert ("patch_status", "ClusterServiceVersion", "op.v1") in changed(fake)
    done = fake.get("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, "op.v1")
    assert done["status"]["phase"] == "Succeeded"

    sync(store, fake)
    clock[0] += datetime.timedelta(minutes=5)
    controller.reconcile(NS, "op.v1")
    assert changed(fake) == []  # settled: the certificates are reused, nothing is written

    fake.delete("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, "op.v1")
    fake.take_writes()
    sync(store, fake)
    controller.reconcile(NS, "op.v1")
    deleted = {(kind, name) for verb, kind, name in changed(fake) if verb == "delete"}
    assert {
        ("ValidatingWebhookConfiguration", config),
        ("ClusterRoleBinding", "op-service-system:auth-delegator"),
        ("RoleBinding", "op-service-auth-reader"),
    } <= deleted
