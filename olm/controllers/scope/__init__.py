"""Global operators: what an OperatorGroup's scope means beyond the operator's own namespace
(copied CSVs, scope RBAC, per-API and per-group ClusterRoles, namespace labels, OLMConfig's
copied-CSV toggle). Snapshot -> `olm.scope` decisions -> gateway, in four small controllers
(one module each: `csvs`, `namespace`, `group`, `olmconfig`) over one shared `state`:

| work key | what it makes right | woken by (olm.controllers.wake.scope) |
| --- | --- | --- |
| ("scope", ns, csv) | one original CSV everywhere: its copies, its lifted or copied RBAC, its per-API ClusterRoles | the CSV, its group, its owned RBAC, its CRDs, OLMConfig |
| ("scope-namespace", "", ns) | one namespace: its `olm.operatorgroup.uid/*` labels, and the copy and copied RBAC of every CSV whose group targets it | the namespace appearing or relabelled, a group's targets gaining or losing it, a copy or copied Role there deleted |
| ("scope-group", ns, og) | one group's aggregation ClusterRoles (deleted with it) | the group, its CSVs' specs, its roles |
| ("olmconfig", "", "cluster") | the `DisabledCopiedCSVs` condition | OLMConfig changes, copy writes (debounced) |

Invariants:
- Level-triggered and idempotent: every object is compared with the cache before it is
  written (`olm.scope.decide.changed`, the copies' hashes), so a second pass over the same cache
  writes nothing. Copies and RBAC we write are written through to the cache.
- A namespace event costs O(OperatorGroups + CSVs that target it), never O(CSVs x namespaces):
  only "scope-namespace" keys are woken by namespaces, and they decide for that one namespace.
- Copies live in the cache as metadata only (`copy_metadata`, `StoreKind.COPIED_CSV`;
  `cache.trim`).
- Nothing is written into a terminating namespace; NotFound (a namespace that just went) is
  not an error.
"""

from __future__ import annotations

from olm.controllers.queue import WorkQueue
from olm.controllers.scope.cache import trim
from olm.controllers.scope.csvs import ScopeController, ScopeRolesController
from olm.controllers.scope.group import ScopeGroupController
from olm.controllers.scope.namespace import ScopeNamespaceController
from olm.controllers.scope.olmconfig import OlmConfigController
from olm.controllers.scope.state import ScopeState
from olm.controllers.store import Store
from olm.kube.protocol import KubeGateway

__all__ = [
    "OlmConfigController",
    "ScopeController",
    "ScopeGroupController",
    "ScopeNamespaceController",
    "ScopeRolesController",
    "ScopeState",
    "controllers",
    "trim",
]


def controllers(
    store: Store,
    gateway: KubeGateway,
    queue: WorkQueue,
    protected_namespaces: frozenset[str] = frozenset(),
) -> list[
    ScopeController
    | ScopeRolesController
    | ScopeNamespaceController
    | ScopeGroupController
    | OlmConfigController
]:
    """The five scope controllers over one shared state (what `olm run` registers)."""
    state = ScopeState(store, gateway, queue, protected_namespaces)
    return [
        ScopeController(state),
        ScopeRolesController(state),
        ScopeNamespaceController(state),
        ScopeGroupController(state),
        OlmConfigController(state),
    ]
