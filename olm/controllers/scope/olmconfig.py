"""The ("olmconfig", "", "cluster") controller: OLMConfig's `DisabledCopiedCSVs` condition, and a
nudge for every AllNamespaces CSV whose copies are not as the toggle wants.

Invariant: the status is written with the resourceVersion it was decided on; a conflict only
means a newer OLMConfig, decided again shortly.
"""

from __future__ import annotations

from olm.api import body
from olm.api.conditions import utc_now
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.api.scope import OLM_CONFIG_NAME
from olm.controllers.queue import WorkKind
from olm.controllers.scope.cache import terminating
from olm.controllers.scope.state import ScopeState
from olm.controllers.store import StoreKind
from olm.kube.errors import Conflict, NotFound
from olm.scope.copies import is_copied
from olm.scope.namespaces import status_namespaces
from olm.scope.olmconfig import OlmConfigSnapshot, copied_csvs_enabled, plan_olm_config

OLM_CONFIG_INFO = KINDS[Kind.OLM_CONFIG]
RETRY_STALE_SECONDS = 0.5


class OlmConfigController:
    """("olmconfig", "", "cluster"): the DisabledCopiedCSVs condition, and a nudge for every
    AllNamespaces CSV whose copies are not as the toggle wants."""

    kind = WorkKind.OLM_CONFIG

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        state, store = self.state, self.state.store
        if name != OLM_CONFIG_NAME:
            return None
        state.olm_config_running()
        config = store.get(StoreKind.OLM_CONFIG, "", name)
        if config is None:
            return None
        copies: dict[tuple[str, str], set[str]] = {}
        for copy in store.items(StoreKind.COPIED_CSV):
            meta = body.meta(copy)
            origin = (meta.get("labels") or {}).get(Label.COPIED_FROM)
            copies.setdefault((str(origin), str(meta.get("name"))), set()).add(
                str(meta.get("namespace"))
            )
        global_csvs = {}
        for group in store.items(StoreKind.OPERATOR_GROUP):
            group_ns = str(body.meta(group).get("namespace"))
            if (
                status_namespaces(group) != ("",)
                or len(store.keys(StoreKind.OPERATOR_GROUP, group_ns)) != 1
            ):
                continue
            for csv in store.items(StoreKind.CSV, group_ns):
                if is_copied(csv) or body.meta(csv).get("deletionTimestamp"):
                    continue
                key = (group_ns, body.name(csv))
                global_csvs[key] = frozenset(copies.get(key, ()))
        active = sum(
            1
            for n in store.items(StoreKind.NAMESPACE)
            if not terminating(n) and (n.get("status") or {}).get("phase", "Active") == "Active"
        )
        plan = plan_olm_config(
            config,
            OlmConfigSnapshot(
                enabled=copied_csvs_enabled(config),
                active_namespaces=active,
                protected_namespaces=state.protected_namespaces,
                global_csvs=global_csvs,
                now=utc_now(),
            ),
        )
        if plan.status is not None:
            try:
                state.gateway.patch_status(
                    OLM_CONFIG_INFO.api_version,
                    OLM_CONFIG_INFO.kind.value,
                    None,
                    name,
                    plan.status,
                    resource_version=body.meta(config).get("resourceVersion"),
                )
            except Conflict:
                return RETRY_STALE_SECONDS
            except NotFound:
                return None
        for csv_namespace, csv_name in plan.wake_csvs:
            state.queue.add((WorkKind.SCOPE, csv_namespace, csv_name))
        return None
