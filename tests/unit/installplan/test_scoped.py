"""Scoped InstallPlans (OperatorGroup spec.serviceAccountName): which ServiceAccount a plan
acts as, the InstallCheckFailed wait, the Forbidden retry and its message; the controller
writes every step but CRDs as the ServiceAccount."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.controllers.installplan import InstallPlanController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.groups.serviceaccount import attenuated_user, query_service_account, user_of
from olm.installplan.attenuation import forbidden_message
from olm.installplan.decide import decide
from olm.installplan.snapshot import Snapshot
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from tests.unit.installplan.plans import NOW, NS, entries, established, install_plan, manifest, sync

REF = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "namespace": NS,
    "name": "installer",
    "uid": "u1",
}
USER = f"system:serviceaccount:{NS}:installer"


def group(name: str = "og", sa: str | None = "installer", ref: bool = True) -> dict[str, Any]:
    status: dict[str, Any] = {"namespaces": [NS], "lastUpdated": "2026-01-01T00:00:00Z"}
    if sa and ref:
        status["serviceAccountRef"] = {**REF, "name": sa}
    return {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"serviceAccountName": sa} if sa else {},
        "status": status,
    }


@pytest.mark.parametrize(
    ("groups", "ref", "problem"),
    [
        ([], None, None),
        ([group(sa=None)], None, None),
        ([group()], REF, None),
        ([group(ref=False)], None, "please make sure the service account exists. sa=installer"),
        ([group("a"), group("b")], None, "more than one operator group(s) are managing this"),
        # a group that manages no namespace yet is not counted (OLM's querier)
        ([group("a"), {**group("b"), "status": {}}], REF, None),
    ],
)
def test_which_service_account_a_namespace_installs_as(
    groups: list[dict[str, Any]], ref: dict[str, Any] | None, problem: str | None
) -> None:
    found, why = query_service_account(groups)
    assert found == ref
    assert (why or "").startswith(problem or "")
    assert bool(why) == bool(problem)
    assert attenuated_user(groups) == (user_of(ref) if ref else None)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            'serviceaccounts is forbidden: User "system:serviceaccount:team-a:installer" cannot '
            'create resource "serviceaccounts" in API group "" in the namespace "team-a"',
            'may not create serviceaccounts in namespace team-a: cannot create resource "serviceaccounts" '
            'in API group "" in the namespace "team-a". Grant it, e.g.: kubectl create '
            "role installer-create-serviceaccounts --verb=create --resource=serviceaccounts -n "
            "team-a && kubectl create rolebinding installer-create-serviceaccounts "
            "--role=installer-create-serviceaccounts --serviceaccount=team-a:installer -n team-a",
        ),
        (
            'clusterroles.rbac.authorization.k8s.io is forbidden: User "x" cannot create resource '
            '"clusterroles" in API group "rbac.authorization.k8s.io" at the cluster scope',
            "may not create clusterroles.rbac.authorization.k8s.io at the cluster scope: cannot "
            'create resource "clusterroles" in API group "rbac.authorization.k8s.io" at the '
            "cluster scope. Grant it, e.g.: kubectl create clusterrole installer-create-clusterroles --verb=create "
            "--resource=clusterroles.rbac.authorization.k8s.io && kubectl create "
            "clusterrolebinding installer-create-clusterroles "
            "--clusterrole=installer-create-clusterroles --serviceaccount=team-a:installer",
        ),
        (
            'roles.rbac.authorization.k8s.io "r" is forbidden: user "x" (groups=["a"]) is '
            'attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], '
            'Resources:["pods"], Verbs:["get"]}',
            'may not grant permissions it does not hold itself ({APIGroups:[""], '
            'Resources:["pods"], Verbs:["get"]})',
        ),
    ],
)
def test_a_forbidden_answer_names_what_to_grant(error: str, expected: str) -> None:
    step = {"kind": "Role", "metadata": {"name": "r"}}
    message = forbidden_message(error, REF, step, "og")
    assert message.startswith(
        "retrying execution due to error: step Role r: ServiceAccount team-a/installer "
        "(spec.serviceAccountName of OperatorGroup og) "
    )
    assert expected in message
    assert message.endswith("The InstallPlan retries by itself once the permission is granted.")


def test_a_plan_waits_for_its_group_s_service_account_with_a_condition() -> None:
    plan = install_plan()
    first = decide(Snapshot(plan, NOW, groups=(group(ref=False),)))
    assert first.status is not None and not first.actions
    assert first.status["phase"] == "Installing"
    (condition,) = first.status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "Installed",
        "False",
        "InstallCheckFailed",
    )
    assert first.requeue_after and first.event
    # Asked again, nothing to write; once the ref is synced the condition goes and it runs.
    waiting = {**plan, "status": first.status}
    assert decide(Snapshot(waiting, NOW, groups=(group(ref=False),))).status is None
    running = decide(Snapshot(waiting, NOW, groups=(group(),)))
    assert running.status is not None and running.actions
    assert "conditions" not in running.status or not any(
        c.get("reason") == "InstallCheckFailed" for c in running.status["conditions"]
    )
    assert running.status["attenuatedServiceAccountRef"] == REF


def _world(*objects: dict[str, Any]) -> tuple[FakeGateway, Store, InstallPlanController]:
    fake = FakeGateway()
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    fake.put(established(manifest(entries()[1])))
    for obj in objects:
        fake.put(obj)
    store = Store()
    sync(store, fake)
    store.upsert("operatorgroup", group())
    return fake, store, InstallPlanController(store, fake, WorkQueue())


def test_every_step_but_crds_is_written_as_the_service_account() -> None:
    fake, _, controller = _world(install_plan())
    controller.reconcile(NS, "install-abc")
    writes = [(w.verb, w.kind, w.user) for w in fake.take_writes() if w.kind != "InstallPlan"]
    assert ("apply", "CustomResourceDefinition", None) in writes
    steps = [w for w in writes if w[1] not in ("CustomResourceDefinition", "Event")]
    assert steps and all(user == USER for _, _, user in steps)
    plan = fake.get("operators.coreos.com/v1alpha1", "InstallPlan", NS, "install-abc")
    assert plan["status"]["phase"] == "Complete"
    assert plan["status"]["attenuatedServiceAccountRef"] == REF


def test_a_forbidden_step_keeps_the_plan_installing_until_it_is_granted() -> None:
    fake, store, controller = _world(install_plan())
    refusal = (
        'serviceaccounts is forbidden: User "system:serviceaccount:team-a:installer" cannot '
        'create resource "serviceaccounts" in API group "" in the namespace "team-a"'
    )
    fake.fail("create", GatewayError(refusal, 403), "ServiceAccount", user=USER)
    delay = controller.reconcile(NS, "install-abc")
    assert delay is not None and delay > 0
    plan = fake.get("operators.coreos.com/v1alpha1", "InstallPlan", NS, "install-abc")
    status = plan["status"]
    assert status["phase"] == "Installing"
    assert "may not create serviceaccounts in namespace team-a" in status["message"]
    assert [e[2] for e in fake.events()] == ["InstallComponentFailed"]
    # Granted: the next pass finishes without any other nudge.
    sync(store, fake)
    fake.take_writes()
    assert controller.reconcile(NS, "install-abc") is None
    plan = fake.get("operators.coreos.com/v1alpha1", "InstallPlan", NS, "install-abc")
    assert plan["status"]["phase"] == "Complete"
    assert "message" not in plan["status"]
    # And again: nothing.
    sync(store, fake)
    fake.take_writes()
    controller.reconcile(NS, "install-abc")
    assert [w for w in fake.take_writes() if w.changed] == []


def test_fake_views_share_objects_and_record_the_user() -> None:
    fake = FakeGateway()
    view = fake.impersonating("someone")
    view.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "x"}}
    )
    assert fake.get("v1", "ConfigMap", "x", "c")
    assert [(w.verb, w.user) for w in fake.take_writes()] == [("create", "someone")]
    assert copy.copy(fake).user is None
