"""A Subscription's deprecation conditions (OLM v0 §5.5), from its catalog's `olm.deprecations`.

OLM v0.38's catalog health reconciler (`updateDeprecatedStatus` in
`pkg/controller/operators/catalog/subscription/reconciler.go`) looks up the installed CSV among the Subscription's own catalog's
entries of its package (in `spec.channel` when one is named) and, from what the catalog says
about that entry (`pkg/controller/registry/resolver/source_registry.go`), writes:
- `PackageDeprecated`, `ChannelDeprecated`, `BundleDeprecated`: status True, no reason, the
  message `olm.package/<package>: <message>`, `olm.channel/<channel>: <message>` or
  `olm.bundle/<csv>: <message>`. `ChannelDeprecated` is never set (and is removed) when
  `spec.channel` is empty.
- `Deprecated`: the roll-up, True while any of the three is, its message theirs joined by "; "
  (package, channel, bundle); removed with the last of them.

Invariants:
- Pure: the catalog and the conditions given are never modified.
- Nothing changes while the installed CSV is not an entry of that catalog (no CSV installed
  yet, a catalog not loaded, a bundle gone from it): OLM then leaves the conditions as they are.
- A level that is no longer deprecated loses its condition; the others keep theirs.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api.conditions import SUBSCRIPTION_CONDITION, Condition, find_condition, remove_conditions
from olm.api.conditions import set_condition as conditions_set
from olm.api.installplan import ConditionStatus
from olm.api.subscription import SubscriptionConditionType
from olm.catalog.documents import BUNDLE_SCHEMA, CHANNEL_SCHEMA, PACKAGE_SCHEMA, deprecation
from olm.catalog.model import Catalog

Types = SubscriptionConditionType
ROLLUP_SEPARATOR = "; "


@dataclass(frozen=True)
class Deprecations:
    """The condition messages for an installed bundle: None where that level is not
    deprecated."""

    package: str | None = None
    channel: str | None = None
    bundle: str | None = None


def _message(said: dict[str, str] | None, schema: str, name: str) -> str | None:
    return None if said is None else f"{schema}/{name}: {said['message']}"


def installed_deprecations(
    catalog: Catalog, package_name: str, channel_name: str, installed: str
) -> Deprecations | None:
    """What `catalog` says is deprecated about the installed CSV `installed` of `package_name`,
    as an entry of `channel_name` (any channel when empty: the first that has it); None when
    it is no such entry."""
    package = catalog.packages.get(package_name)
    if package is None or not installed:
        return None
    channels = [package.channels.get(channel_name)] if channel_name else package.channels.values()
    channel = next((c for c in channels if c is not None and c.entry(installed)), None)
    if channel is None:
        return None
    return Deprecations(
        package=_message(deprecation(package, PACKAGE_SCHEMA), PACKAGE_SCHEMA, package.name),
        channel=_message(
            deprecation(package, CHANNEL_SCHEMA, channel.name), CHANNEL_SCHEMA, channel.name
        ),
        bundle=_message(deprecation(package, BUNDLE_SCHEMA, installed), BUNDLE_SCHEMA, installed),
    )


def _set(
    conditions: list[Condition], kind: Types, message: str, now: datetime.datetime
) -> list[Condition]:
    return conditions_set(
        conditions,
        kind,
        ConditionStatus.TRUE,
        "",  # OLM writes these conditions without a reason
        message,
        now,
        style=SUBSCRIPTION_CONDITION,
    )


def deprecation_conditions(
    conditions: Sequence[Condition],
    found: Deprecations | None,
    spec_channel: str,
    now: datetime.datetime,
) -> list[Condition]:
    """The conditions with the deprecation family brought up to `found` (see the module
    docstring); as they are when `found` is None."""
    result = list(conditions)
    if found is None:
        return result
    levels = (
        (Types.PACKAGE_DEPRECATED, found.package),
        (Types.CHANNEL_DEPRECATED, found.channel if spec_channel else None),
        (Types.BUNDLE_DEPRECATED, found.bundle),
    )
    messages = []
    for kind, message in levels:
        if message is None:
            result = remove_conditions(result, kind)
            continue
        messages.append(message)
        old: Mapping[str, Any] | None = find_condition(result, kind)
        if old is None or old.get("message") != message:
            result = _set(result, kind, message, now)
    if messages:
        return _set(result, Types.DEPRECATED, ROLLUP_SEPARATOR.join(messages), now)
    return remove_conditions(result, Types.DEPRECATED)
