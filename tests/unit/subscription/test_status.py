"""Subscription status pieces: conditions kept in place, catalog health timestamps, and the
status diff that decides whether anything is written."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.api.conditions import remove_conditions
from olm.api.installplan import ConditionStatus
from olm.api.subscription import SubscriptionConditionType as T
from olm.subscription.snapshot import CatalogInScope, LoadedCatalog
from olm.subscription.status import (
    catalog_health,
    set_condition,
    status_patch,
)
from tests.unit.subscription.world import EARLIER, NOW, STAMP, samples

A = {
    "type": "InstallPlanPending",
    "status": "True",
    "reason": "Installing",
    "lastTransitionTime": EARLIER,
}
B = {
    "type": "CatalogSourcesUnhealthy",
    "status": "False",
    "reason": "AllCatalogSourcesHealthy",
    "message": "ok",
    "lastTransitionTime": EARLIER,
}


@pytest.mark.parametrize(
    ("kind", "status", "reason", "message", "expected"),
    [
        # unchanged: the very same list
        (T.INSTALL_PLAN_PENDING, ConditionStatus.TRUE, "Installing", "", [A, B]),
        # new reason, same status: replaced in place, lastTransitionTime kept
        (
            T.INSTALL_PLAN_PENDING,
            ConditionStatus.TRUE,
            "RequiresApproval",
            "",
            [{**A, "reason": "RequiresApproval"}, B],
        ),
        # status flips: lastTransitionTime moves
        (
            T.CATALOG_SOURCES_UNHEALTHY,
            ConditionStatus.TRUE,
            "UnhealthyCatalogSourceFound",
            "bad",
            [
                A,
                {
                    **B,
                    "status": "True",
                    "reason": "UnhealthyCatalogSourceFound",
                    "message": "bad",
                    "lastTransitionTime": STAMP,
                },
            ],
        ),
        # a new type is appended
        (
            T.RESOLUTION_FAILED,
            ConditionStatus.TRUE,
            "ConstraintsNotSatisfiable",
            "no",
            [
                A,
                B,
                {
                    "type": "ResolutionFailed",
                    "status": "True",
                    "reason": "ConstraintsNotSatisfiable",
                    "message": "no",
                    "lastTransitionTime": STAMP,
                },
            ],
        ),
    ],
)
def test_set_condition(
    kind: T, status: ConditionStatus, reason: str, message: str, expected: list[dict[str, Any]]
) -> None:
    before = [dict(A), dict(B)]
    assert set_condition(before, kind, status, reason, message, NOW) == expected
    assert before == [A, B], "inputs are not modified"


def test_remove_conditions_keeps_the_rest_in_order() -> None:
    assert remove_conditions([A, B], T.INSTALL_PLAN_PENDING, T.INSTALL_PLAN_FAILED) == [B]


@pytest.mark.parametrize(
    ("old", "new", "patch"),
    [
        ({"state": "AtLatestKnown"}, {"state": "AtLatestKnown"}, {}),
        ({"state": "AtLatestKnown", "lastUpdated": EARLIER}, {"state": "AtLatestKnown"}, {}),
        ({}, {"conditions": []}, {}),
        ({}, {"state": ""}, {}),
        ({"conditions": [A, B]}, {"conditions": [B, A]}, {}),
        ({"currentCSV": "x"}, {}, {"currentCSV": None}),
        ({"conditions": [A]}, {"conditions": []}, {"conditions": None}),
        ({}, {"currentCSV": "x"}, {"currentCSV": "x"}),
    ],
)
def test_status_patch(old: dict[str, Any], new: dict[str, Any], patch: dict[str, Any]) -> None:
    assert status_patch(old, new) == patch


def catalog(name: str, healthy: bool) -> CatalogInScope:
    return CatalogInScope(
        "olm", name, f"uid-{name}", LoadedCatalog(samples()) if healthy else None, not healthy
    )


def test_catalog_health_timestamps_move_only_with_health() -> None:
    first = catalog_health([catalog("a", True), catalog("b", True)], [], NOW)
    assert [e["lastUpdated"] for e in first] == [STAMP, STAMP]
    aged = [{**e, "lastUpdated": EARLIER} for e in first]
    later = NOW + datetime.timedelta(hours=1)
    again = catalog_health([catalog("a", True), catalog("b", False)], aged, later)
    assert again[0]["lastUpdated"] == EARLIER
    assert again[1]["lastUpdated"] != EARLIER and again[1]["healthy"] is False
