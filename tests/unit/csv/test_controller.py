"""The CSV controller over the in-memory gateway: a refused Deployment fails the CSV once,
with one sentence on status and one Warning Event; the retry 30 s later, refused the same
way, writes nothing at all."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from olm.controllers import csv as csv_controller
from olm.controllers.csv import CsvController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from tests.unit.csv.world import NS, csv

CACHED = {
    "ClusterServiceVersion": "csv",
    "OperatorGroup": "operatorgroup",
    "Deployment": "deployment",
    "OperatorCondition": "operatorcondition",
    "Role": "role",
    "RoleBinding": "rolebinding",
    "Namespace": "namespace",
}
GROUP = {
    "apiVersion": "operators.coreos.com/v1",
    "kind": "OperatorGroup",
    "metadata": {"name": "og", "namespace": NS},
    "spec": {"targetNamespaces": [NS]},
    "status": {"namespaces": [NS], "lastUpdated": "2026-11-22T11:00:00Z"},
}
REFUSED = (
    f'PATCH /apis/apps/v1/namespaces/{NS}/deployments/op failed (422): Deployment.apps "op" is '
    "invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: "
    "must be between 1 and 65535, inclusive"
)


def sync(store: Store, fake: FakeGateway) -> None:
    for (_, kind, _, _), obj in fake.objects.items():
        if kind in CACHED:
            store.upsert(CACHED[kind], copy.deepcopy(obj))


def status_writes(fake: FakeGateway) -> list[dict[str, Any]]:
    return [w.body for w in fake.take_writes() if w.verb == "patch_status"]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[datetime.datetime]:
    now = [datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=datetime.UTC)]
    monkeypatch.setattr(csv_controller, "now", lambda: now[0])
    return now


def test_a_refused_deployment_fails_once_and_retries_quietly(
    clock: list[datetime.datetime],
) -> None:
    fake = FakeGateway([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    fake.put(GROUP)
    body = csv("op.v1", phase="InstallReady", reason="AllRequirementsMet")
    body["status"]["lastTransitionTime"] = "2026-11-22T12:00:00Z"
    fake.put(body)
    store, queue = Store(), WorkQueue()
    sync(store, fake)
    controller = CsvController(store, fake, queue)

    fake.fail("apply", GatewayError(REFUSED, 422), kind="Deployment")
    assert controller.reconcile(NS, "op.v1") == 30.0
    [failed] = status_writes(fake)
    assert (failed["status"]["phase"], failed["status"]["reason"]) == (
        "Failed",
        "InstallComponentFailed",
    )
    message = failed["status"]["message"]
    assert "refused Deployment op (spec.install.spec.deployments[0])" in message
    assert "Fix spec.install.spec.deployments[0].spec" in message
    assert [e[1:3] for e in fake.events()] == [("Warning", "InstallComponentFailed")]

    sync(store, fake)
    clock[0] += datetime.timedelta(seconds=10)  # too early to retry
    assert controller.reconcile(NS, "op.v1") == pytest.approx(20.0)
    # The OperatorCondition has a uid now: its Role and RoleBinding follow, once.
    assert [(w.verb, w.kind) for w in fake.take_writes()] == [
        ("apply", "Role"),
        ("apply", "RoleBinding"),
    ]
    sync(store, fake)
    assert controller.reconcile(NS, "op.v1") == pytest.approx(20.0)
    assert fake.take_writes() == []

    clock[0] += datetime.timedelta(seconds=25)  # the retry, refused the same way
    fake.fail("apply", GatewayError(REFUSED, 422), kind="Deployment")
    assert controller.reconcile(NS, "op.v1") == 30.0
    assert [w for w in fake.take_writes() if w.changed] == []
    assert len(fake.events()) == 1

    clock[0] += datetime.timedelta(seconds=31)  # fixed meanwhile: the retry installs
    controller.reconcile(NS, "op.v1")
    writes = fake.take_writes()
    assert [(w.verb, w.kind) for w in writes if w.changed] == [
        ("apply", "Deployment"),
        ("patch_status", "ClusterServiceVersion"),
        ("event", "Event"),
    ]


TERMINATING = GatewayError(
    f"PATCH /apis/operators.coreos.com/v2/namespaces/{NS}/operatorconditions/op.v1 failed (403): "
    f'operatorconditions.operators.coreos.com "op.v1" is forbidden: unable to create new '
    f"content in namespace {NS} because it is being terminated",
    403,
)


@pytest.mark.parametrize(
    ("verb", "kind", "phase"),
    [
        ("apply", "OperatorCondition", "Pending"),
        ("apply", "Deployment", "InstallReady"),
    ],
)
def test_a_namespace_being_deleted_is_not_a_failure(
    clock: list[datetime.datetime], verb: str, kind: str, phase: str
) -> None:
    """The cache may not know yet that the namespace is going: the refusal ends the pass
    quietly (no Failed status, no retry, no warning), and the namespace's event stops the rest."""
    fake = FakeGateway([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}])
    fake.put(GROUP)
    fake.put(csv("op.v1", phase=phase, reason="AllRequirementsMet"))
    store, queue = Store(), WorkQueue()
    sync(store, fake)
    fake.fail(verb, TERMINATING, kind=kind)
    assert CsvController(store, fake, queue).reconcile(NS, "op.v1") is None
    assert [w for w in fake.writes if w.verb == "patch_status"] == []
