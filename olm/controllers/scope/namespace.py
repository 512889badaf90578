"""The ("scope-namespace", "", namespace) controller: one namespace's `olm.operatorgroup.uid/*`
labels, and the copy and copied RBAC of every CSV whose group targets it.

Invariant: the work is O(OperatorGroups + CSVs that target the namespace), never
O(CSVs x namespaces): each CSV is decided for this one namespace only.
"""

from __future__ import annotations

from olm.api import body
from olm.api.labels import Annotation
from olm.controllers.queue import WorkKind
from olm.controllers.scope.cache import terminating
from olm.controllers.scope.csvs import decide_and_execute
from olm.controllers.scope.state import ScopeState
from olm.controllers.store import StoreKind
from olm.kube.errors import NotFound
from olm.scope.copies import CopyMeta, dangling_reason, is_copied
from olm.scope.namespaces import contains, namespace_label_patch, status_namespaces


class ScopeNamespaceController:
    """("scope-namespace", "", namespace): one namespace's labels, copies and copied RBAC."""

    kind = WorkKind.SCOPE_NAMESPACE

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        target = name
        state, store = self.state, self.state.store
        found = store.get(StoreKind.NAMESPACE, "", target)
        if found is None or terminating(found):
            return None
        groups = store.items(StoreKind.OPERATOR_GROUP)
        patch = namespace_label_patch(target, body.meta(found).get("labels") or {}, groups)
        if patch is not None:
            try:
                state.gateway.patch(
                    "v1", "Namespace", None, target, {"metadata": {"labels": patch}}
                )
            except NotFound:
                return None
        deleted: set[str] = set()
        for group in groups:
            group_ns = str(body.meta(group).get("namespace"))
            targets = status_namespaces(group)
            if targets is None or group_ns == target or not contains(frozenset(targets), target):
                continue
            if len(store.keys(StoreKind.OPERATOR_GROUP, group_ns)) != 1:
                continue
            for csv in store.items(StoreKind.CSV, group_ns):
                if is_copied(csv) or body.meta(csv).get("deletionTimestamp"):
                    continue
                plan, _ = decide_and_execute(state, csv, target)
                if target in plan.copies.deletes:
                    deleted.add(body.name(csv))
        for copy in store.items(StoreKind.COPIED_CSV, target):
            copy_meta = CopyMeta.of(copy)
            if copy_meta.name in deleted:
                continue
            origin = copy_meta.annotations.get(Annotation.OPERATOR_NAMESPACE)
            parent = store.get(StoreKind.CSV, origin, copy_meta.name) if origin else None
            if dangling_reason(copy_meta, parent):
                state.delete_copy(target, copy_meta.name)
                state.poke_olm_config()
        return None
