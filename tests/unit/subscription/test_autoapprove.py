"""olm-py's `olm-py.io/auto-approve` policies over plain data: which Manual plans olm-py
approves, and what it says."""

from __future__ import annotations

from typing import Any

import pytest

from olm.subscription.autoapprove import (
    Move,
    approve_new_plan,
    auto_approval,
    policy_of,
    step_size,
)


def sub(name: str = "memcached", policy: str | None = None, approval: str = "Manual") -> Any:
    meta: dict[str, Any] = {"name": name, "namespace": "team-a"}
    if policy is not None:
        meta["annotations"] = {"olm-py.io/auto-approve": policy}
    return {"metadata": meta, "spec": {"installPlanApproval": approval}}


def upgrade(subscription: Any, old: str, new: str) -> Move:
    return Move(subscription, f"op.v{new}", new, f"op.v{old}" if old else "", old)


@pytest.mark.parametrize(
    ("old", "new", "size"),
    [
        ("", "1.0.0", "first"),
        ("0.0.1", "0.0.2", "patch"),
        ("0.0.3", "0.1.0", "minor"),
        ("16.1.0", "17.0.0", "major"),
        ("1.2.3", "1.2.3", None),
        ("1.2.3", "1.2.0", None),
        ("1.0.0", "not-a-version", None),
        ("1.0.0", "1.0.1-rc.1", None),  # a prerelease: only `all`
    ],
)
def test_step_sizes(old: str, new: str, size: str | None) -> None:
    assert step_size(old, new, f"op.v{old}" if old else "") == size


def test_an_installed_csv_of_unknown_version_is_no_first_install() -> None:
    assert step_size("", "9.0.0", "op.v1.0.0") is None


@pytest.mark.parametrize(
    ("policy", "old", "new", "approved"),
    [
        ("first", "", "0.0.1", True),
        ("first", "0.0.1", "0.0.2", False),
        ("patch", "", "0.0.1", True),
        ("patch", "0.0.1", "0.0.2", True),
        ("patch", "0.0.3", "0.1.0", False),
        ("minor", "0.0.3", "0.1.0", True),
        ("minor", "16.1.0", "17.0.0", False),
        ("all", "16.1.0", "17.0.0", True),
        ("all", "1.2.3", "1.2.0", True),
        ("patch", "1.2.3", "1.2.0", False),
    ],
)
def test_a_policy_approves_steps_up_to_its_size(
    policy: str, old: str, new: str, approved: bool
) -> None:
    decision = auto_approval([upgrade(sub(policy=policy), old, new)], [])
    assert decision.approved is approved
    assert "memcached" in decision.summary


def test_without_a_policy_nothing_is_approved() -> None:
    assert not auto_approval([upgrade(sub(), "", "0.0.1")], []).approved


def test_automatic_subscriptions_in_the_plan_need_no_policy_but_one_manual_does() -> None:
    automatic = sub("other", approval="Automatic")
    both = [upgrade(sub(policy="patch"), "0.0.1", "0.0.2"), upgrade(automatic, "1.0.0", "2.0.0")]
    assert auto_approval(both, []).approved
    assert not auto_approval([upgrade(automatic, "1.0.0", "2.0.0")], []).approved  # not Manual
    unpoliced = [*both, upgrade(sub("third"), "", "1.0.0")]
    assert not auto_approval(unpoliced, []).approved


def test_dependencies_need_all() -> None:
    move = upgrade(sub(policy="minor"), "", "0.0.1")
    decision = auto_approval([move], ["dep.v1.0.0"])
    assert not decision.approved and "dependencies dep.v1.0.0 need a person" in decision.summary
    assert auto_approval([upgrade(sub(policy="all"), "", "0.0.1")], ["dep.v1.0.0"]).approved


def test_an_invalid_value_is_named_and_approves_nothing() -> None:
    bad = sub(policy="sometimes")
    assert policy_of(bad) == "sometimes"
    decision = auto_approval([upgrade(bad, "", "0.0.1")], [])
    assert not decision.approved and decision.invalid == ("memcached",)
    body = {"metadata": {"name": "install-abcde"}, "spec": {"approved": False}}
    events = approve_new_plan(body, [upgrade(bad, "", "0.0.1")], [])
    assert body["spec"]["approved"] is False
    [(kind, reason, message)] = events
    assert (kind, reason) == ("Warning", "InvalidAutoApprove")
    assert (
        "olm-py.io/auto-approve='sometimes' is not a policy (first, patch, minor, all)" in message
    )
    assert "kubectl annotate subscription memcached --overwrite" in message


def test_an_approved_plan_says_who_approved_what() -> None:
    body: dict[str, Any] = {"metadata": {"name": "install-abcde"}, "spec": {"approved": False}}
    events = approve_new_plan(body, [upgrade(sub(policy="patch"), "0.0.1", "0.0.2")], [])
    assert body["spec"]["approved"] is True
    said = body["metadata"]["annotations"]["olm-py.io/auto-approved"]
    assert said == "memcached (patch): op.v0.0.1 0.0.1 -> op.v0.0.2 0.0.2"
    assert events == [
        (
            "Normal",
            "InstallPlanAutoApproved",
            f"InstallPlan install-abcde approved by olm-py: {said}",
        )
    ]
