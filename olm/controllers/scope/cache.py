"""What the scope controllers keep of watched objects and read of them: copies as metadata only,
no `managedFields`, whether a namespace is terminating.

Invariant: pure (no gateway, no store): the watch (olm.controllers.watch.trim) and the wake
rules (olm.controllers.wake.scope) use these too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.controllers.store import StoreKind
from olm.scope.decide import copy_metadata


def terminating(namespace: Mapping[str, Any] | None) -> bool:
    return bool(
        namespace
        and (
            body.meta(namespace).get("deletionTimestamp")
            or (namespace.get("status") or {}).get("phase") == "Terminating"
        )
    )


def trim(kind: StoreKind, obj: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a watched object: copies as metadata only; every other object
    without `metadata.managedFields` (nothing reads it, and it is often a third of an object:
    a thousand namespaces and their default ServiceAccounts cost megabytes less)."""
    if kind == StoreKind.COPIED_CSV:
        return copy_metadata(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj
