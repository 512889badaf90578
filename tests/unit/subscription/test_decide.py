"""The namespace decision, branch by branch, on plain dicts: install, upgrade, approval, the
InstallPlan conditions, a plan or CSV that went away, and every "olm-py stopped half-way"
state (a plan with no status, a Subscription whose status was never written)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm.subscription.decide import decide
from olm.subscription.snapshot import Snapshot
from tests.unit.subscription.world import (
    DASHBOARD,
    GLOBAL,
    NS,
    STAMP,
    V1,
    V2,
    apply,
    conditions,
    converge,
    csv,
    install_plan,
    reference,
    status_of,
    subscription,
    with_csvs,
    with_plan_phase,
    world,
)

# ----- a fresh Subscription ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("approval", "phase", "approved"),
    [("Automatic", "Installing", True), ("Manual", "RequiresApproval", False)],
)
def test_a_new_subscription_gets_one_new_plan_and_nothing_else(
    approval: str, phase: str, approved: bool
) -> None:
    plan = decide(world([subscription(installPlanApproval=approval, startingCSV=V1)]))
    assert plan.create is not None
    assert (plan.statuses, plan.plan_statuses, plan.events) == ([], [], [])
    body, status = plan.create.body, plan.create.status
    assert body["metadata"]["name"].startswith("install-") and len(body["metadata"]["name"]) == 13
    assert body["spec"] == {
        "clusterServiceVersionNames": [V1],
        "approval": approval,
        "approved": approved,
        "generation": 1,
    }
    assert [
        (o["name"], o["uid"], o["controller"], o["blockOwnerDeletion"])
        for o in body["metadata"]["ownerReferences"]
    ] == [("memcached", "uid-memcached", False, False)]
    assert status["phase"] == phase and status["catalogSources"] == ["samples"]
    assert [s["resource"]["kind"] for s in status["plan"]] == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ]


@pytest.mark.parametrize(
    ("approval", "reason", "message"),
    [
        ("Automatic", "Installing", None),
        ("Manual", "RequiresApproval", None),  # OLM's empty message: scripts match it exactly
    ],
)
def test_after_the_create_the_subscription_points_at_the_plan(
    approval: str, reason: str, message: str | None
) -> None:
    first = world([subscription(installPlanApproval=approval, startingCSV=V1)])
    after = apply(first, decide(first))
    [plan] = after.plans.values()
    second = decide(after)
    assert second.create is None and second.plan_statuses == []
    [write] = second.statuses
    status = write.status
    assert status["currentCSV"] == V1 and status["state"] == "UpgradePending"
    assert {
        k: status[k] for k in ("installPlanRef", "installplan", "installPlanGeneration")
    } == reference(plan)
    assert "installedCSV" not in status
    assert status["lastUpdated"] == STAMP == write.patch["lastUpdated"]
    pending = conditions(status)["InstallPlanPending"]
    assert (pending["status"], pending["reason"]) == ("True", reason)
    assert (message is None and "message" not in pending) or message in pending["message"]
    health = conditions(status)["CatalogSourcesUnhealthy"]
    assert (health["status"], health["reason"], health["message"]) == (
        "False",
        "AllCatalogSourcesHealthy",
        "all available catalogsources are healthy",
    )
    assert status["catalogHealth"] == [
        {
            "catalogSourceRef": {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "CatalogSource",
                "name": "samples",
                "namespace": "olm",
                "uid": "uid-samples",
            },
            "healthy": True,
            "lastUpdated": STAMP,
        }
    ]
    assert decide(apply(after, second)).empty, "a second pass writes nothing"


def test_the_whole_automatic_story_converges_with_one_plan_per_csv() -> None:
    start = world([subscription(startingCSV=V1)])
    at_v1, _ = converge(start)
    [first] = at_v1.plans.values()
    # The InstallPlan controller ran the plan: the CSV exists (no status yet), the plan Complete.
    done = with_plan_phase(with_csvs(at_v1, csv(V1)), first["metadata"]["name"], "Complete")
    at_v2, _ = converge(done)
    status = status_of(at_v2)
    assert status["currentCSV"] == V2 and status["installedCSV"] == V1
    assert status["state"] == "UpgradePending"
    [second] = [
        p
        for p in at_v2.plans.values()
        if p is not first and p["metadata"]["name"] != first["metadata"]["name"]
    ]
    assert second["spec"]["clusterServiceVersionNames"] == [V2]
    assert second["spec"]["generation"] == 2
    manifest = json.loads(second["status"]["plan"][0]["resource"]["manifest"])
    assert manifest["spec"]["replaces"] == V1, "the resolver's upgrade edge"
    # 0.0.2 installed and 0.0.1 gone: AtLatestKnown, nothing more to plan.
    final = with_plan_phase(
        dataclass_without_csv(with_csvs(at_v2, csv(V2, replaces=V1)), V1),
        second["metadata"]["name"],
        "Complete",
    )
    end, _ = converge(final)
    status = status_of(end)
    assert (status["state"], status["currentCSV"], status["installedCSV"]) == (
        "AtLatestKnown",
        V2,
        V2,
    )
    assert len(end.plans) == 2
    assert "InstallPlanPending" not in conditions(status)


def dataclass_without_csv(snapshot: Snapshot, name: str) -> Snapshot:
    import dataclasses

    return dataclasses.replace(snapshot, csvs={k: v for k, v in snapshot.csvs.items() if k != name})


# ----- the CSV-state fix-up --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("csv_status", "label"),
    [(None, "a CSV with no status at all"), ({"phase": "Pending"}, "a Pending CSV")],
)
def test_a_current_csv_that_exists_is_installed(
    csv_status: dict[str, Any] | None, label: str
) -> None:
    plan = install_plan("install-aaaaa", [V2], "Complete")
    status = {"currentCSV": V2, "state": "UpgradePending", **reference(plan)}
    decision = decide(
        world([subscription(status=status)], csvs=[csv(V2, status=csv_status)], plans=[plan])
    )
    [write] = decision.statuses
    assert (write.status["state"], write.status["installedCSV"]) == ("AtLatestKnown", V2), label
    assert decision.create is None


def test_a_current_csv_that_does_not_exist_is_upgrade_pending() -> None:
    plan = install_plan("install-aaaaa", [V1], "Installing")
    status = {"currentCSV": V1, "state": "AtLatestKnown", **reference(plan)}
    decision = decide(world([subscription(status=status)], plans=[plan]))
    [write] = decision.statuses
    assert write.patch["state"] == "UpgradePending"


# ----- the InstallPlan conditions --------------------------------------------------------------


@pytest.mark.parametrize(
    ("phase", "extra", "kind", "reason", "message"),
    [
        ("Installing", {}, "InstallPlanPending", "Installing", ""),
        (
            "Installing",
            {
                "conditions": [
                    {
                        "type": "Installed",
                        "status": "False",
                        "reason": "InstallComponentFailed",
                        "message": "retrying: boom",
                    }
                ]
            },
            "InstallPlanPending",
            "Installing",
            "retrying: boom",
        ),
        (
            "RequiresApproval",
            {},
            "InstallPlanPending",
            "RequiresApproval",
            "",  # OLM's: the plan's own message, none while it waits for approval
        ),
        ("Planning", {}, "InstallPlanPending", "Planning", ""),
        (
            "Failed",
            {
                "message": "error creating step Role x: forbidden",
                "conditions": [
                    {
                        "type": "Installed",
                        "status": "False",
                        "reason": "InstallComponentFailed",
                        "message": "error creating step Role x: forbidden",
                    }
                ],
            },
            "InstallPlanFailed",
            "InstallComponentFailed",
            "InstallPlan install-aaaaa failed: error creating step Role x: forbidden",
        ),
        (
            "Failed",
            {"message": "it broke"},
            "InstallPlanFailed",
            "InstallPlanFailed",
            "failed: it broke",
        ),
    ],
)
def test_the_referenced_plan_phase_becomes_a_condition(
    phase: str, extra: dict[str, Any], kind: str, reason: str, message: str
) -> None:
    plan = install_plan("install-aaaaa", [V1], phase, **extra)
    status = {"currentCSV": V1, "state": "UpgradePending", **reference(plan)}
    decision = decide(world([subscription(status=status, startingCSV=V1)], plans=[plan]))
    assert decision.create is None, "no second plan for the same CSV"
    [write] = decision.statuses
    found = conditions(write.status)
    assert (found[kind]["status"], found[kind]["reason"]) == ("True", reason)
    assert message in found[kind].get("message", "")
    others = {"InstallPlanPending", "InstallPlanFailed", "InstallPlanMissing"} - {kind}
    assert not others & set(found)


def test_a_complete_plan_clears_the_plan_conditions() -> None:
    plan = install_plan("install-aaaaa", [V2], "Complete")
    status = {
        "currentCSV": V2,
        "state": "UpgradePending",
        **reference(plan),
        "conditions": [
            {
                "type": "InstallPlanPending",
                "status": "True",
                "reason": "Installing",
                "lastTransitionTime": STAMP,
            }
        ],
    }
    decision = decide(world([subscription(status=status)], csvs=[csv(V2)], plans=[plan]))
    [write] = decision.statuses
    assert "InstallPlanPending" not in conditions(write.status)


def test_while_every_subscription_waits_nothing_is_resolved() -> None:
    """A waiting namespace is not re-resolved (OLM): no plan even though 0.0.2 is in the
    catalog and the Subscription has no startingCSV."""
    plan = install_plan("install-aaaaa", [V1], "RequiresApproval", approval="Manual")
    status = {"currentCSV": V1, "state": "UpgradePending", **reference(plan)}
    snapshot = world([subscription(status=status, installPlanApproval="Manual")], plans=[plan])
    settled, decisions = converge(snapshot)
    assert all(d.create is None for d in decisions) and list(settled.plans) == ["install-aaaaa"]


def test_a_failed_plan_is_not_retried_by_itself() -> None:
    plan = install_plan("install-aaaaa", [V1], "Failed", message="boom")
    status = {"currentCSV": V1, "state": "UpgradePending", **reference(plan)}
    settled, decisions = converge(
        world([subscription(status=status, startingCSV=V1)], plans=[plan])
    )
    assert all(d.create is None for d in decisions)
    assert conditions(status_of(settled))["InstallPlanFailed"]["status"] == "True"


# ----- a plan that went away -------------------------------------------------------------------


def test_a_pending_plan_that_is_gone_is_replaced() -> None:
    status = {
        "currentCSV": V1,
        "state": "UpgradePending",
        **reference(install_plan("install-gone1", [V1], "RequiresApproval")),
    }
    snapshot = world([subscription(status=status, startingCSV=V1)])
    first = decide(snapshot)
    assert first.create is not None and first.create.body["spec"]["clusterServiceVersionNames"] == [
        V1
    ]
    assert first.create.body["spec"]["generation"] == 2, "after the Subscription's generation 1"
    settled, _ = converge(snapshot)
    status = status_of(settled)
    [plan] = settled.plans.values()
    assert status["installPlanRef"]["name"] == plan["metadata"]["name"] != "install-gone1"
    assert status["state"] == "UpgradePending" and status["currentCSV"] == V1
    assert "InstallPlanMissing" not in conditions(status)


def test_a_pending_plan_that_is_gone_is_explained_when_it_cannot_be_replaced() -> None:
    status = {
        "currentCSV": V1,
        "state": "UpgradePending",
        **reference(install_plan("install-gone1", [V1], "Installing")),
    }
    decision = decide(
        world([subscription(status=status, startingCSV=V1, source="nope")], sources=[], loaded={})
    )
    [write] = decision.statuses
    missing = conditions(write.status)["InstallPlanMissing"]
    assert (missing["status"], missing["reason"]) == ("True", "ReferencedInstallPlanNotFound")
    assert (
        missing["message"]
        == "InstallPlan install-gone1 was deleted before it completed; resolving again"
    )
    assert {
        k: write.patch[k] for k in ("currentCSV", "state", "installPlanRef", "installplan")
    } == dict.fromkeys(("currentCSV", "state", "installPlanRef", "installplan"))


def test_an_installed_subscription_whose_plan_is_gone_says_so_and_stays() -> None:
    status = {
        "currentCSV": V2,
        "installedCSV": V2,
        "state": "AtLatestKnown",
        **reference(install_plan("install-gone1", [V2], "Complete")),
    }
    decision = decide(world([subscription(status=status)], csvs=[csv(V2, replaces=V1)]))
    assert decision.create is None
    [write] = decision.statuses
    missing = conditions(write.status)["InstallPlanMissing"]
    assert (missing["status"], missing["reason"]) == ("True", "ReferencedInstallPlanNotFound")
    assert write.status["state"] == "AtLatestKnown" and write.status["currentCSV"] == V2


# ----- olm-py stopped half-way -----------------------------------------------------------------


def test_a_plan_whose_status_was_never_written_is_adopted_not_duplicated() -> None:
    unwritten = install_plan("install-abcde", [V1], None)
    decision = decide(world([subscription(startingCSV=V1)], plans=[unwritten]))
    assert decision.create is None
    [adopted] = decision.plan_statuses
    assert adopted.name == "install-abcde" and adopted.resource_version == "7"
    assert adopted.status["phase"] == "Installing"
    assert [s["resource"]["kind"] for s in adopted.status["plan"]][:2] == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
    ]
    [write] = decision.statuses
    assert write.status["installPlanRef"]["name"] == "install-abcde"
    pending = conditions(write.status)["InstallPlanPending"]
    assert pending["reason"] == "Installing", "judged on the adopted phase"


def test_an_unwritten_manual_plan_is_adopted_as_requires_approval() -> None:
    unwritten = install_plan("install-abcde", [V1], None, approval="Manual")
    decision = decide(
        world([subscription(startingCSV=V1, installPlanApproval="Manual")], plans=[unwritten])
    )
    [adopted] = decision.plan_statuses
    assert adopted.status["phase"] == "RequiresApproval"


def test_a_referenced_plan_with_no_status_is_adopted() -> None:
    unwritten = install_plan("install-abcde", [V1], None)
    status = {"currentCSV": V1, "state": "UpgradePending", **reference(unwritten)}
    decision = decide(world([subscription(status=status, startingCSV=V1)], plans=[unwritten]))
    assert decision.create is None
    assert [w.name for w in decision.plan_statuses] == ["install-abcde"]
    settled, _ = converge(world([subscription(status=status, startingCSV=V1)], plans=[unwritten]))
    assert settled.plans["install-abcde"]["status"]["phase"] == "Installing"


def test_a_subscription_whose_status_was_not_written_adopts_the_running_plan() -> None:
    running = install_plan("install-abcde", [V1], "Installing")
    settled, decisions = converge(world([subscription(startingCSV=V1)], plans=[running]))
    assert all(d.create is None and d.plan_statuses == [] for d in decisions)
    status = status_of(settled)
    assert status["installPlanRef"]["name"] == "install-abcde" and status["currentCSV"] == V1


def test_a_subscription_whose_status_was_not_written_follows_what_its_plan_installed() -> None:
    """The plan ran while the Subscription's status was never written: it picks up 0.0.1 as
    installed and moves on to 0.0.2 (not a second 0.0.1 plan, not a conflict)."""
    done = install_plan("install-abcde", [V1], "Complete")
    settled, _ = converge(world([subscription(startingCSV=V1)], csvs=[csv(V1)], plans=[done]))
    status = status_of(settled)
    assert status["installedCSV"] == V1 and status["currentCSV"] == V2
    [upgrade] = [p for name, p in settled.plans.items() if name != "install-abcde"]
    assert upgrade["spec"]["clusterServiceVersionNames"] == [V2]


def test_a_subscription_behind_an_upgrade_its_plan_made_follows_the_replacement() -> None:
    """Stopped after the 0.0.2 plan was created but before the Subscription said so; the plan
    ran: 0.0.2 exists and replaces 0.0.1. The Subscription follows, and no plan is made."""
    first, second = (
        install_plan("install-aaaaa", [V1], "Complete"),
        install_plan("install-bbbbb", [V2], "Complete", generation=2),
    )
    status = {"currentCSV": V1, "installedCSV": V1, "state": "AtLatestKnown", **reference(first)}
    settled, decisions = converge(
        world(
            [subscription(status=status, startingCSV=V1)],
            csvs=[csv(V1), csv(V2, replaces=V1)],
            plans=[first, second],
        )
    )
    assert all(d.create is None for d in decisions)
    status = status_of(settled)
    assert (status["currentCSV"], status["installedCSV"], status["state"]) == (
        V2,
        V2,
        "AtLatestKnown",
    )
    assert "ResolutionFailed" not in conditions(status)


def test_an_unwritten_plan_nobody_wants_any_more_is_marked_failed() -> None:
    stale = install_plan("install-zzzzz", [V1], None)
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown"}
    decision = decide(world([subscription(status=status)], csvs=[csv(V2)], plans=[stale]))
    [superseded] = decision.plan_statuses
    assert superseded.status["phase"] == "Failed"
    [installed] = superseded.status["conditions"]
    assert (installed["type"], installed["status"], installed["reason"]) == (
        "Installed",
        "False",
        "PlanUnknown",
    )
    assert "never ran" in superseded.status["message"]


def test_an_unwritten_plan_of_someone_else_is_left_alone() -> None:
    foreign = install_plan("install-zzzzz", [V1], None, owners=("another",))
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown"}
    decision = decide(world([subscription(status=status)], csvs=[csv(V2)], plans=[foreign]))
    assert decision.plan_statuses == [] and decision.create is None


# ----- the terminating namespace ----------------------------------------------------------------


@pytest.mark.parametrize("space", ["terminating", "gone"])
def test_a_terminating_namespace_gets_no_plan_no_event(space: str) -> None:
    unwritten = install_plan("install-abcde", [V2], None)
    snapshot = world(
        [subscription(labelled=False), subscription("broken", source="nope")],
        plans=[unwritten],
        terminating=space == "terminating",
        space=True if space == "terminating" else None,
    )
    decision = decide(snapshot)
    assert decision.create is None and decision.plan_statuses == []
    assert decision.events == []
    # Status may still be written (the API server allows updates while a namespace terminates).
    assert {w.name for w in decision.statuses} == {"memcached", "broken"}


# ----- catalogs ---------------------------------------------------------------------------------


def test_while_a_catalog_is_not_loaded_yet_nothing_is_resolved_and_health_is_kept() -> None:
    """Right after a restart the catalogs are not fetched yet: no plan, no health flapping."""
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown"}
    decision = decide(world([subscription(status=status)], csvs=[csv(V2)], loaded={}))
    assert decision.statuses == [] and decision.create is None
    assert decision.requeue_after == 2.0


@pytest.mark.parametrize(
    ("sources", "loaded", "spec", "status", "reason", "message"),
    [
        (
            [],
            {},
            {},
            "True",
            "NoCatalogSourcesFound",
            "dependency resolution requires at least one catalogsource",
        ),
        (
            None,
            None,
            {"source": "nope"},
            "True",
            "UnhealthyCatalogSourceFound",
            "targeted catalogsource olm/nope missing",
        ),
        (
            [{"name": "samples", "reason": "RegistryServerError"}],
            {},
            {},
            "True",
            "UnhealthyCatalogSourceFound",
            "targeted catalogsource olm/samples unhealthy",
        ),
        (
            [{"name": "samples"}, {"name": "bogus", "namespace": NS, "reason": "SpecInvalidError"}],
            None,
            {},
            "True",
            "UnhealthyCatalogSourceFound",
            f"unhealthy catalog sources: {NS}/bogus",
        ),
        (
            None,
            None,
            {},
            "False",
            "AllCatalogSourcesHealthy",
            "all available catalogsources are healthy",
        ),
    ],
)
def test_catalog_sources_unhealthy(
    sources: list[dict[str, Any]] | None,
    loaded: dict[Any, Any] | None,
    spec: dict[str, str],
    status: str,
    reason: str,
    message: str,
) -> None:
    from tests.unit.subscription.world import catalog_source

    built = None if sources is None else [catalog_source(**s) for s in sources]
    decision = decide(world([subscription(**spec)], sources=built, loaded=loaded))
    statuses = decision.statuses or [None]
    if decision.create is not None:  # resolvable: the condition comes with the next decision
        snapshot = apply(world([subscription(**spec)], sources=built, loaded=loaded), decision)
        statuses = decide(snapshot).statuses
    [write] = statuses
    assert write is not None
    found = conditions(write.status)["CatalogSourcesUnhealthy"]
    assert (found["status"], found["reason"], found["message"]) == (status, reason, message)


def test_a_missing_catalog_fails_resolution_once_with_one_event() -> None:
    snapshot = world([subscription(source="nope")])
    decision = decide(snapshot)
    [write] = decision.statuses
    failed = conditions(write.status)["ResolutionFailed"]
    assert (failed["status"], failed["reason"]) == ("True", "ConstraintsNotSatisfiable")
    assert 'catalog source "nope"' in failed["message"] and "Fix spec.source" in failed["message"]
    assert "lastTransitionTime" not in failed, "OLM writes ResolutionFailed with no time"
    [event] = decision.events
    assert (event.type, event.reason) == ("Warning", "ResolutionFailed")
    assert decide(apply(snapshot, decision)).empty, "no second event, no rewrite"


def test_catalog_health_keeps_its_timestamps_while_nothing_changes() -> None:
    status = {
        "currentCSV": V2,
        "installedCSV": V2,
        "state": "AtLatestKnown",
        "catalogHealth": [
            {
                "catalogSourceRef": {
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "CatalogSource",
                    "name": "samples",
                    "namespace": "olm",
                    "uid": "uid-samples",
                },
                "healthy": True,
                "lastUpdated": "2020-01-01T00:00:00Z",
            }
        ],
        "conditions": [
            {
                "type": "CatalogSourcesUnhealthy",
                "status": "False",
                "reason": "AllCatalogSourcesHealthy",
                "message": "all available catalogsources are healthy",
                "lastTransitionTime": "2020-01-01T00:00:00Z",
            }
        ],
        "lastUpdated": "2020-01-01T00:00:00Z",
    }
    assert decide(world([subscription(status=status)], csvs=[csv(V2)])).empty


# ----- labels, dependencies, several Subscriptions -------------------------------------------


def test_a_plan_of_several_bundles_lists_every_csv_then_every_crd_then_the_rest() -> None:
    """OLM orders a whole plan's steps (its OrderSteps), not bundle by bundle (corpus: noobaa
    and awss3-operator-registry, whose dependency's CSV came after the first bundle's CRDs)."""
    decision = decide(world([subscription("dashboard", package="memcached-dashboard")]))
    assert decision.create is not None
    listed = [(e["resolving"], e["resource"]["kind"]) for e in decision.create.status["plan"]]
    kinds = [kind for _, kind in listed]
    assert kinds[:2] == ["ClusterServiceVersion", "ClusterServiceVersion"]
    assert [r for r, k in listed if k == "ClusterServiceVersion"] == [DASHBOARD, V2]
    assert kinds[2] == "CustomResourceDefinition" and kinds.count("CustomResourceDefinition") == 1
    assert "ClusterServiceVersion" not in kinds[2:] and "CustomResourceDefinition" not in kinds[3:]


def test_a_dependency_goes_into_the_same_plan() -> None:
    decision = decide(world([subscription("dashboard", package="memcached-dashboard")]))
    assert decision.create is not None
    assert decision.create.body["spec"]["clusterServiceVersionNames"] == [DASHBOARD, V2]
    # Nobody subscribed to the dependency: the plan subscribes, named as OLM names it.
    manifests = [json.loads(e["resource"]["manifest"]) for e in decision.create.status["plan"]]
    (subscribes,) = [m for m in manifests if m["kind"] == "Subscription"]
    assert subscribes["metadata"] == {
        "name": f"memcached-operator-alpha-samples-{GLOBAL}",
        "namespace": NS,
    }
    assert subscribes["spec"] == {
        "source": "samples",
        "sourceNamespace": GLOBAL,
        "name": "memcached-operator",
        "channel": "alpha",
        "startingCSV": V2,
        "installPlanApproval": "Automatic",
    }


def test_a_dependency_someone_subscribed_to_gets_no_second_subscription() -> None:
    decision = decide(
        world(
            [
                subscription("dashboard", package="memcached-dashboard"),
                subscription("memcached"),
            ]
        )
    )
    assert decision.create is not None
    kinds = [e["resource"]["kind"] for e in decision.create.status["plan"]]
    assert "Subscription" not in kinds


@pytest.mark.parametrize(
    ("other", "planned"),
    [
        ({"source": "nope"}, None),  # fails: nothing to plan, and 0.0.2 is not planned alone
        ({"startingCSV": V1}, [V1]),  # its own bundle only, never 0.0.2 a second time
    ],
)
def test_a_dependency_a_waiting_plan_installs_is_not_planned_twice(
    other: dict[str, str], planned: list[str] | None
) -> None:
    waiting = install_plan(
        "install-aaaaa",
        [DASHBOARD, V2],
        "RequiresApproval",
        approval="Manual",
        owners=("dashboard",),
    )
    dash_status = {"currentCSV": DASHBOARD, "state": "UpgradePending", **reference(waiting)}
    snapshot = world(
        [
            subscription("dashboard", status=dash_status, package="memcached-dashboard"),
            subscription("other", **other),
        ],
        plans=[waiting],
    )
    decision = decide(snapshot)
    names = decision.create.body["spec"]["clusterServiceVersionNames"] if decision.create else None
    assert names == planned


def test_one_subscription_failing_does_not_stop_another() -> None:
    snapshot = world([subscription(startingCSV=V1), subscription("broken", source="nope")])
    decision = decide(snapshot)
    assert decision.create is not None
    assert decision.create.body["spec"]["clusterServiceVersionNames"] == [V1]
    assert [o["name"] for o in decision.create.body["metadata"]["ownerReferences"]] == [
        "broken",
        "memcached",
    ]
    settled, _ = converge(snapshot)
    assert "ResolutionFailed" in conditions(status_of(settled, "broken"))
    assert "ResolutionFailed" not in conditions(status_of(settled))


def test_any_manual_subscription_makes_the_plan_manual() -> None:
    decision = decide(
        world(
            [
                subscription(startingCSV=V1),
                subscription(
                    "dashboard", package="memcached-dashboard", installPlanApproval="Manual"
                ),
            ]
        )
    )
    assert decision.create is not None and decision.create.body["spec"]["approval"] == "Manual"


def test_a_replaced_csv_still_present_does_not_fail_resolution() -> None:
    """Mid-upgrade, 0.0.1 (being replaced) and 0.0.2 both exist."""
    plan = install_plan("install-bbbbb", [V2], "Complete", generation=2)
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown", **reference(plan)}
    settled, decisions = converge(
        world([subscription(status=status)], csvs=[csv(V1), csv(V2, replaces=V1)], plans=[plan])
    )
    assert all(d.create is None and d.events == [] for d in decisions)
    assert "ResolutionFailed" not in conditions(status_of(settled))


def test_a_csv_applied_by_hand_without_apis_is_no_packages_member_as_in_olm() -> None:
    """OLM's e2e "creation using existing CSV": a CSV created by hand (no properties
    annotation) named like a catalog bundle; a Subscription to the package installs its
    channel's head beside it."""
    by_hand = csv(DASHBOARD)  # memcached-dashboard.*: it owns no CRD
    decision = decide(
        world([subscription("dashboard", package="memcached-dashboard")], csvs=[by_hand])
    )
    status = next(iter(s.status for s in decision.statuses if s.name == "dashboard"), {})
    failed = [c for c in status.get("conditions") or [] if c["type"] == "ResolutionFailed"]
    assert not any(c["status"] == "True" for c in failed)


def test_a_csv_applied_by_hand_still_counts_for_the_apis_it_provides() -> None:
    by_hand = csv(V1)  # owns the Memcached CRD, no properties annotation
    decision = decide(world([subscription()], csvs=[by_hand]))
    (write,) = [s for s in decision.statuses if s.name == "memcached"]
    (failed,) = [c for c in write.status["conditions"] if c["type"] == "ResolutionFailed"]
    assert failed["status"] == "True"
    assert f"ClusterServiceVersion {V1} is already installed here" in failed["message"]


def test_a_dependencys_subscription_finds_the_csv_its_plan_installed() -> None:
    """The Subscription a plan makes for a dependency starts at the CSV that plan installed."""
    installed = csv(V2)
    installed["metadata"]["annotations"] = {
        "operatorframework.io/properties": json.dumps(
            {
                "properties": [
                    {
                        "type": "olm.package",
                        "value": {"packageName": "memcached-operator", "version": "0.0.2"},
                    }
                ]
            }
        )
    }
    made = subscription("memcached-operator-alpha-samples-olm", startingCSV=V2)
    plan = install_plan("install-aaaaa", [DASHBOARD, V2], "Complete", owners=("dashboard",))
    decision = decide(world([made], csvs=[installed], plans=[plan]))
    assert decision.create is None
    (write,) = [s for s in decision.statuses if s.name == made["metadata"]["name"]]
    assert write.status["installedCSV"] == V2 and write.status["state"] == "AtLatestKnown"
    assert write.status["installPlanRef"]["name"] == "install-aaaaa", "the plan that made it"
    assert "installPlanGeneration" not in write.status, (
        "OLM's ensureSubscriptionInstallPlanState refers to the plan without its generation"
    )
