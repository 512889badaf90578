"""InstallPlan conditions as OLM writes an InstallPlanCondition: replaced whole, reason and
message left out when not given, lastUpdateTime stamped on every set, lastTransitionTime kept
while the status holds; and the Failed status built on them."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.api.installplan import ConditionStatus, InstallPlanReason
from olm.api.installplan import InstallPlanConditionType as T
from olm.installplan.status import failed_status, set_condition

NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=datetime.UTC)
STAMP = "2026-01-02T03:04:05Z"
EARLIER = "2025-01-01T00:00:00Z"
RESOLVED = {
    "type": "Resolved",
    "status": "True",
    "lastUpdateTime": EARLIER,
    "lastTransitionTime": EARLIER,
}
INSTALLED = {
    "type": "Installed",
    "status": "False",
    "reason": "InstallCheckFailed",
    "message": "no",
    "lastUpdateTime": EARLIER,
    "lastTransitionTime": EARLIER,
    "extra": "dropped",
}


@pytest.mark.parametrize(
    ("status", "reason", "message", "expected"),
    [
        # a reason and message given: written; the same status keeps lastTransitionTime only
        (
            ConditionStatus.FALSE,
            InstallPlanReason.INSTALL_COMPONENT_FAILED,
            "again",
            {
                "type": "Installed",
                "status": "False",
                "reason": "InstallComponentFailed",
                "message": "again",
                "lastUpdateTime": STAMP,
                "lastTransitionTime": EARLIER,
            },
        ),
        # no reason, no message: left out; the status flips, so lastTransitionTime moves
        (
            ConditionStatus.TRUE,
            None,
            "",
            {
                "type": "Installed",
                "status": "True",
                "lastUpdateTime": STAMP,
                "lastTransitionTime": STAMP,
            },
        ),
    ],
)
def test_set_condition_replaces_the_entry_whole_in_place(
    status: ConditionStatus,
    reason: InstallPlanReason | None,
    message: str,
    expected: dict[str, Any],
) -> None:
    before = [dict(INSTALLED), dict(RESOLVED)]
    after = set_condition(before, T.INSTALLED, status, NOW, reason, message)
    assert after == [expected, RESOLVED]
    assert list(after[0]) == list(expected), "fields in OLM's order"
    assert before == [INSTALLED, RESOLVED], "inputs are not modified"


def test_set_condition_appends_a_new_type_and_stamps_every_set() -> None:
    same = set_condition([RESOLVED], T.RESOLVED, ConditionStatus.TRUE, NOW)
    assert same == [{**RESOLVED, "lastUpdateTime": STAMP}], "written again, not kept as is"
    added = set_condition([RESOLVED], T.INSTALLED, ConditionStatus.TRUE, NOW)
    assert added == [
        RESOLVED,
        {
            "type": "Installed",
            "status": "True",
            "lastUpdateTime": STAMP,
            "lastTransitionTime": STAMP,
        },
    ]


def test_set_condition_stamps_a_transition_the_entry_lacks() -> None:
    bare = {"type": "Installed", "status": "False", "lastTransitionTime": ""}
    (entry,) = set_condition([bare], T.INSTALLED, ConditionStatus.FALSE, NOW)
    assert entry["lastTransitionTime"] == STAMP


def test_failed_status() -> None:
    status = {"phase": "Installing", "conditions": [RESOLVED]}
    assert failed_status(status, "boom", InstallPlanReason.INSTALL_COMPONENT_FAILED, NOW) == {
        "phase": "Failed",
        "message": "boom",
        "catalogSources": [],
        "conditions": [
            RESOLVED,
            {
                "type": "Installed",
                "status": "False",
                "reason": "InstallComponentFailed",
                "message": "boom",
                "lastUpdateTime": STAMP,
                "lastTransitionTime": STAMP,
            },
        ],
    }
    assert status == {"phase": "Installing", "conditions": [RESOLVED]}
