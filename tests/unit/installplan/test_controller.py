"""The InstallPlan controller over the in-memory gateway: a plan runs once, to the end; a
second pass (or a stale cached copy) writes nothing; a stale snapshot is retried, not failed;
an upgrade keeps the ServiceAccount owned by the new CSV (issue 16)."""

from __future__ import annotations

from typing import Any

from olm.controllers.installplan import InstallPlanController
from olm.controllers.queue import WorkQueue
from olm.kube.errors import Conflict, GatewayError
from olm.kube.fake import FakeGateway
from tests.unit.installplan.plans import (
    CRD_NAME,
    NEW,
    NS,
    OLD,
    SA,
    entries,
    established,
    install_plan,
    sync,
    world,
)


def get(fake: FakeGateway, kind: str, name: str, namespace: str = NS) -> dict[str, Any]:
    versions = {
        "InstallPlan": "operators.coreos.com/v1alpha1",
        "ClusterServiceVersion": "operators.coreos.com/v1alpha1",
        "ServiceAccount": "v1",
    }
    return fake.get(versions[kind], kind, namespace, name)


def verbs(fake: FakeGateway) -> list[tuple[str, str]]:
    return [(w.verb, w.kind) for w in fake.take_writes()]


def test_a_plan_runs_once_to_complete_and_never_again() -> None:
    fake, store, controller = world(install_plan())
    assert controller.reconcile(NS, "install-abc") is None
    assert verbs(fake) == [
        ("patch", "InstallPlan"),  # its preview summary (olm-py.io/preview-summary), first
        ("apply", "CustomResourceDefinition"),
        ("create", "ClusterServiceVersion"),
        ("create", "ServiceAccount"),
        ("create", "Role"),
        ("create", "RoleBinding"),
        ("patch_status", "InstallPlan"),
    ]
    status = get(fake, "InstallPlan", "install-abc")["status"]
    assert status["phase"] == "Complete" and status["startTime"]
    assert [e["status"] for e in status["plan"]] == [
        "Created",
        "Present",
        "Created",
        "Created",
        "Created",
    ]
    cached = store.get("installplan", NS, "install-abc")
    assert cached is not None and cached["status"] == status, "written through to the cache"
    csv_uid = get(fake, "ClusterServiceVersion", OLD)["metadata"]["uid"]
    owners = get(fake, "ServiceAccount", SA)["metadata"]["ownerReferences"]
    assert [o["uid"] for o in owners] == [csv_uid]

    # Again over the same cache: nothing.
    controller.reconcile(NS, "install-abc")
    assert verbs(fake) == []
    # The watch replays the copy that said Installing (an older event after our write-through).
    sync(store, fake)
    store.upsert("installplan", install_plan())
    controller.reconcile(NS, "install-abc")
    assert verbs(fake) == [], "a plan this process ended never runs again"


def test_an_approved_plan_installs_in_one_reconcile() -> None:
    fake, _, controller = world(install_plan("RequiresApproval", approved=True))
    controller.reconcile(NS, "install-abc")
    assert get(fake, "InstallPlan", "install-abc")["status"]["phase"] == "Complete"
    unapproved, _, controller = world(install_plan("RequiresApproval", approved=False))
    controller.reconcile(NS, "install-abc")
    assert verbs(unapproved) == [("patch", "InstallPlan")], "its preview summary, nothing else"
    controller.reconcile(NS, "install-abc")
    assert verbs(unapproved) == []


def test_a_new_crd_is_waited_for() -> None:
    fake, store, controller = world(install_plan(), crd=False)
    assert controller.reconcile(NS, "install-abc") == 1.0
    assert verbs(fake) == [
        ("patch", "InstallPlan"),
        ("apply", "CustomResourceDefinition"),
        ("patch_status", "InstallPlan"),
    ]
    status = get(fake, "InstallPlan", "install-abc")["status"]
    assert status["phase"] == "Installing" and status["plan"][1]["status"] == "WaitingForApi"
    sync(store, fake)
    assert controller.reconcile(NS, "install-abc") == 1.0, "not Established yet"
    assert verbs(fake) == [], "and nothing to write while waiting"
    crd = fake.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, CRD_NAME)
    fake.put(established(crd))
    sync(store, fake)
    assert controller.reconcile(NS, "install-abc") is None
    status = get(fake, "InstallPlan", "install-abc")["status"]
    assert status["phase"] == "Complete" and status["plan"][1]["status"] == "Created"


def test_an_upgrade_keeps_the_service_account_owned_by_both_csvs() -> None:
    first = install_plan()
    second = install_plan(name="install-def", plan=entries(NEW))
    fake, store, controller = world(first)
    controller.reconcile(NS, "install-abc")
    fake.put(second)
    sync(store, fake)
    controller.reconcile(NS, "install-def")
    old_uid = get(fake, "ClusterServiceVersion", OLD)["metadata"]["uid"]
    new_uid = get(fake, "ClusterServiceVersion", NEW)["metadata"]["uid"]
    owners = get(fake, "ServiceAccount", SA)["metadata"]["ownerReferences"]
    assert [o["uid"] for o in owners] == [old_uid, new_uid]

    # A restarted process whose cache still shows the first plan Installing runs it again:
    # the account keeps the newer owner.
    sync(store, fake)
    store.upsert(
        "installplan", {**first, "metadata": get(fake, "InstallPlan", "install-abc")["metadata"]}
    )
    fresh = InstallPlanController(store, fake, WorkQueue())
    fresh.reconcile(NS, "install-abc")
    owners = get(fake, "ServiceAccount", SA)["metadata"]["ownerReferences"]
    assert new_uid in [o["uid"] for o in owners]


def test_a_stale_cache_is_retried_not_failed() -> None:
    fake, store, controller = world(install_plan())
    # The account exists already (another plan just made it), but the cache has not seen it.
    fake.put(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": SA,
                "namespace": NS,
                "ownerReferences": [{"kind": "X", "uid": "u", "name": "x", "apiVersion": "v1"}],
            },
        }
    )
    delay = controller.reconcile(NS, "install-abc")
    assert delay is not None and 0 < delay <= 1
    status = get(fake, "InstallPlan", "install-abc")["status"]
    assert status["phase"] == "Installing"
    assert [e["status"] for e in status["plan"]] == [
        "Created",
        "Present",
        "Unknown",
        "Unknown",
        "Unknown",
    ]
    fake.take_writes()
    sync(store, fake)
    assert controller.reconcile(NS, "install-abc") is None
    assert get(fake, "InstallPlan", "install-abc")["status"]["phase"] == "Complete"
    owners = get(fake, "ServiceAccount", SA)["metadata"]["ownerReferences"]
    assert next(o["uid"] for o in owners) == "u", "its live owner kept"
    assert len(owners) == 2


def test_a_conflict_on_an_update_is_retried_with_backoff() -> None:
    fake, _, controller = world(install_plan())
    fake.fail("apply", Conflict("stale"), kind="CustomResourceDefinition")
    first = controller.reconcile(NS, "install-abc")
    fake.fail("apply", Conflict("stale"), kind="CustomResourceDefinition")
    second = controller.reconcile(NS, "install-abc")
    assert first is not None and second is not None and second == 2 * first


def test_a_refused_write_fails_the_plan_with_the_api_servers_words() -> None:
    fake, _, controller = world(install_plan())
    fake.fail("create", GatewayError("POST roles failed (403): forbidden", 403), kind="Role")
    assert controller.reconcile(NS, "install-abc") is None
    status = get(fake, "InstallPlan", "install-abc")["status"]
    assert status["phase"] == "Failed"
    assert status["message"].startswith("error creating step Role memcached-operator.v0.0.1-")
    assert status["message"].endswith("POST roles failed (403): forbidden")
    assert [e["status"] for e in status["plan"]] == [
        "Created",
        "Present",
        "Created",
        "Unknown",
        "Unknown",
    ]
    assert fake.events()[-1][1:3] == ("Warning", "InstallComponentFailed")


def test_a_hand_made_plan_is_failed_with_an_explanation() -> None:
    fake, _, controller = world(install_plan(None, owned=False, name="mine"))
    assert controller.reconcile(NS, "mine") is None
    status = get(fake, "InstallPlan", "mine")["status"]
    assert status["phase"] == "Failed" and "made by Subscriptions" in status["message"]
    assert status["conditions"][0]["reason"] == "PlanUnknown"
    assert fake.events()[-1][:3] == ("mine", "Warning", "PlanUnknown")
    fake.take_writes()
    controller.reconcile(NS, "mine")
    assert verbs(fake) == []


def test_a_plan_with_no_phase_owned_by_a_subscription_is_left_to_it() -> None:
    fake, _, controller = world(install_plan(None))
    controller.reconcile(NS, "install-abc")
    assert verbs(fake) == []


def test_nothing_runs_in_a_terminating_namespace() -> None:
    fake, store, controller = world(install_plan())
    store.upsert("namespace", {"metadata": {"name": NS}, "status": {"phase": "Terminating"}})
    controller.reconcile(NS, "install-abc")
    assert verbs(fake) == []


def test_an_upgrade_after_the_first_csv_is_gone_drops_it_from_the_crd() -> None:
    """The CRD names the CSVs it was installed alongside, as OLM writes them: one that is gone
    by the time the next plan writes the CRD is dropped (corpus: etcd v0.9.0 -> v0.9.4)."""
    first = install_plan()
    fake, store, controller = world(first)
    controller.reconcile(NS, "install-abc")
    fake.delete("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, OLD)
    store.delete("csv", NS, OLD)
    fake.put(install_plan(name="install-def", plan=entries(NEW)))
    sync(store, fake)
    controller.reconcile(NS, "install-def")
    crd = fake.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, CRD_NAME)
    named = sorted(
        v
        for k, v in crd["metadata"]["annotations"].items()
        if k.startswith("operatorframework.io/installed-alongside-")
    )
    assert named == [f"{NS}/{NEW}"]


def test_warnings_a_step_meets_are_an_applied_with_warnings_event() -> None:
    """OLM records the API server's warnings a step met (reading a CRD's deprecated version's
    objects) as Event AppliedWithWarnings on the plan (corpus: hawtio-operator's CRD)."""
    first = install_plan()
    fake, store, controller = world(first)
    controller.reconcile(NS, "install-abc")
    crd = fake.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, CRD_NAME)
    spec = crd["spec"]
    (served,) = [v["name"] for v in spec["versions"] if v.get("served")]
    path = f"/apis/{spec['group']}/{served}/{spec['names']['plural']}"
    text = f"{served}.Memcached is deprecated, please, use v1.Memcached instead"
    fake.list_warnings[path] = [f'299 - "{text}"']
    fake.put(install_plan(name="install-def", plan=entries(NEW)))
    sync(store, fake)
    controller.reconcile(NS, "install-def")
    said = [e for e in fake.events() if e[2] == "AppliedWithWarnings"]
    assert said == [
        (
            "install-def",
            "Warning",
            "AppliedWithWarnings",
            f'1 warning(s) generated during installation of operator "{NEW}" '
            f'(CustomResourceDefinition "{CRD_NAME}"): {text}',
        )
    ]
