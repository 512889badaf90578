"""Wake rules of the Operator and adoption controllers (olm.controllers.operator).

| work key | woken by |
| --- | --- |
| ("operator", "", name) | the Operator; any change of a component that carries (or carried) an `operators.coreos.com/*` key |
| ("adoption", "", ns) | a Subscription, CSV or InstallPlan there; a new or relabelled object owned by one of its CSVs; a CRD one of them owns |

Invariants:
- Pure: a rule reads the event's objects and the store (read-only) and returns work keys.
- A spec or status change of a component wakes no adoption: only labels and owners matter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.api.body import labels, meta, name, namespace
from olm.api.labels import Label
from olm.api.operator import COMPONENT_KINDS
from olm.controllers.queue import WorkKey, WorkKind
from olm.controllers.store import STORE_KIND_OF, StoreKind, StoreReader
from olm.operator.names import operator_names
from olm.operator.objects import CSV_KIND, owned_crd_names

# The store kinds of the component kinds (each change may move an Operator's components).
COMPONENT_STORE_KINDS = frozenset(STORE_KIND_OF[c.kind] for c in COMPONENT_KINDS)
# The kinds a Subscription's namespace is adopted for when they change.
NAMESPACE_KINDS = frozenset({StoreKind.SUBSCRIPTION, StoreKind.CSV, StoreKind.INSTALL_PLAN})


def _owner_namespaces(kind: StoreKind, obj: Mapping[str, Any], store: StoreReader) -> set[str]:
    """The namespaces whose CSVs may own `obj` (ownerReferences, owner labels, owned CRDs)."""
    found = set()
    if any(ref.get("kind") == CSV_KIND for ref in meta(obj).get("ownerReferences") or []):
        found.add(namespace(obj))
    own = labels(obj)
    if own.get(Label.OWNER_KIND.value) == CSV_KIND and own.get(Label.OWNER_NAMESPACE.value):
        found.add(str(own[Label.OWNER_NAMESPACE.value]))
    if kind == StoreKind.CRD:
        found |= {
            namespace(csv)
            for csv in store.items(StoreKind.CSV)
            if name(obj) in owned_crd_names(csv)
        }
    return found


def operator_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """The work a change of `obj` (of store kind `kind`; `old` as cached before, None when new)
    makes for these controllers."""
    if kind == StoreKind.OPERATOR:
        return [(WorkKind.OPERATOR, "", name(obj))]
    if kind not in COMPONENT_STORE_KINDS:
        return []
    names = set(operator_names(labels(obj))) | set(operator_names(labels(old or {})))
    keys: list[WorkKey] = [(WorkKind.OPERATOR, "", n) for n in sorted(names)]
    if deleted:
        return keys
    if kind in NAMESPACE_KINDS:
        return [*keys, (WorkKind.ADOPTION, "", namespace(obj))]
    if (
        old is not None
        and labels(old) == labels(obj)
        and meta(old).get("ownerReferences") == meta(obj).get("ownerReferences")
    ):
        return keys  # a spec or status change: ownership and labels are as they were
    return keys + [
        (WorkKind.ADOPTION, "", ns) for ns in sorted(_owner_namespaces(kind, obj, store)) if ns
    ]


def resync_operator_keys(store: StoreReader) -> list[WorkKey]:
    """A full resync: every Operator, every name a component's label gives (an Operator
    deleted while olm-py was down comes back), every namespace with Subscriptions or CSVs."""
    names = {n for _, n in store.keys(StoreKind.OPERATOR)}
    for kind in COMPONENT_KINDS:
        for obj in store.items(STORE_KIND_OF[kind.kind]):
            names.update(operator_names(labels(obj)))
    spaces = {ns for ns, _ in store.keys(StoreKind.SUBSCRIPTION)} | {
        ns for ns, _ in store.keys(StoreKind.CSV)
    }
    keys: list[WorkKey] = [(WorkKind.OPERATOR, "", n) for n in sorted(names)]
    return keys + [(WorkKind.ADOPTION, "", ns) for ns in sorted(spaces)]
