"""The InstallPlan phase machine over plain data: every branch, including plans that crashed
half-way and plans that run late (the ServiceAccount-loss bug, issue 16)."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

import pytest

from olm.csv.status import timestamp
from olm.installplan.decide import decide
from olm.installplan.partial import interrupted
from olm.installplan.snapshot import Action, Plan, Snapshot, Verb
from olm.installplan.status import status_patch
from olm.installplan.stepref import step_manifest, step_ref
from tests.unit.installplan.plans import (
    CRD_NAME,
    NEW,
    NOW,
    NS,
    OLD,
    csv_owner,
    entries,
    established,
    install_plan,
    live,
    manifest,
    objects_of,
    snap,
)

CSV_I, CRD_I, SA_I, ROLE_I, BINDING_I = range(5)
DONE = ["Created", "Present", "Unknown", "Unknown", "Unknown"]


def statuses(plan: Plan) -> list[str]:
    assert plan.status is not None
    return [e["status"] for e in plan.status["plan"]]


def kinds(plan: Plan) -> list[tuple[str, str, str]]:
    return [(a.verb.value, a.body["kind"], a.result.value) for a in plan.actions]


def installed(plan: Plan) -> dict[str, Any]:
    assert plan.status is not None
    return next(c for c in plan.status["conditions"] if c["type"] == "Installed")


# ----- phases that run nothing ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "plan", "finished"),
    [
        ("Complete is terminal", install_plan("Complete"), False),
        ("Failed is terminal", install_plan("Failed"), False),
        ("a plan this process ended, cached as Installing", install_plan("Installing"), True),
        ("no phase yet: its Subscription writes it", install_plan(None), False),
        ("waiting for approval", install_plan("RequiresApproval", approved=False), False),
        ("Planning is never set by OLM", install_plan("Planning"), False),
    ],
)
def test_phases_that_run_nothing(case: str, plan: dict[str, Any], finished: bool) -> None:
    assert decide(Snapshot(plan, NOW, finished=finished)) == Plan(), case


def test_approval_moves_the_plan_to_installing_and_decides_again() -> None:
    plan = decide(Snapshot(install_plan("RequiresApproval", approved=True), NOW))
    assert plan.status is not None and plan.status["phase"] == "Installing"
    assert plan.again and not plan.actions


# ----- bad input ends in an explained Failed ---------------------------------------------------


def test_a_hand_made_plan_fails_with_what_to_do_instead() -> None:
    hand_made = install_plan(None, owned=False)
    plan = decide(Snapshot(hand_made, NOW))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    message = plan.status["message"]
    assert "no steps to run" in message and "made by Subscriptions" in message
    assert "create a Subscription" in message and OLD in message
    assert plan.status["catalogSources"] == [] and plan.status["plan"] == []
    condition = installed(plan)
    assert (condition["status"], condition["reason"]) == ("False", "PlanUnknown")
    assert plan.event == ("Warning", "PlanUnknown", message)
    assert not plan.actions


def test_a_plan_nobody_owns_gets_time_for_its_maker_to_write_its_status() -> None:
    """OLM's e2e suite creates InstallPlans and then writes their status itself."""
    hand_made = install_plan(None, owned=False)
    hand_made["metadata"]["creationTimestamp"] = "2026-11-22T11:59:58Z"  # 2 s before NOW
    plan = decide(Snapshot(hand_made, NOW))
    assert plan.status is None and not plan.actions
    assert plan.requeue_after == pytest.approx(8.0)
    hand_made["metadata"]["creationTimestamp"] = "2026-11-22T11:59:50Z"
    later = decide(Snapshot(hand_made, NOW))
    assert later.status is not None and later.status["phase"] == "Failed"


def test_an_installing_plan_without_steps_fails() -> None:
    plan = decide(Snapshot(install_plan("Installing", []), NOW))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert "no steps to run" in plan.status["message"]


@pytest.mark.parametrize(
    "broken",
    [
        {"resolving": OLD},
        {"resolving": OLD, "resource": {"manifest": "{not json"}},
        {"resolving": OLD, "resource": {"manifest": '{"kind": "ServiceAccount"}'}},
        {"resolving": OLD, "resource": {"manifest": "[]"}},
    ],
)
def test_a_step_without_an_object_fails_naming_the_field(broken: dict[str, Any]) -> None:
    steps = entries()
    steps[2] = broken
    plan = decide(Snapshot(install_plan("Installing", steps), NOW))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert "status.plan[2].resource.manifest" in plan.status["message"]
    assert not plan.actions


# ----- stage 1: CRDs --------------------------------------------------------------------------


def test_a_fresh_plan_creates_its_crd_and_waits_for_it() -> None:
    plan = decide(snap(install_plan()))
    assert kinds(plan) == [("apply", "CustomResourceDefinition", "WaitingForApi")]
    assert statuses(plan) == ["Unknown", "WaitingForApi", "Unknown", "Unknown", "Unknown"]
    assert plan.status is not None and plan.status["startTime"] == "2026-11-22T12:00:00Z"
    assert plan.requeue_after == 1.0 and not plan.again


def test_the_start_time_is_set_once() -> None:
    plan = decide(snap(install_plan(startTime="2026-11-22T11:59:00Z")))
    assert plan.status is not None and plan.status["startTime"] == "2026-11-22T11:59:00Z"


def test_a_crd_that_became_established_is_created_and_the_csv_comes_next() -> None:
    ip = install_plan(plan=entries(statuses=["Unknown", "WaitingForApi", *["Unknown"] * 3]))
    crd = established(objects_of(ip)["CustomResourceDefinition"])
    plan = decide(snap(ip, crd))
    assert statuses(plan) == ["Created", "Created", "Unknown", "Unknown", "Unknown"]
    assert kinds(plan) == [("create", "ClusterServiceVersion", "Created")]
    assert plan.again, "the rest needs the CSV's uid: decide again once it exists"


@pytest.mark.parametrize("cached", [False, True], ids=["not cached yet", "not Established"])
def test_a_crd_still_waiting_keeps_the_plan_waiting(cached: bool) -> None:
    ip = install_plan(plan=entries(statuses=["Unknown", "WaitingForApi", *["Unknown"] * 3]))
    crd = live(objects_of(ip)["CustomResourceDefinition"])
    plan = decide(snap(ip, *([crd] if cached else [])))
    assert not plan.actions and plan.requeue_after == 1.0
    assert statuses(plan)[CRD_I] == "WaitingForApi"


def test_a_crd_that_never_becomes_established_fails_the_plan_after_five_minutes() -> None:
    ip = install_plan(
        plan=entries(statuses=["Unknown", "WaitingForApi", *["Unknown"] * 3]),
        startTime="2026-11-22T11:54:59Z",
    )
    plan = decide(snap(ip))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert plan.status["message"] == (
        f"CustomResourceDefinition {CRD_NAME} did not become Established within 5 minutes; "
        "check the CRD's status conditions"
    )
    assert installed(plan)["reason"] == "InstallComponentFailed"


def test_an_existing_crd_is_updated_and_the_plan_goes_on() -> None:
    ip = install_plan()
    crd = established(objects_of(ip)["CustomResourceDefinition"])
    plan = decide(snap(ip, crd))
    assert kinds(plan) == [
        ("apply", "CustomResourceDefinition", "Present"),
        ("create", "ClusterServiceVersion", "Created"),
    ]
    assert plan.again


def test_a_crd_update_that_drops_a_stored_version_fails() -> None:
    ip = install_plan()
    crd = established(objects_of(ip)["CustomResourceDefinition"], stored=["v1alpha1", "v1beta9"])
    plan = decide(snap(ip, crd))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert plan.status["message"].startswith(
        f"error creating step CustomResourceDefinition {CRD_NAME}: risk of data loss"
    )
    # Refused before the CSV is written (OLM writes it first, and it then replaces the running
    # version over the old CRD): what runs stays untouched.
    assert not plan.actions


def test_a_crd_update_that_rejects_existing_instances_fails() -> None:
    ip = install_plan()
    new_crd = objects_of(ip)["CustomResourceDefinition"]
    version = new_crd["spec"]["versions"][0]["name"]
    schema = new_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema["properties"]["spec"] = {
        "type": "object",
        "properties": {"size": {"type": "integer", "maximum": 3}},
    }
    steps = entries()
    steps[CRD_I]["resource"]["manifest"] = json.dumps(new_crd)
    ip = install_plan(plan=steps)
    big = {"metadata": {"name": "big", "namespace": NS}, "spec": {"size": 5}}
    crd = established(objects_of(install_plan())["CustomResourceDefinition"])
    plan = decide(snap(ip, crd, custom_resources={(CRD_NAME, version): [big]}))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert f'"{NS}/big": updated validation is too restrictive: spec.size' in plan.status["message"]


def test_a_crd_of_an_unserved_api_version_fails_with_the_api_servers_words() -> None:
    ip = install_plan()
    ref = step_ref(objects_of(ip)["CustomResourceDefinition"])
    words = "the API server does not serve CustomResourceDefinition in apiextensions.k8s.io/v1beta1"
    plan = decide(snap(ip, unserved={ref: words}))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert (
        plan.status["message"]
        == f"error creating step CustomResourceDefinition {CRD_NAME}: {words}"
    )


# ----- stage 2: CSVs --------------------------------------------------------------------------


def test_a_csv_step_without_its_group_installs_as_olms_typed_client_does() -> None:
    """OLM's e2e catalogs hold CSVs of `apiVersion: v1alpha1`; OLM writes them anyway."""
    ip = install_plan(plan=entries(statuses=["Unknown", "Created", *["Unknown"] * 3]))
    csv_entry = ip["status"]["plan"][0]
    groupless = {**manifest(csv_entry), "apiVersion": "v1alpha1"}
    csv_entry["resource"] = {**csv_entry["resource"], "manifest": json.dumps(groupless)}
    crd = established(objects_of(ip)["CustomResourceDefinition"])
    ref = (
        "operators.coreos.com/v1alpha1",
        "ClusterServiceVersion",
        NS,
        groupless["metadata"]["name"],
    )
    plan = decide(Snapshot(ip, NOW, objects={step_ref(crd): crd, ref: None}))
    assert [(a.verb.value, a.body["apiVersion"]) for a in plan.actions] == [
        ("create", "operators.coreos.com/v1alpha1")
    ]


def test_an_existing_csv_is_never_overwritten() -> None:
    """Crashed half-way: the CSV was created but the status never written."""
    ip = install_plan()
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    csv["spec"]["displayName"] = "edited by a user"
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv))
    assert statuses(plan)[CSV_I] == "Present"
    assert "ClusterServiceVersion" not in [a.body["kind"] for a in plan.actions]
    assert plan.status is not None and plan.status["phase"] == "Complete"


# ----- stage 3: everything else ----------------------------------------------------------------


def test_the_rest_is_created_owned_by_the_csv_and_the_plan_completes() -> None:
    ip = install_plan(plan=entries(statuses=DONE), message="retrying")
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv))
    assert kinds(plan) == [
        ("create", "ServiceAccount", "Created"),
        ("create", "Role", "Created"),
        ("create", "RoleBinding", "Created"),
    ]
    for action in plan.actions:
        assert action.body["metadata"]["ownerReferences"] == [csv_owner(OLD, "uid-old")]
    assert "ownerReferences" not in steps["ServiceAccount"]["metadata"] or (
        steps["ServiceAccount"]["metadata"]["ownerReferences"][0]["uid"] == ""
    ), "the step's manifest itself is not modified"
    assert plan.status is not None and plan.status["phase"] == "Complete"
    assert "message" not in plan.status
    assert installed(plan) == {
        "type": "Installed",
        "status": "True",
        "lastUpdateTime": "2026-11-22T12:00:00Z",
        "lastTransitionTime": "2026-11-22T12:00:00Z",
    }
    assert statuses(plan) == ["Created", "Present", "Created", "Created", "Created"]


def test_bundle_services_configmaps_and_secrets_get_the_csv_as_owner() -> None:
    """OLM's ExecutePlan adds a non-blocking ownerReference to the step's CSV (so its
    adoption controller labels them for the Operator object); everything is olm.managed."""
    base = entries(statuses=DONE)
    extra = []
    for kind in ("Service", "ConfigMap", "Secret"):
        obj = {
            "apiVersion": "v1",
            "kind": kind,
            "metadata": {"name": f"x-{kind.lower()}", "namespace": NS},
        }
        extra.append(
            {
                **base[SA_I],
                "resource": {
                    **base[SA_I]["resource"],
                    "kind": kind,
                    "name": obj["metadata"]["name"],
                    "version": "v1",
                    "manifest": json.dumps(obj),
                },
                "status": "Unknown",
            }
        )
    ip = install_plan(plan=base + extra)
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv))
    written = {a.body["kind"]: a.body["metadata"] for a in plan.actions}
    for kind in ("Service", "ConfigMap", "Secret"):
        assert written[kind]["ownerReferences"] == [csv_owner(OLD, "uid-old")]
        assert written[kind]["labels"] == {"olm.managed": "true"}
    assert "ownerReferences" not in manifest(ip["status"]["plan"][-1])["metadata"]


def test_the_csv_and_crds_a_plan_writes_are_olm_managed() -> None:
    ip = install_plan(plan=entries())
    crd = decide(snap(ip)).actions[0]
    assert crd.body["kind"] == "CustomResourceDefinition"
    assert crd.body["metadata"]["labels"]["olm.managed"] == "true"
    ip = install_plan(
        plan=entries(statuses=["Unknown", "Created", "Unknown", "Unknown", "Unknown"])
    )
    steps = objects_of(ip)
    csv = decide(snap(ip, established(steps["CustomResourceDefinition"]))).actions[0]
    assert csv.body["kind"] == "ClusterServiceVersion"
    assert csv.body["metadata"]["labels"]["olm.managed"] == "true"
    assert "labels" not in (steps["ClusterServiceVersion"]["metadata"]) or (
        "olm.managed" not in steps["ClusterServiceVersion"]["metadata"]["labels"]
    ), "the step manifest keeps the bundle's labels"


def test_a_step_is_never_written_without_its_csv_owner() -> None:
    """The CSV was created by an earlier pass and has since been deleted: writing the
    ServiceAccount without it would leave it owned by the replaced CSV, or by nothing."""
    ip = install_plan(plan=entries(statuses=DONE))
    plan = decide(snap(ip, established(objects_of(ip)["CustomResourceDefinition"])))
    assert plan.actions == ()
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert "was deleted before this InstallPlan finished" in plan.status["message"]


def test_a_csv_owner_not_read_yet_is_waited_for() -> None:
    ip = install_plan(plan=entries(statuses=DONE))
    steps = objects_of(ip)
    snapshot = snap(ip, established(steps["CustomResourceDefinition"]))
    unknown = {
        ref: obj for ref, obj in snapshot.objects.items() if ref[1] != "ClusterServiceVersion"
    }
    plan = decide(Snapshot(ip, NOW, objects=unknown))
    assert plan.actions == ()
    assert plan.requeue_after is not None and plan.requeue_after > 0
    assert plan.status is None or plan.status.get("phase") == "Installing"


def test_an_upgrade_adds_the_new_csv_to_the_service_accounts_owners() -> None:
    """0.0.2's plan over 0.0.1's ServiceAccount: both CSVs own it (the GC drops 0.0.1's
    reference when 0.0.1 goes, and keeps the account)."""
    ip = install_plan(plan=entries(NEW, DONE))
    steps = objects_of(ip)
    account = live(
        steps["ServiceAccount"],
        rv="7",
        ownerReferences=[csv_owner(OLD, "uid-old")],
        annotations={"team": "a"},
    )
    account["secrets"] = [{"name": "memcached-operator-token"}]
    csv = live(steps["ClusterServiceVersion"], uid="uid-new")
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv, account))
    action = plan.actions[0]
    assert (action.verb, action.result.value) == (Verb.APPLY, "Present")
    meta = action.body["metadata"]
    assert meta["ownerReferences"] == [csv_owner(OLD, "uid-old"), csv_owner(NEW, "uid-new")]
    assert meta["resourceVersion"] == "7", "written only over the copy it was decided on"
    assert meta["annotations"] == {"team": "a"}
    assert "secrets" not in action.body, "the account keeps its secrets"
    assert statuses(plan)[SA_I] == "Present"


def test_a_plan_that_runs_late_never_strips_a_newer_owner() -> None:
    """The bug of issue 16: 0.0.1's plan running again after 0.0.2's must keep 0.0.2."""
    ip = install_plan()  # 0.0.1, every step Unknown, as a stale cached copy shows it
    steps = objects_of(ip)
    account = live(
        steps["ServiceAccount"],
        ownerReferences=[csv_owner(NEW, "uid-new"), csv_owner(OLD, "uid-old")],
    )
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv, account))
    assert "ServiceAccount" not in [a.body["kind"] for a in plan.actions], (
        "nothing to write: it already has every owner"
    )
    account["metadata"]["ownerReferences"] = [csv_owner(NEW, "uid-new")]
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv, account))
    written = next(a for a in plan.actions if a.body["kind"] == "ServiceAccount")
    assert [o["uid"] for o in written.body["metadata"]["ownerReferences"]] == [
        "uid-new",
        "uid-old",
    ]


def test_existing_rbac_keeps_its_owners_and_gets_the_new_rules() -> None:
    ip = install_plan(plan=entries(statuses=DONE))
    steps = objects_of(ip)
    role = live(steps["Role"], ownerReferences=[csv_owner("other", "uid-other")])
    role["rules"] = []
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"]), csv, role))
    written = next(a for a in plan.actions if a.body["kind"] == "Role")
    assert written.body["rules"] == steps["Role"]["rules"]
    assert [o["uid"] for o in written.body["metadata"]["ownerReferences"]] == [
        "uid-other",
        "uid-old",
    ]
    assert written.result.value == "Present"


def test_steps_already_done_are_not_run_again() -> None:
    ip = install_plan(
        plan=entries(statuses=["Created", "Present", "Created", "Present", "Created"])
    )
    steps = objects_of(ip)
    plan = decide(snap(ip, established(steps["CustomResourceDefinition"])))
    assert not plan.actions
    assert plan.status is not None and plan.status["phase"] == "Complete"


def test_an_unserved_kind_among_the_rest_is_retried_for_a_minute_then_fails_the_plan() -> None:
    ip = install_plan(plan=entries(statuses=DONE))
    ip["status"]["startTime"] = timestamp(NOW)
    steps = objects_of(ip)
    ref = step_ref(steps["Role"])
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    world = (established(steps["CustomResourceDefinition"]), csv)
    said = (
        f"api-server resource not found installing Role {ref[3]}: GroupVersionKind "
        "rbac.authorization.k8s.io/v1, Kind=Role not found on the cluster."
    )
    plan = decide(snap(ip, *world, unserved={ref: "not served"}))
    assert plan.status is not None and plan.status["phase"] == "Installing"
    assert plan.status["message"].startswith("retrying execution due to error: " + said)
    assert plan.requeue_after == 5.0 and plan.event is not None
    ip["status"]["message"] = plan.status["message"]  # said once: no second Event
    again = decide(snap(ip, *world, unserved={ref: "not served"}))
    assert again.event is None
    later = NOW + datetime.timedelta(seconds=61)
    plan = decide(snap(ip, *world, unserved={ref: "not served"}, now=later))
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert plan.status["message"].startswith(said)
    assert plan.status["conditions"][-1]["reason"] == "InstallComponentFailed"


# ----- repeated passes write nothing ----------------------------------------------------------


def run(ip: dict[str, Any], world: dict[Any, Any]) -> tuple[dict[str, Any], list[Action]]:
    """Decide and carry out until the plan stops asking, as the controller does."""
    writes: list[Action] = []
    for _ in range(10):
        plan = decide(Snapshot(ip, NOW, objects=dict(world)))
        for action in plan.actions:
            body = copy.deepcopy(action.body)
            body["metadata"].pop("resourceVersion", None)
            if action.body["kind"] == "CustomResourceDefinition":
                body = established(body)
            world[step_ref(body)] = live(body, uid=f"uid-{body['metadata']['name']}")
            writes.append(action)
        if plan.status is not None:
            ip = {**ip, "status": plan.status}
        if not plan.again and not plan.requeue_after:
            break
    return ip, writes


@pytest.mark.parametrize("phase", ["Installing", "RequiresApproval"])
def test_a_plan_runs_to_complete_and_a_second_run_writes_nothing(phase: str) -> None:
    ip = install_plan(phase)
    world: dict[Any, Any] = {step_ref(manifest(e)): None for e in entries()}
    done, writes = run(ip, world)
    assert done["status"]["phase"] == "Complete"
    assert [a.body["kind"] for a in writes] == [
        "CustomResourceDefinition",
        "ClusterServiceVersion",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ]
    again = decide(Snapshot(done, NOW + datetime.timedelta(minutes=1), objects=world))
    assert again == Plan()
    # Even a copy that still says Installing (every step Unknown) writes nothing new.
    stale, writes = run(ip, world)
    assert [a.body["kind"] for a in writes] == ["CustomResourceDefinition"], (
        "only the CRD (applied as it is: unchanged on the server)"
    )
    assert [e["status"] for e in stale["status"]["plan"]] == ["Present"] * 5


# ----- interruptions -------------------------------------------------------------------------


def test_an_error_fails_the_plan_and_keeps_the_steps_that_were_written() -> None:
    ip = install_plan(plan=entries(statuses=DONE))
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    snapshot = snap(ip, established(steps["CustomResourceDefinition"]), csv)
    plan = decide(snapshot)
    failed = interrupted(snapshot, plan, 1, "roles.rbac.authorization.k8s.io is forbidden")
    assert failed.status is not None and failed.status["phase"] == "Failed"
    assert failed.status["message"].startswith("error creating step Role ")
    assert failed.status["message"].endswith("is forbidden")
    assert [e["status"] for e in failed.status["plan"]] == [*DONE[:2], "Created", *DONE[3:]]
    assert failed.event is not None and failed.event[1] == "InstallComponentFailed"


def test_a_stale_snapshot_keeps_the_plan_installing_with_what_was_written() -> None:
    ip = install_plan(plan=entries(statuses=DONE), conditions=[])
    steps = objects_of(ip)
    csv = live(steps["ClusterServiceVersion"], uid="uid-old")
    snapshot = snap(ip, established(steps["CustomResourceDefinition"]), csv)
    plan = decide(snapshot)
    stale = interrupted(snapshot, plan, 2)
    assert stale.status is not None and stale.status["phase"] == "Installing"
    assert stale.status["conditions"] == []
    assert [e["status"] for e in stale.status["plan"]] == [
        *DONE[:2],
        "Created",
        "Created",
        "Unknown",
    ]
    assert len(stale.actions) == 2 and stale.event is None


# ----- status patches -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        ({"phase": "Installing"}, {"phase": "Installing"}, {}),
        ({"phase": "Installing"}, {"phase": "Complete"}, {"phase": "Complete"}),
        (
            {"phase": "Installing", "message": "m"},
            {"phase": "Complete"},
            {"phase": "Complete", "message": None},
        ),
        ({}, {"phase": "Failed", "plan": []}, {"phase": "Failed", "plan": []}),
    ],
)
def test_status_patch(old: dict[str, Any], new: dict[str, Any], patch: dict[str, Any]) -> None:
    assert status_patch(old, new) == patch


def _configmap_plan(owner: str, start: str = "2026-11-22T11:59:59Z") -> dict[str, Any]:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "test-owned",
            "namespace": NS,
            "ownerReferences": [
                {
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "ClusterServiceVersion",
                    "name": owner,
                    "uid": "",
                }
            ],
        },
    }
    entry = {
        "resolving": "",
        "status": "Unknown",
        "resource": {
            "group": "",
            "version": "v1",
            "kind": "ConfigMap",
            "name": "test-owned",
            "manifest": json.dumps(configmap),
        },
    }
    return install_plan(plan=[entry], startTime=start)


def test_a_step_owner_named_without_uid_gets_the_uid_of_the_csv_of_that_name() -> None:
    """OLM's e2e "succeeds if there is no error on a later attempt" and "preserves owner
    references to both the old and the new ClusterServiceVersion"."""
    ip = _configmap_plan("test-owner")
    ref = ("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, "test-owner")
    waiting = decide(
        Snapshot(ip, NOW, objects={ref: None, ("v1", "ConfigMap", NS, "test-owned"): None})
    )
    assert waiting.actions == () and waiting.requeue_after is not None
    assert waiting.status is None or waiting.status.get("phase") == "Installing"
    owner = {"metadata": {"name": "test-owner", "namespace": NS, "uid": "u-owner"}}
    done = decide(
        Snapshot(ip, NOW, objects={ref: owner, ("v1", "ConfigMap", NS, "test-owned"): None})
    )
    (write,) = done.actions
    assert write.body["metadata"]["ownerReferences"][0]["uid"] == "u-owner"
    assert done.status is not None and done.status["phase"] == "Complete"


def test_a_step_owner_that_never_appears_fails_the_plan_after_a_minute() -> None:
    ip = _configmap_plan("test-owner", start="2026-11-22T11:58:30Z")
    ref = ("operators.coreos.com/v1alpha1", "ClusterServiceVersion", NS, "test-owner")
    plan = decide(
        Snapshot(ip, NOW, objects={ref: None, ("v1", "ConfigMap", NS, "test-owned"): None})
    )
    assert plan.status is not None and plan.status["phase"] == "Failed"
    assert "ClusterServiceVersion test-owner" in plan.status["message"]


def test_a_step_manifest_without_type_meta_takes_the_steps_kind_and_version() -> None:
    """OLM's e2e suite serializes step manifests without apiVersion and kind."""
    entry = {
        "resource": {
            "group": "",
            "version": "v1",
            "kind": "ConfigMap",
            "name": "x",
            "manifest": json.dumps({"metadata": {"name": "x"}}),
        }
    }
    manifest = step_manifest(entry)
    assert manifest is not None
    assert (manifest["apiVersion"], manifest["kind"]) == ("v1", "ConfigMap")
    grouped = {"resource": {**entry["resource"], "group": "apps", "kind": "Deployment"}}
    found = step_manifest(grouped)
    assert found is not None and found["apiVersion"] == "apps/v1"


def test_a_crd_being_deleted_is_waited_for_and_then_created_again() -> None:
    ip = install_plan()
    going = established(objects_of(ip)["CustomResourceDefinition"])
    going["metadata"]["deletionTimestamp"] = "2026-11-22T11:59:59Z"
    plan = decide(snap(ip, going))
    assert plan.actions == () and plan.requeue_after is not None
    assert plan.status is None or plan.status.get("phase") == "Installing"
    gone = decide(snap(ip))
    assert kinds(gone) == [("apply", "CustomResourceDefinition", "WaitingForApi")]
