"""The CSV phase machine, table-driven over plain data (OLM v0 §2.2)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.csv.phase import decide
from olm.install.deployments import render_deployment
from olm.install.strategy import parse_strategy
from tests.unit.csv.world import GROUP, NOW, NS, csv, healthy, moved, world


def test_new_csv_goes_pending() -> None:
    assert moved(decide(world(csv()))) == "Pending/RequirementsUnknown"


def test_pending_with_met_requirements_goes_install_ready() -> None:
    plan = decide(world(csv(phase="Pending", reason="RequirementsUnknown")))
    assert moved(plan) == "InstallReady/AllRequirementsMet"
    assert plan.event == (
        "Normal",
        "AllRequirementsMet",
        "all requirements found, attempting install",
    )


def test_missing_crd_keeps_pending_and_names_it() -> None:
    subject = csv(
        phase="Pending",
        reason="RequirementsUnknown",
        customresourcedefinitions={
            "owned": [{"name": "things.example.com", "version": "v1", "kind": "Thing"}]
        },
    )
    plan = decide(world(subject))
    assert moved(plan) == "Pending/RequirementsNotMet"
    assert "things.example.com: CRD is not present" in plan.status["message"]  # type: ignore[index]
    assert plan.status["requirementStatus"][0]["status"] == "NotPresent"  # type: ignore[index]


def test_install_ready_applies_deployments_with_olm_labels() -> None:
    plan = decide(world(csv(phase="InstallReady", reason="AllRequirementsMet")))
    assert moved(plan) == "Installing/InstallSucceeded"
    [deployment] = plan.apply
    assert deployment["metadata"]["labels"]["olm.owner"] == "op.v1"
    assert deployment["spec"]["template"]["metadata"]["annotations"]["olm.operatorGroup"] == "og"
    assert deployment["spec"]["revisionHistoryLimit"] == 1


def test_installing_becomes_succeeded_when_healthy() -> None:
    subject = csv(phase="Installing", reason="InstallSucceeded")
    desired = render_deployment(subject, parse_strategy(subject).deployments[0])
    assert (
        moved(decide(world(subject, deployments={"op": healthy(desired)})))
        == "Succeeded/InstallSucceeded"
    )


def test_installing_times_out_after_five_minutes() -> None:
    subject = csv(phase="Installing", reason="InstallWaiting")
    desired = render_deployment(subject, parse_strategy(subject).deployments[0])
    late = NOW + datetime.timedelta(minutes=6)
    assert (
        moved(decide(world(subject, deployments={"op": desired}, now=late)))
        == "Failed/InstallCheckFailed"
    )


def test_succeeded_and_healthy_changes_nothing() -> None:
    subject = csv(phase="Succeeded", reason="InstallSucceeded")
    desired = render_deployment(subject, parse_strategy(subject).deployments[0])
    plan = decide(world(subject, deployments={"op": healthy(desired)}))
    assert plan.status is None and plan.event is None and not plan.apply


def test_drift_sends_succeeded_back_to_install_ready() -> None:
    subject = csv(phase="Succeeded", reason="InstallSucceeded")
    edited = healthy(render_deployment(subject, parse_strategy(subject).deployments[0]))
    edited["spec"]["replicas"] = 5
    assert (
        moved(decide(world(subject, deployments={"op": edited})))
        == "InstallReady/ComponentUnhealthy"
    )


def test_missing_deployment_fails_then_reinstalls() -> None:
    assert (
        moved(decide(world(csv(phase="Succeeded", reason="InstallSucceeded"))))
        == "Failed/ComponentUnhealthy"
    )
    assert (
        moved(decide(world(csv(phase="Failed", reason="ComponentUnhealthy"))))
        == "Pending/NeedsReinstall"
    )


def test_replacement_moves_old_to_replacing_then_deleting() -> None:
    old = csv("op.v1", phase="Succeeded", reason="InstallSucceeded")
    new = csv("op.v2", phase="Pending", reason="RequirementsUnknown", replaces="op.v1")
    desired = render_deployment(old, parse_strategy(old).deployments[0])
    plan = decide(world(old, others=[new], deployments={"op": healthy(desired)}))
    assert moved(plan) == "Replacing/BeingReplaced" and plan.wake == ["op.v2"]
    old_replacing = csv("op.v1", phase="Replacing", reason="BeingReplaced")
    new_done = csv("op.v2", phase="Succeeded", reason="InstallSucceeded", replaces="op.v1")
    assert moved(decide(world(old_replacing, others=[new_done]))) == "Deleting/Replaced"
    assert decide(world(csv("op.v1", phase="Deleting", reason="Replaced"))).delete_csv


def test_new_csv_waits_until_the_old_one_is_replacing() -> None:
    old = csv("op.v1", phase="Succeeded", reason="InstallSucceeded")
    new = csv("op.v2", phase="Pending", reason="RequirementsUnknown", replaces="op.v1")
    plan = decide(world(new, others=[old]))
    assert plan.status is None or plan.status.get("phase") == "Pending"
    assert plan.wake == ["op.v1"]


@pytest.mark.parametrize(
    ("override", "reported", "blocked"),
    [
        ("False", None, True),
        ("True", "False", False),  # an override wins
        (None, "False", True),
        (None, "True", False),
        (None, None, False),
    ],
)
def test_upgradeable_gates_the_replacement(
    override: str | None, reported: str | None, blocked: bool
) -> None:
    old = csv("op.v1", phase="Replacing", reason="BeingReplaced")
    new = csv("op.v2", phase="Pending", reason="RequirementsUnknown", replaces="op.v1")
    condition: dict[str, Any] = {
        "metadata": {"name": "op.v1", "generation": 1},
        "spec": {},
        "status": {},
    }
    if override:
        condition["spec"]["overrides"] = [
            {"type": "Upgradeable", "status": override, "message": "busy"}
        ]
    if reported:
        condition["status"]["conditions"] = [
            {"type": "Upgradeable", "status": reported, "message": "busy", "observedGeneration": 1}
        ]
    plan = decide(world(new, others=[old], condition=condition))
    assert (moved(plan) == "Pending/OperatorConditionNotUpgradeable") is blocked


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        ([], "Failed/NoOperatorGroup"),
        (
            [GROUP, {**GROUP, "metadata": {"name": "og2", "namespace": NS}}],
            "Failed/TooManyOperatorGroups",
        ),
    ],
)
def test_operator_group_count(groups: list[dict[str, Any]], expected: str) -> None:
    assert moved(decide(world(csv(), groups=groups))) == expected


def test_unknown_strategy_is_invalid() -> None:
    subject = csv(phase="Pending", reason="RequirementsUnknown")
    subject["spec"]["install"]["strategy"] = "helm"
    plan = decide(world(subject))
    assert moved(plan) == "Failed/InvalidInstallStrategy"
    assert plan.event is not None and plan.event[0] == "Warning"


def test_owner_conflict_outside_the_replacement_chain() -> None:
    crd = {"owned": [{"name": "things.example.com", "version": "v1", "kind": "Thing"}]}
    established = {
        "things.example.com": {
            "metadata": {"uid": "u"},
            "spec": {"versions": [{"name": "v1", "served": True}]},
            "status": {
                "conditions": [
                    {"type": "Established", "status": "True"},
                    {"type": "NamesAccepted", "status": "True"},
                ]
            },
        }
    }
    mine = csv("a.v1", phase="Pending", reason="RequirementsUnknown", customresourcedefinitions=crd)
    theirs = csv(
        "b.v1", phase="Succeeded", reason="InstallSucceeded", customresourcedefinitions=crd
    )
    plan = decide(world(mine, others=[theirs], crds=established))
    assert moved(plan) == "Failed/OwnerConflict"
    # As in OLM, the requirements were checked first and their status stays (OLM's
    # "unassociated ClusterServiceVersion ... owns the same CRD" spec reads it).
    assert plan.status is not None
    assert {"kind": "CustomResourceDefinition", "name": "things.example.com"}.items() <= next(
        r for r in plan.status["requirementStatus"] if r["kind"] == "CustomResourceDefinition"
    ).items()


def test_status_history_appends_only_on_phase_or_reason_change() -> None:
    subject = csv(phase="Installing", reason="InstallWaiting")
    subject["status"]["message"] = "installing: old"
    subject["status"]["conditions"] = [
        {"phase": "Installing", "reason": "InstallWaiting", "message": "installing: old"}
    ]
    desired = render_deployment(subject, parse_strategy(subject).deployments[0])
    plan = decide(world(subject, deployments={"op": desired}))
    assert plan.status is not None and len(plan.status["conditions"]) == 1
