"""OLMConfig `spec.features.disableCopiedCSVs` and its `DisabledCopiedCSVs` condition (OLM v0
`operator.go` syncOLMConfig / getCopiedCSVEvaluatorFunc / getCopiedCSVsCondition).

Invariants:
- A missing `cluster` OLMConfig, or one without `disableCopiedCSVs: true`, means copies are on.
- Enabled: every CSV of an all-namespaces group should have a copy in every Active namespace
  but its own. Disabled: exactly in the protected namespaces. CSVs off target are woken.
- The condition is written only when its type, status, reason or message change;
  lastTransitionTime moves only with its status.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api.conditions import find_condition, set_condition
from olm.api.operatorgroup import ConditionStatus
from olm.api.scope import OlmConfigConditionType, OlmConfigMessage, OlmConfigReason


def copied_csvs_enabled(olm_config: Mapping[str, Any] | None) -> bool:
    """OLM's CopiedCSVsAreEnabled: on unless the `cluster` OLMConfig sets
    `spec.features.disableCopiedCSVs: true` (a missing OLMConfig means on)."""
    features = ((olm_config or {}).get("spec") or {}).get("features") or {}
    return features.get("disableCopiedCSVs") is not True


@dataclass(frozen=True)
class OlmConfigSnapshot:
    enabled: bool
    active_namespaces: int  # namespaces in phase Active
    protected_namespaces: frozenset[str]
    # Each non-copied CSV in the namespace of an all-namespaces OperatorGroup, as
    # (namespace, name), with the namespaces holding its copies.
    global_csvs: Mapping[tuple[str, str], frozenset[str]]
    now: datetime.datetime


@dataclass
class OlmConfigPlan:
    status: dict[str, Any] | None = None  # the new status.conditions holder, None if unchanged
    wake_csvs: list[tuple[str, str]] = field(default_factory=list)


def _copies_as_expected(snapshot: OlmConfigSnapshot, copy_namespaces: frozenset[str]) -> bool:
    if snapshot.enabled:
        return len(copy_namespaces) == snapshot.active_namespaces - 1
    return copy_namespaces == snapshot.protected_namespaces


def olm_config_condition(enabled: bool, off_target: bool) -> tuple[ConditionStatus, str, str]:
    """(status, reason, message) of `DisabledCopiedCSVs`, as OLM's getCopiedCSVsCondition."""
    if enabled:
        message = (
            OlmConfigMessage.ENABLED_MISSING if off_target else OlmConfigMessage.ENABLED_PRESENT
        )
        return ConditionStatus.FALSE, OlmConfigReason.COPIED_CSVS_ENABLED.value, message.value
    if off_target:
        return (
            ConditionStatus.FALSE,
            OlmConfigReason.COPIED_CSVS_DISABLED.value,
            OlmConfigMessage.DISABLED_UNEXPECTED.value,
        )
    return (
        ConditionStatus.TRUE,
        OlmConfigReason.COPIED_CSVS_DISABLED.value,
        OlmConfigMessage.DISABLED_CLEAN.value,
    )


def plan_olm_config(olm_config: Mapping[str, Any], snapshot: OlmConfigSnapshot) -> OlmConfigPlan:
    """Wake every global CSV whose copies are not as the toggle wants them, and keep the
    condition in step (written only when type, status, reason or message change)."""
    wake = sorted(
        key
        for key, namespaces in snapshot.global_csvs.items()
        if not _copies_as_expected(snapshot, namespaces)
    )
    status, reason, message = olm_config_condition(snapshot.enabled, bool(wake))
    existing = list((olm_config.get("status") or {}).get("conditions") or [])
    kind = OlmConfigConditionType.DISABLED_COPIED_CSVS.value
    current = find_condition(existing, kind)
    plan = OlmConfigPlan(wake_csvs=wake)
    if current is None or (
        current.get("status"),
        current.get("reason"),
        current.get("message"),
    ) != (
        status.value,
        reason,
        message,
    ):
        conditions = set_condition(existing, kind, status, reason, message, snapshot.now)
        plan.status = {"conditions": conditions}
    return plan
