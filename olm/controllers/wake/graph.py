"""The wake graph: for each watched kind, which controllers' keys a change of it wakes.

An event (ADDED, MODIFIED or DELETED) of store kind K, with the object before (`old`, from the
store; None when new) and after, wakes the keys that the rules of `WAKE_GRAPH[K]` return, in
the order of the rules. The rules are pure (olm.controllers.wake.core, .scope and .operator);
`olm.controllers.watch` calls `related_keys` for every event and `resync_keys` at the sync
barrier and on every resync. A work key is (WorkKind, namespace, name).

| store kind | wakes (work kinds) |
| --- | --- |
| csv | csv (itself, the CSVs it replaces or that replace it, rival replacers), namespace, operatorgroup (not on status-only changes), scope, scope-group (on spec changes), operator, adoption |
| copiedcsv | scope-namespace (a copy deleted or edited by someone else) |
| olmconfig | olmconfig, scope (the CSVs of global groups, on spec changes) |
| operatorgroup | operatorgroup (itself; its siblings when it comes or goes), csv (its namespace's; conflicting CSVs anywhere), installplan (Installing, when its ServiceAccount changes), scope-group, scope, scope-namespace (targets gained or lost) |
| operatorcondition | csv (its namespace's), operator, adoption |
| deployment | csv (its owner), operator, adoption |
| crd | csv (all), scope (Succeeded owners, on spec or uid changes), operator, adoption |
| serviceaccount | csv (its namespace's), operatorgroup (groups naming it), operator, adoption |
| role, rolebinding | csv (its namespace's), installplan (scoped Installing plans there), scope, scope-namespace (copied RBAC), scope-group, operator, adoption |
| clusterrole | csv (all), scope (its owner CSV or CRD owners of an aggregation role), scope-group, operator, adoption |
| clusterrolebinding | csv (all), installplan (scoped Installing plans anywhere), scope, scope-group, operator, adoption |
| namespace | operatorgroup (groups whose targets may change), scope-namespace (new or relabelled), operator, adoption |
| subscription | namespace, csv (its installed and current CSVs), operator, adoption |
| installplan | installplan, namespace, operator, adoption |
| catalogsource | catalogsource |
| networkpolicy, registrypod | catalogsource (the one named by its olm.catalogSource label) |
| csvapiservice | csv (the owner its olm.owner labels name, which may be gone) |
| operator | operator |
| service, secret, configmap, apiservice | operator, adoption |

Invariants:
- Every watched kind has an entry (a test checks it against `WATCHED`), and every key a rule
  returns has one of the work kinds its entry lists (a test checks that too).
- An event carrying the resourceVersion the store already holds wakes nothing; that check is
  the watch's (olm.controllers.watch.unchanged), before any rule runs.
- Wakes that are not events stay with the controllers that cause them (a created InstallPlan,
  a CSV that waits for a replacement, the OLMConfig poke after copy writes, an Operator named
  by a label write, a requeue): they are the outcome of a reconcile, not of a watched change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from olm.controllers.queue import WorkKey, WorkKind
from olm.controllers.store import StoreKind, StoreReader
from olm.controllers.wake.core import core_keys, resync_core_keys
from olm.controllers.wake.operator import operator_keys, resync_operator_keys
from olm.controllers.wake.scope import resync_scope_keys, scope_keys


class Rule(Protocol):
    """One family of wake rules: the keys a change of `obj` (from `old`) makes necessary."""

    def __call__(
        self,
        kind: StoreKind,
        obj: Mapping[str, Any],
        store: StoreReader,
        old: Mapping[str, Any] | None = None,
        *,
        deleted: bool = False,
    ) -> list[WorkKey]: ...


@dataclass(frozen=True)
class Wakes:
    """What a change of one store kind wakes: the rules that run, and the work kinds they may
    return (the graph's edges, for the reader and the tests)."""

    rules: tuple[Rule, ...]
    kinds: frozenset[WorkKind]


def _wakes(rules: tuple[Rule, ...], *kinds: WorkKind) -> Wakes:
    return Wakes(rules, frozenset(kinds))


W = WorkKind
CORE_SCOPE_OPERATOR: tuple[Rule, ...] = (core_keys, scope_keys, operator_keys)
CORE_OPERATOR: tuple[Rule, ...] = (core_keys, operator_keys)
# RBAC: the CSVs that need it, the scoped installs waiting for it, its owner's scope key.
RBAC_WAKES = (W.CSV, W.INSTALL_PLAN, W.SCOPE, W.SCOPE_GROUP, W.OPERATOR, W.ADOPTION)

WAKE_GRAPH: Mapping[StoreKind, Wakes] = {
    StoreKind.CSV: _wakes(
        CORE_SCOPE_OPERATOR,
        W.CSV,
        W.NAMESPACE,
        W.OPERATOR_GROUP,
        W.SCOPE,
        W.SCOPE_ROLES,
        W.SCOPE_GROUP,
        W.OPERATOR,
        W.ADOPTION,
    ),
    StoreKind.COPIED_CSV: _wakes((scope_keys,), W.SCOPE_NAMESPACE),
    StoreKind.OLM_CONFIG: _wakes((scope_keys,), W.OLM_CONFIG, W.SCOPE),
    StoreKind.OPERATOR_GROUP: _wakes(
        (core_keys, scope_keys),
        W.OPERATOR_GROUP,
        W.CSV,
        W.INSTALL_PLAN,
        W.SCOPE_GROUP,
        W.SCOPE,
        W.SCOPE_NAMESPACE,
    ),
    StoreKind.OPERATOR_CONDITION: _wakes(CORE_OPERATOR, W.CSV, W.OPERATOR, W.ADOPTION),
    StoreKind.DEPLOYMENT: _wakes(CORE_OPERATOR, W.CSV, W.OPERATOR, W.ADOPTION),
    StoreKind.CRD: _wakes(CORE_SCOPE_OPERATOR, W.CSV, W.SCOPE, W.OPERATOR, W.ADOPTION),
    StoreKind.SERVICE_ACCOUNT: _wakes(
        CORE_SCOPE_OPERATOR, W.CSV, W.OPERATOR_GROUP, W.OPERATOR, W.ADOPTION
    ),
    StoreKind.ROLE: _wakes(CORE_SCOPE_OPERATOR, *RBAC_WAKES, W.SCOPE_NAMESPACE),
    StoreKind.ROLE_BINDING: _wakes(CORE_SCOPE_OPERATOR, *RBAC_WAKES, W.SCOPE_NAMESPACE),
    StoreKind.CLUSTER_ROLE: _wakes(
        CORE_SCOPE_OPERATOR, W.CSV, W.SCOPE, W.SCOPE_GROUP, W.OPERATOR, W.ADOPTION
    ),
    StoreKind.CLUSTER_ROLE_BINDING: _wakes(CORE_SCOPE_OPERATOR, *RBAC_WAKES),
    StoreKind.NAMESPACE: _wakes(
        CORE_SCOPE_OPERATOR, W.OPERATOR_GROUP, W.SCOPE_NAMESPACE, W.OPERATOR, W.ADOPTION
    ),
    StoreKind.SUBSCRIPTION: _wakes(CORE_OPERATOR, W.NAMESPACE, W.CSV, W.OPERATOR, W.ADOPTION),
    StoreKind.INSTALL_PLAN: _wakes(
        CORE_OPERATOR, W.INSTALL_PLAN, W.NAMESPACE, W.OPERATOR, W.ADOPTION
    ),
    StoreKind.CATALOG_SOURCE: _wakes((core_keys,), W.CATALOG_SOURCE),
    StoreKind.NETWORK_POLICY: _wakes((core_keys,), W.CATALOG_SOURCE),
    StoreKind.REGISTRY_POD: _wakes((core_keys,), W.CATALOG_SOURCE),
    StoreKind.CSV_API_SERVICE: _wakes((core_keys,), W.CSV),
    StoreKind.OPERATOR: _wakes((operator_keys,), W.OPERATOR),
    # Watched for the Operator controllers alone (olm.managed objects).
    StoreKind.SERVICE: _wakes((operator_keys,), W.OPERATOR, W.ADOPTION),
    StoreKind.SECRET: _wakes((operator_keys,), W.OPERATOR, W.ADOPTION),
    StoreKind.CONFIG_MAP: _wakes((operator_keys,), W.OPERATOR, W.ADOPTION),
    StoreKind.API_SERVICE: _wakes((operator_keys,), W.OPERATOR, W.ADOPTION),
}


def related_keys(
    kind: StoreKind,
    obj: Mapping[str, Any],
    store: StoreReader,
    old: Mapping[str, Any] | None = None,
    *,
    deleted: bool = False,
) -> list[WorkKey]:
    """The work a change of `obj` (of store kind `kind`; `old` as stored before, None when
    new) makes necessary: the keys of every rule of the kind's entry, in order."""
    keys: list[WorkKey] = []
    for rule in WAKE_GRAPH[kind].rules:
        keys += rule(kind, obj, store, old, deleted=deleted)
    return keys


ResyncRule = Callable[[StoreReader], list[WorkKey]]
# What a full resync (and the sync barrier) wakes: every controller's objects.
RESYNC_RULES: tuple[ResyncRule, ...] = (resync_core_keys, resync_scope_keys, resync_operator_keys)


def resync_keys(store: StoreReader) -> list[WorkKey]:
    """Every key a full resync wakes: each object of the controllers' kinds, each namespace
    that has Subscriptions, and the scope and Operator controllers' keys."""
    return [key for rule in RESYNC_RULES for key in rule(store)]
