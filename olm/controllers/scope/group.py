"""The ("scope-group", namespace, group) controller: one OperatorGroup's admin/edit/view
aggregation ClusterRoles over the APIs its CSVs provide.

Invariant: the roles go with the group (also when it went while olm-py was down: the resync
wakes the keys its roles' owner labels name).
"""

from __future__ import annotations

from olm.api import body
from olm.controllers.queue import WorkKind
from olm.controllers.scope.cache import terminating
from olm.controllers.scope.state import ScopeState
from olm.controllers.store import StoreKind
from olm.scope.apiroles import (
    group_apis,
    operator_group_cluster_roles,
    operator_group_cluster_roles_to_delete,
)
from olm.scope.rbac import ObjectRef


class ScopeGroupController:
    """("scope-group", namespace, group): the group's admin/edit/view aggregation roles."""

    kind = WorkKind.SCOPE_GROUP

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        state, store = self.state, self.state.store
        group = store.get(StoreKind.OPERATOR_GROUP, namespace, name)
        if group is None or body.meta(group).get("deletionTimestamp"):
            leftovers = operator_group_cluster_roles_to_delete(
                namespace, name, store.items(StoreKind.CLUSTER_ROLE)
            )
            state.delete_rbac(ObjectRef("ClusterRole", "", role) for role in leftovers)
            return None
        if terminating(store.get(StoreKind.NAMESPACE, "", namespace)):
            return None
        apis = group_apis(group, store.items(StoreKind.CSV, namespace))
        state.apply_changed(operator_group_cluster_roles(group, apis))
        return None
