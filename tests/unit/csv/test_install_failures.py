"""Refused installs: one sentence on status, and the same refusal again changes nothing."""

from __future__ import annotations

import datetime

import pytest

from olm.csv.phase import RETRY_FAILED_INSTALL_AFTER, decide, install_failed
from olm.install.deployments import refusal_message
from tests.unit.csv.world import NOW, csv, moved, world

DEPLOYMENT = {"metadata": {"name": "op-controller"}}
INVALID = (
    "PATCH /apis/apps/v1/namespaces/ns1/deployments/op-controller failed (422): Deployment.apps "
    '"op-controller" is invalid: spec.template.spec.containers[0].ports[0].containerPort: '
    "Invalid value: 70000: must be between 1 and 65535, inclusive"
)


@pytest.mark.parametrize(
    ("index", "error", "status", "fragments"),
    [
        (
            0,
            INVALID,
            422,
            [
                "install strategy failed: the API server refused Deployment op-controller "
                "(spec.install.spec.deployments[0])",
                "containers[0].ports[0].containerPort: Invalid value: 70000",
                "Fix spec.install.spec.deployments[0].spec in the ClusterServiceVersion.",
            ],
        ),
        (2, "no parenthesis (422) here", 422, ["deployments[2]", "no parenthesis"]),
        (0, "PATCH x failed (500): etcd is sad", 500, ["install strategy failed: PATCH x"]),
    ],
    ids=["invalid", "unexpected text", "server error"],
)
def test_refusal_message(index: int, error: str, status: int, fragments: list[str]) -> None:
    message = refusal_message(index, DEPLOYMENT, error, status)
    for fragment in fragments:
        assert fragment in message
    assert "\n" not in message


def test_the_first_refusal_fails_the_csv_with_an_event_and_a_retry() -> None:
    plan = install_failed(world(csv(phase="Installing", reason="InstallSucceeded")), "refused")
    assert moved(plan) == "Failed/InstallComponentFailed"
    assert plan.event == ("Warning", "InstallComponentFailed", "refused")
    assert plan.requeue_after == RETRY_FAILED_INSTALL_AFTER


def test_the_same_refusal_again_writes_nothing() -> None:
    failed = csv(phase="Failed", reason="InstallComponentFailed")
    failed["status"]["message"] = "refused"
    plan = install_failed(world(failed), "refused")
    assert plan.status is None and plan.event is None
    assert plan.requeue_after == RETRY_FAILED_INSTALL_AFTER


def test_a_forbidden_install_is_retried_once_the_rights_may_be_there() -> None:
    """OLM's InstallComponentFailedNoRetry, but tried again after the usual pause: a scoped
    OperatorGroup's service account given the rights later gets its CSV installed (OLM's e2e
    "insufficient permissions resolve via RBAC")."""
    plan = install_failed(world(csv(phase="InstallReady")), "forbidden", forbidden=True)
    assert moved(plan) == "Failed/InstallComponentFailedNoRetry"
    assert plan.requeue_after == RETRY_FAILED_INSTALL_AFTER
    failed = csv(phase="Failed", reason="InstallComponentFailedNoRetry")
    too_soon = decide(world(failed, now=NOW + datetime.timedelta(seconds=10 - 60)))
    assert not too_soon.apply and too_soon.requeue_after
    later = decide(world(failed, now=NOW + datetime.timedelta(seconds=31 - 60)))
    assert [d["metadata"]["name"] for d in later.apply] == ["op"]


@pytest.mark.parametrize(("seconds", "retries"), [(10, False), (31, True), (3600, True)])
def test_a_failed_install_is_retried_straight_from_failed(seconds: int, retries: bool) -> None:
    failed = csv(phase="Failed", reason="InstallComponentFailed")
    plan = decide(world(failed, now=NOW + datetime.timedelta(seconds=seconds - 60)))
    if retries:
        assert [d["metadata"]["name"] for d in plan.apply] == ["op"]
        assert moved(plan) == "Installing/InstallSucceeded"
    else:
        assert plan.status is None and not plan.apply and plan.requeue_after


@pytest.mark.parametrize(
    ("old_phase", "wakes"),
    [("Succeeded", True), ("Failed", False), ("Pending", False), ("Installing", False)],
)
def test_waiting_for_the_replaced_csv_does_not_poll(old_phase: str, wakes: bool) -> None:
    old = csv("op.v1", phase=old_phase, reason="InstallSucceeded")
    new = csv("op.v2", phase="Pending", reason="RequirementsUnknown", replaces="op.v1")
    plan = decide(world(new, others=[old]))
    assert plan.requeue_after is None
    assert plan.wake == (["op.v1"] if wakes else [])
