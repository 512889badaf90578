"""The one condition writer, in each API type's style, and the times conditions carry."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pytest

from olm.api.conditions import (
    INSTALLPLAN_CONDITION,
    METAV1_CONDITION,
    SUBSCRIPTION_CONDITION,
    ConditionStyle,
    find_condition,
    parse_time,
    parse_timestamp,
    remove_conditions,
    set_condition,
    timestamp,
    utc_now,
)
from olm.api.installplan import ConditionStatus, InstallPlanConditionType, InstallPlanReason

NOW = datetime.datetime(2026, 5, 6, 7, 8, 9, 654321, tzinfo=datetime.UTC)
STAMP = "2026-05-06T07:08:09Z"
EARLIER = "2026-01-01T00:00:00Z"
OTHER = {"type": "Other", "status": "True"}
STYLES = [METAV1_CONDITION, SUBSCRIPTION_CONDITION, INSTALLPLAN_CONDITION]

# ----- times -----------------------------------------------------------------------------------


def test_timestamp_is_rfc3339_seconds_utc() -> None:
    assert timestamp(NOW) == STAMP
    plus_two = datetime.timezone(datetime.timedelta(hours=2))
    assert timestamp(NOW.astimezone(plus_two)) == STAMP


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (STAMP, NOW.replace(microsecond=0)),
        (None, None),
        ("", None),
        ("2026-05-06T07:08:09.5Z", None),  # metav1.Time has no fraction
        ("2026-05-06T07:08:09+02:00", None),
        ("yesterday", None),
    ],
)
def test_parse_timestamp(text: str | None, expected: datetime.datetime | None) -> None:
    assert parse_timestamp(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (STAMP, NOW.replace(microsecond=0)),
        ("2026-05-06T07:08:09.654321Z", NOW),  # a MicroTime
        ("2026-05-06T09:08:09.654321+02:00", NOW),
        ("2026-05-06T07:08:09", NOW.replace(microsecond=0, tzinfo=None)),  # no offset: naive
        ("", None),
        ("<unknown>", None),
    ],
)
def test_parse_time_reads_any_rfc3339(text: str, expected: datetime.datetime | None) -> None:
    assert parse_time(text) == expected


def test_parse_is_the_inverse_of_timestamp_and_now_is_utc() -> None:
    moment = utc_now()
    assert moment.tzinfo is datetime.UTC
    parsed = parse_timestamp(timestamp(moment))
    assert parsed is not None and timestamp(parsed) == timestamp(moment)


# ----- find and remove -------------------------------------------------------------------------


def test_find_and_remove_by_type_or_enum() -> None:
    installed = {"type": "Installed", "status": "False"}
    conditions = [OTHER, installed]
    assert find_condition(conditions, InstallPlanConditionType.INSTALLED) is installed
    assert find_condition(conditions, "Missing") is None
    assert remove_conditions(conditions, InstallPlanConditionType.INSTALLED, "Nope") == [OTHER]
    assert remove_conditions(conditions) == conditions


# ----- set_condition: what every style shares --------------------------------------------------


@pytest.mark.parametrize("style", STYLES)
def test_new_entry_is_appended_stamped_now(style: ConditionStyle) -> None:
    result = set_condition([OTHER], "A", "True", "R", "m", NOW, style)
    assert result[0] is OTHER and result[1]["type"] == "A" and len(result) == 2
    assert result[1]["lastTransitionTime"] == STAMP


@pytest.mark.parametrize("style", STYLES)
def test_transition_time_moves_only_with_status(style: ConditionStyle) -> None:
    before = [{"type": "A", "status": "True", "reason": "R", "lastTransitionTime": EARLIER}, OTHER]
    kept = copy.deepcopy(before)
    reworded = set_condition(before, "A", "True", "R2", "m2", NOW, style)
    flipped = set_condition(before, "A", "False", "R", "", NOW, style)
    assert reworded[0]["lastTransitionTime"] == EARLIER and reworded[1] is OTHER
    assert (reworded[0]["reason"], reworded[0]["message"]) == ("R2", "m2")
    assert flipped[0]["lastTransitionTime"] == STAMP and flipped[0]["status"] == "False"
    assert before == kept, "the input is not modified"


@pytest.mark.parametrize("style", STYLES)
def test_an_entry_without_transition_time_gets_one(style: ConditionStyle) -> None:
    before = [{"type": "A", "status": "True", "reason": "R", "message": "m"}]
    expected = before if style.keep_when_same else [{**before[0], "lastTransitionTime": STAMP}]
    result = set_condition(before, "A", "True", "R", "m", NOW, style)
    assert [{k: v for k, v in c.items() if k != "lastUpdateTime"} for c in result] == expected


@pytest.mark.parametrize("style", STYLES)
def test_enums_are_written_as_plain_strings(style: ConditionStyle) -> None:
    (entry,) = set_condition(
        [],
        InstallPlanConditionType.INSTALLED,
        ConditionStatus.FALSE,
        InstallPlanReason.INSTALL_COMPONENT_FAILED,
        "boom",
        NOW,
        style,
    )
    assert [type(entry[k]) for k in ("type", "status", "reason")] == [str, str, str]
    assert (entry["type"], entry["status"], entry["reason"]) == (
        "Installed",
        "False",
        "InstallComponentFailed",
    )


# ----- set_condition: each style ---------------------------------------------------------------

EXISTING: dict[str, Any] = {
    "type": "A",
    "status": "True",
    "reason": "R",
    "message": "m",
    "observedGeneration": 3,
    "lastHeartbeatTime": EARLIER,
    "lastTransitionTime": EARLIER,
}


@pytest.mark.parametrize(
    ("style", "reason", "message", "expected"),
    [
        # metav1.Condition: reason and message always there; other fields of the entry kept.
        (
            METAV1_CONDITION,
            "",
            "",
            {**EXISTING, "reason": "", "message": ""},
        ),
        (
            METAV1_CONDITION,
            "R",
            "m",
            EXISTING,
        ),
        # A Subscription's: empty reason and message left out, the entry replaced whole...
        (
            SUBSCRIPTION_CONDITION,
            "",
            "",
            {"type": "A", "status": "True", "lastTransitionTime": EARLIER},
        ),
        # ... unless it already says the same: then the list is returned as it is.
        (SUBSCRIPTION_CONDITION, "R", "m", EXISTING),
        # An InstallPlan's: like a Subscription's, with lastUpdateTime stamped on every set.
        (
            INSTALLPLAN_CONDITION,
            "",
            "",
            {"type": "A", "status": "True", "lastUpdateTime": STAMP, "lastTransitionTime": EARLIER},
        ),
        (
            INSTALLPLAN_CONDITION,
            "R",
            "m",
            {
                "type": "A",
                "status": "True",
                "reason": "R",
                "message": "m",
                "lastUpdateTime": STAMP,
                "lastTransitionTime": EARLIER,
            },
        ),
    ],
)
def test_styles(style: ConditionStyle, reason: str, message: str, expected: dict[str, Any]) -> None:
    assert set_condition([EXISTING], "A", "True", reason, message, NOW, style) == [expected]


def test_default_style_is_metav1() -> None:
    assert set_condition([], "A", "True", "", "", NOW) == [
        {"type": "A", "status": "True", "reason": "", "message": "", "lastTransitionTime": STAMP}
    ]
