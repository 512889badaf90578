"""The Subscription controller's decision with olm-py's version policies (beyond OLM): a
Manual plan approved by `olm-py.io/auto-approve`, and the VersionHeld condition of
`olm-py.io/version-range`, over plain data."""

from __future__ import annotations

from typing import Any

from olm.subscription.decide import decide
from tests.unit.subscription.world import (
    V1,
    V2,
    conditions,
    csv,
    install_plan,
    reference,
    subscription,
    world,
)

V003, V010 = "memcached-operator.v0.0.3", "memcached-operator.v0.1.0"


def annotated(sub: dict[str, Any], **annotations: str) -> dict[str, Any]:
    sub["metadata"]["annotations"] = {
        f"olm-py.io/{k.replace('_', '-')}": v for k, v in annotations.items()
    }
    return sub


def installed_on_beta(version_range: str | None, extra: list[dict[str, Any]] | None = None) -> Any:
    plan = install_plan("install-aaaaa", [V003], "Complete")
    status = {
        "currentCSV": V003,
        "installedCSV": V003,
        "state": "AtLatestKnown",
        **reference(plan),
        "conditions": extra or [],
    }
    sub = subscription(status=status, channel="beta")
    if version_range is not None:
        annotated(sub, version_range=version_range)
    return world([sub], csvs=[csv(V003)], plans=[plan])


def test_a_patch_policy_approves_the_first_install_and_says_so() -> None:
    sub = annotated(
        subscription(installPlanApproval="Manual", startingCSV=V1), auto_approve="patch"
    )
    decision = decide(world([sub]))
    assert decision.create is not None
    body = decision.create.body
    assert body["spec"]["approval"] == "Manual" and body["spec"]["approved"] is True
    assert body["metadata"]["annotations"]["olm-py.io/auto-approved"] == (
        f"memcached (patch): first install of {V1} 0.0.1"
    )
    [event] = decision.create.events  # recorded on the plan once it exists
    assert (event.type, event.reason) == ("Normal", "InstallPlanAutoApproved")


def test_a_manual_subscription_without_policy_waits_as_under_olm() -> None:
    decision = decide(world([subscription(installPlanApproval="Manual", startingCSV=V1)]))
    assert decision.create is not None
    assert decision.create.body["spec"]["approved"] is False
    assert "annotations" not in decision.create.body["metadata"]


def test_a_range_holds_an_installed_subscription_and_the_condition_says_what() -> None:
    decision = decide(installed_on_beta("<0.1.0"))
    assert decision.create is None
    [write] = decision.statuses
    held = conditions(write.status)["VersionHeld"]
    assert (held["status"], held["reason"]) == ("True", "OutsideVersionRange")
    assert "holds back 0.1.0" in held["message"]
    assert write.status["state"] == "AtLatestKnown"


def test_without_a_range_the_subscription_upgrades_as_under_olm() -> None:
    stale = {"type": "VersionHeld", "status": "True", "reason": "OutsideVersionRange"}
    decision = decide(installed_on_beta(None, [stale]))
    assert decision.create is not None
    assert decision.create.body["spec"]["clusterServiceVersionNames"] == [V010]


def test_a_bad_range_holds_and_warns_once() -> None:
    decision = decide(installed_on_beta("every tuesday"))
    assert decision.create is None
    [write] = decision.statuses
    held = conditions(write.status)["VersionHeld"]
    assert (held["status"], held["reason"]) == ("True", "InvalidVersionRange")
    assert [e.reason for e in decision.events] == ["InvalidVersionRange"]
    again = decide(installed_on_beta("every tuesday", [held]))
    assert again.events == []


def test_removing_the_range_removes_the_condition() -> None:
    plan = install_plan("install-aaaaa", [V2], "Complete")
    stale = {"type": "VersionHeld", "status": "True", "reason": "OutsideVersionRange"}
    status = {
        "currentCSV": V2,
        "installedCSV": V2,
        "state": "AtLatestKnown",
        **reference(plan),
        "conditions": [stale],
    }
    decision = decide(world([subscription(status=status)], csvs=[csv(V2)], plans=[plan]))
    [write] = decision.statuses
    assert "VersionHeld" not in conditions(write.status)


def rolled_from_v2(crds: dict[str, Any] | None = None) -> Any:
    import dataclasses

    plan = install_plan("install-aaaaa", [V2], "Complete")
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown", **reference(plan)}
    sub = annotated(
        subscription(status=status, installPlanApproval="Automatic"),
        rollback_to=V1,
        version_range="0.0.1",
    )
    snapshot = world([sub], csvs=[csv(V2, replaces=V1)], plans=[plan])
    return dataclasses.replace(snapshot, crds=crds or {})


def test_a_rollback_is_one_manual_plan_back_to_the_earlier_csv_whatever_the_approval() -> None:
    decision = decide(rolled_from_v2())
    assert decision.create is not None
    body = decision.create.body
    assert body["spec"]["clusterServiceVersionNames"] == [V1]
    assert (body["spec"]["approval"], body["spec"]["approved"]) == ("Manual", False)
    assert body["metadata"]["annotations"]["olm-py.io/rollback"] == f"memcached: {V2} -> {V1}"
    [csv_step] = [
        s
        for s in decision.create.status["plan"]
        if s["resource"]["kind"] == "ClusterServiceVersion"
    ]
    assert f'"replaces":"{V2}"' in csv_step["resource"]["manifest"]  # V1 replaces V2


def test_a_rollback_that_would_drop_a_stored_crd_version_is_refused_and_said() -> None:
    stored = {
        "memcacheds.cache.example.com": {
            "metadata": {"name": "memcacheds.cache.example.com"},
            "spec": {"versions": [{"name": "v1alpha1"}, {"name": "v1beta1"}]},
            "status": {"storedVersions": ["v1alpha1", "v1beta1"]},
        }
    }
    decision = decide(rolled_from_v2(stored))
    assert decision.create is None
    [write] = decision.statuses
    refused = conditions(write.status)["Rollback"]
    assert (refused["status"], refused["reason"]) == ("False", "RollbackRefused")
    assert "cannot be rolled back" in refused["message"] and "v1beta1" in refused["message"]
    assert write.status["installedCSV"] == V2


def test_once_the_rollback_plan_is_complete_the_version_rolled_back_from_is_deleted() -> None:
    import dataclasses

    plan = install_plan("install-bbbbb", [V1], "Complete")
    plan["metadata"]["annotations"] = {"olm-py.io/rollback": f"memcached: {V2} -> {V1}"}
    status = {"currentCSV": V1, "installedCSV": V2, "state": "UpgradePending", **reference(plan)}
    sub = annotated(subscription(status=status), rollback_to=V1, version_range="0.0.1")
    first = install_plan("install-aaaaa", [V2], "Complete")  # what installed V2: goes with it
    snapshot = world([sub], csvs=[csv(V1), csv(V2, replaces=V1)], plans=[plan, first])
    decision = decide(snapshot)
    assert (decision.delete_csvs, decision.delete_plans) == ([V2], ["install-aaaaa"])
    # The first plan that installed V1 is no rollback's: nothing is deleted for it.
    del plan["metadata"]["annotations"]
    assert (
        decide(dataclasses.replace(snapshot, plans={plan["metadata"]["name"]: plan})).delete_csvs
        == []
    )


def test_an_auto_approve_value_that_is_not_a_policy_is_said_on_the_subscription() -> None:
    plan = install_plan("install-aaaaa", [V2], "Complete")
    status = {"currentCSV": V2, "installedCSV": V2, "state": "AtLatestKnown", **reference(plan)}
    sub = annotated(
        subscription(status=status, installPlanApproval="Manual"), auto_approve="weekly"
    )
    [write] = decide(world([sub], csvs=[csv(V2)], plans=[plan])).statuses
    said = conditions(write.status)["AutoApproveInvalid"]
    assert (said["status"], said["reason"]) == ("True", "InvalidAutoApprove")
    assert "olm-py.io/auto-approve='weekly' is not a policy" in said["message"]


def test_a_done_rollback_removes_its_request_so_it_is_carried_out_once() -> None:
    plan = install_plan("install-bbbbb", [V1], "Complete")
    plan["metadata"]["annotations"] = {"olm-py.io/rollback": f"memcached: {V2} -> {V1}"}
    status = {"currentCSV": V1, "installedCSV": V1, "state": "AtLatestKnown", **reference(plan)}
    sub = annotated(subscription(status=status), rollback_to=V1, version_range="0.0.1")
    done = csv(V1, status={"phase": "Succeeded", "reason": "InstallSucceeded"})
    decision = decide(world([sub], csvs=[done], plans=[plan]))
    assert decision.rollbacks_done == ["memcached"]
    [write] = decision.statuses
    said = conditions(write.status)["Rollback"]
    assert (said["status"], said["reason"]) == ("True", "RolledBack")
    # Once the request is gone the condition stays while V1 is what is installed.
    del sub["metadata"]["annotations"]["olm-py.io/rollback-to"]
    sub["status"] = write.status
    again = decide(world([sub], csvs=[done], plans=[plan]))
    assert again.rollbacks_done == [] and again.statuses == []
