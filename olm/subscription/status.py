"""Subscription status pieces (OLM v0 §1.2, §5.5): conditions, catalog health, the diff.

Invariants:
- One condition per type; setting one keeps its place in the list and, while its status does
  not change, its lastTransitionTime (so re-deciding the same thing writes nothing).
- A catalogHealth entry's lastUpdated moves only when that catalog's health changes.
- `status_patch` ignores lastUpdated: a status is written only when something else changed,
  and lastUpdated is stamped then.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from olm.api.conditions import SUBSCRIPTION_CONDITION, Condition, ConditionStyle, timestamp
from olm.api.conditions import set_condition as conditions_set
from olm.api.installplan import ConditionStatus
from olm.api.subscription import SubscriptionReason
from olm.subscription.snapshot import CatalogInScope

Status = dict[str, Any]
LAST_UPDATED = "lastUpdated"
ALL_HEALTHY_MESSAGE = "all available catalogsources are healthy"
NO_CATALOGS_MESSAGE = "dependency resolution requires at least one catalogsource"


def set_condition(
    conditions: Sequence[Condition],
    kind: StrEnum,
    status: ConditionStatus,
    reason: str,
    message: str,
    now: datetime.datetime,
    style: ConditionStyle = SUBSCRIPTION_CONDITION,
) -> list[Condition]:
    """The list with `kind` set (OLM's SetCondition: replaced in place, else appended)."""
    return conditions_set(conditions, kind, status, reason, message, now, style=style)


def _value(value: Any) -> Any:
    """None for what the API omits when empty (omitempty), else the value."""
    return None if value in (None, "", [], {}) else value


def _same(key: str, old: Any, new: Any) -> bool:
    """Equal as the API means it: conditions are a set keyed by type (OLM hashes them so)."""
    old, new = _value(old), _value(new)
    if key == "conditions" and isinstance(old, list) and isinstance(new, list):
        return sorted(old, key=lambda c: str(c.get("type"))) == sorted(
            new, key=lambda c: str(c.get("type"))
        )
    return bool(old == new)


def status_patch(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The merge patch from `old` to `new` (None removes a key), lastUpdated aside; an empty
    value and an absent key are the same."""
    keys = (set(old) | set(new)) - {LAST_UPDATED}
    return {k: _value(new.get(k)) for k in sorted(keys) if not _same(k, old.get(k), new.get(k))}


# ----- catalog health --------------------------------------------------------------------------


def catalog_health(
    catalogs: Sequence[CatalogInScope],
    previous: Sequence[Mapping[str, Any]],
    now: datetime.datetime,
) -> list[dict[str, Any]]:
    """`status.catalogHealth`: every catalog in scope, sorted by namespace and name."""
    before = {
        (
            (e.get("catalogSourceRef") or {}).get("namespace"),
            (e.get("catalogSourceRef") or {}).get("name"),
        ): e
        for e in previous
    }
    entries = []
    for catalog in catalogs:
        old = before.get((catalog.namespace, catalog.name))
        reference = catalog.reference()
        entry = {
            "catalogSourceRef": reference,
            "healthy": catalog.healthy,
            "lastUpdated": timestamp(now),
        }
        if (
            old is not None
            and old.get("healthy") == catalog.healthy
            and old.get("catalogSourceRef") == reference
            and old.get("lastUpdated")
        ):
            entry["lastUpdated"] = old["lastUpdated"]
        entries.append(entry)
    return entries


def catalog_condition(
    catalogs: Sequence[CatalogInScope], source_namespace: str, source: str
) -> tuple[ConditionStatus, SubscriptionReason, str]:
    """CatalogSourcesUnhealthy (OLM's catalog health reconciler): the targeted catalog first,
    then any other. OLM's one-sync CatalogSourcesAdded/Updated/Deleted reasons are not
    written (they would cost a second write per change)."""
    if not catalogs:
        return (
            ConditionStatus.TRUE,
            SubscriptionReason.NO_CATALOG_SOURCES_FOUND,
            NO_CATALOGS_MESSAGE,
        )
    target = next(
        (c for c in catalogs if (c.namespace, c.name) == (source_namespace, source)), None
    )
    unhealthy = SubscriptionReason.UNHEALTHY_CATALOG_SOURCE_FOUND
    if target is None:
        return (
            ConditionStatus.TRUE,
            unhealthy,
            f"targeted catalogsource {source_namespace}/{source} missing",
        )
    if not target.healthy:
        # OLM's sentence, then (with --trusted-catalogs) why olm-py does not use it.
        why = f": {target.untrusted}" if target.untrusted else ""
        return (
            ConditionStatus.TRUE,
            unhealthy,
            f"targeted catalogsource {target.key} unhealthy{why}",
        )
    others = [c.key for c in catalogs if not c.healthy]
    if others:
        return ConditionStatus.TRUE, unhealthy, f"unhealthy catalog sources: {', '.join(others)}"
    return (
        ConditionStatus.FALSE,
        SubscriptionReason.ALL_CATALOG_SOURCES_HEALTHY,
        ALL_HEALTHY_MESSAGE,
    )
