"""What OLM's adoption and Operator controllers can see of an object, and whom it belongs to.

- `visible`: OLM's manager cache (`cmd/olm/manager.go`) keeps most component kinds only when
  labelled `olm.managed=true`, and CSVs only when they are not copies; an object it does not
  keep is never adopted nor listed, whatever its labels.
- `owned_by`: OLM's `ownerutil.IsOwnedBy` (an ownerReference with the CSV's uid) or
  `IsOwnedByLabel` (`olm.owner`, `olm.owner.namespace` and `olm.owner.kind:
  ClusterServiceVersion` naming it; the only way across namespaces and to cluster scope).

Invariant: pure; objects are plain dicts and are never changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api.body import labels, meta, name, namespace
from olm.api.kinds import Kind
from olm.api.labels import MANAGED_VALUE, Label
from olm.api.operator import CacheFilter, ComponentKind

CSV_KIND = Kind.CLUSTER_SERVICE_VERSION.value


def visible(kind: ComponentKind, obj: Mapping[str, Any]) -> bool:
    """Whether OLM's cache of `kind` holds `obj`."""
    if kind.cache is CacheFilter.MANAGED:
        return labels(obj).get(Label.MANAGED.value) == MANAGED_VALUE
    if kind.cache is CacheFilter.NOT_COPIED:
        return Label.COPIED_FROM.value not in labels(obj)
    return True


def owned_by(obj: Mapping[str, Any], csv: Mapping[str, Any]) -> bool:
    """Whether `obj` belongs to `csv` as OLM's adoption controller judges it."""
    uid = meta(csv).get("uid")
    if uid and any(ref.get("uid") == uid for ref in meta(obj).get("ownerReferences") or []):
        return True
    own = labels(obj)
    return (
        own.get(Label.OWNER_KIND.value) == CSV_KIND
        and own.get(Label.OWNER.value) == name(csv)
        and own.get(Label.OWNER_NAMESPACE.value) == namespace(csv)
    )


def may_belong_to_namespace(obj: Mapping[str, Any], csv_namespace: str) -> bool:
    """A cheap first cut: could `obj` be owned by some CSV of `csv_namespace` (an
    ownerReference to a CSV there, or owner labels naming that namespace)?"""
    if namespace(obj) == csv_namespace and any(
        ref.get("kind") == CSV_KIND for ref in meta(obj).get("ownerReferences") or []
    ):
        return True
    own = labels(obj)
    return (
        own.get(Label.OWNER_KIND.value) == CSV_KIND
        and own.get(Label.OWNER_NAMESPACE.value) == csv_namespace
    )


def owned_crd_names(csv: Mapping[str, Any]) -> list[str]:
    """The CRDs a CSV owns (`spec.customresourcedefinitions.owned[].name`)."""
    definitions = (csv.get("spec") or {}).get("customresourcedefinitions") or {}
    return [
        str(entry.get("name"))
        for entry in definitions.get("owned") or []
        if isinstance(entry, Mapping) and entry.get("name")
    ]
