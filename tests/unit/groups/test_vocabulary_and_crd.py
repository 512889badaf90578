"""OperatorGroup vocabulary against OLM's lists, the condition helpers, and the CRD schema of
spec.upgradeStrategy (OLM v0.38's string form)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from olm.api.conditions import remove_conditions, set_condition
from olm.api.operatorgroup import (
    OLM_PY_CONDITION_TYPES,
    OLM_PY_REASONS,
    ConditionStatus,
    OperatorGroupConditionType,
    OperatorGroupReason,
    UpgradeStrategy,
    upgrade_strategy,
)

CRD = Path(__file__).resolve().parents[3] / "manifests" / "crds" / "operatorgroups.yaml"
NOW = datetime.datetime(2026, 5, 6, 7, 8, 9, tzinfo=datetime.UTC)

# operator-framework/api v1/operatorgroup_types.go (olm-behaviour.md §1.5).
OLM_CONDITION_TYPES = {"MultipleOperatorGroup", "OperatorGroupServiceAccount"}
OLM_REASONS = {"MultipleOperatorGroupsFound", "ServiceAccountNotFound"}
OLM_UPGRADE_STRATEGIES = {"Default", "TechPreviewUnsafeFailForward"}


def test_condition_types_are_olms_plus_documented_additions() -> None:
    values = {t.value for t in OperatorGroupConditionType}
    assert values - {t.value for t in OLM_PY_CONDITION_TYPES} == OLM_CONDITION_TYPES
    differences = (Path(__file__).resolve().parents[3] / "docs" / "differences.md").read_text()
    for extra in OLM_PY_CONDITION_TYPES:
        assert extra.value in differences, f"{extra} must be explained in docs/differences.md"


def test_reasons_are_olms_plus_documented_additions() -> None:
    values = {r.value for r in OperatorGroupReason}
    assert values - {r.value for r in OLM_PY_REASONS} == OLM_REASONS


def test_upgrade_strategies_are_olms() -> None:
    assert {s.value for s in UpgradeStrategy} == OLM_UPGRADE_STRATEGIES


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({}, UpgradeStrategy.DEFAULT),
        ({"upgradeStrategy": "Default"}, UpgradeStrategy.DEFAULT),
        ({"upgradeStrategy": "TechPreviewUnsafeFailForward"}, UpgradeStrategy.UNSAFE_FAIL_FORWARD),
        ({"upgradeStrategy": "foo"}, UpgradeStrategy.DEFAULT),
        (
            {"upgradeStrategy": {"name": "TechPreviewUnsafeFailForward"}},
            UpgradeStrategy.UNSAFE_FAIL_FORWARD,
        ),
        ({"upgradeStrategy": {"name": "Default"}}, UpgradeStrategy.DEFAULT),
    ],
)
def test_upgrade_strategy_view(spec: dict[str, Any], expected: UpgradeStrategy) -> None:
    assert upgrade_strategy({"spec": spec}) == expected


# ----- conditions ------------------------------------------------------------------------------


def test_set_condition_keeps_transition_time_while_status_holds() -> None:
    first = set_condition([], "A", ConditionStatus.TRUE, "R", "m", NOW)
    assert first == [
        {
            "type": "A",
            "status": "True",
            "reason": "R",
            "message": "m",
            "lastTransitionTime": "2026-05-06T07:08:09Z",
        }
    ]
    later = NOW + datetime.timedelta(hours=1)
    reworded = set_condition(first, "A", ConditionStatus.TRUE, "R2", "m2", later)
    assert reworded[0]["lastTransitionTime"] == "2026-05-06T07:08:09Z"
    assert (reworded[0]["reason"], reworded[0]["message"]) == ("R2", "m2")
    flipped = set_condition(first, "A", ConditionStatus.FALSE, "R", "m", later)
    assert flipped[0]["lastTransitionTime"] == "2026-05-06T08:08:09Z"


def test_set_condition_keeps_place_and_extra_fields() -> None:
    existing = [
        {"type": "X", "status": "True"},
        {"type": "A", "status": "True", "observedGeneration": 3, "lastTransitionTime": "t"},
    ]
    updated = set_condition(existing, "A", ConditionStatus.TRUE, "R", "m", NOW)
    assert [c["type"] for c in updated] == ["X", "A"]
    assert updated[1]["observedGeneration"] == 3 and updated[1]["lastTransitionTime"] == "t"
    assert existing[1].get("reason") is None, "the input is not modified"
    assert remove_conditions(updated, "A") == [{"type": "X", "status": "True"}]


# ----- the CRD schema --------------------------------------------------------------------------


def _schema(version: str) -> dict[str, Any]:
    crd = yaml.safe_load(CRD.read_text())
    found = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    schema: dict[str, Any] = found["schema"]["openAPIV3Schema"]
    return schema


def _valid(version: str, spec: dict[str, Any]) -> bool:
    obj = {
        "apiVersion": f"operators.coreos.com/{version}",
        "kind": "OperatorGroup",
        "metadata": {"name": "og", "namespace": "ns"},
        "spec": spec,
    }
    return jsonschema.Draft4Validator(_schema(version)).is_valid(obj)


@pytest.mark.parametrize(
    ("spec", "accepted"),
    [
        ({"upgradeStrategy": "TechPreviewUnsafeFailForward"}, True),
        ({"upgradeStrategy": "Default"}, True),
        ({}, True),
        ({"upgradeStrategy": "Sometimes"}, False),
        ({"upgradeStrategy": {"name": "Default"}}, False),  # as OLM v0.38's CRD
    ],
)
def test_v1_schema_takes_the_string_form(spec: dict[str, Any], accepted: bool) -> None:
    assert _valid("v1", spec) is accepted


def test_v1_schema_defaults_the_strategy_as_olm() -> None:
    spec = _schema("v1")["properties"]["spec"]
    assert spec["default"] == {"upgradeStrategy": "Default"}
    field = spec["properties"]["upgradeStrategy"]
    assert field["type"] == "string"
    assert field["default"] == "Default"
    assert set(field["enum"]) == OLM_UPGRADE_STRATEGIES


def test_v1alpha2_has_no_upgrade_strategy() -> None:
    assert "upgradeStrategy" not in _schema("v1alpha2")["properties"]["spec"]["properties"]
