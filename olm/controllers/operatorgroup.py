"""The OperatorGroup controller: snapshot -> `olm.groups.decide.decide` -> gateway.

Invariants:
- Level-triggered and idempotent: the plan comes from the current snapshot only; a second pass
  over the same snapshot writes nothing.
- The status write carries the resourceVersion the decision was based on, so a decision made
  on a stale snapshot is refused (409) and retried; Events follow a successful write only.
- The CSVs the plan names are woken after the writes. A status write is followed by the
  group's own watch event, whose pass wakes the CSVs that have not seen the new status.
"""

from __future__ import annotations

import logging
from typing import Any

from olm.api.conditions import utc_now
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Annotation
from olm.controllers.events import record_event
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.groups.decide import GroupPlan, GroupSnapshot, decide
from olm.groups.serviceaccount import service_account_name
from olm.kube.errors import Conflict, NotFound
from olm.kube.protocol import KubeGateway
from olm.scope.conflicts import pruned_provided_apis

log = logging.getLogger("olm.operatorgroup")

OPERATOR_GROUP = KINDS[Kind.OPERATOR_GROUP]
RETRY_STALE_SECONDS = 0.5


def _terminating(namespace: dict[str, Any] | None) -> bool:
    return bool(
        namespace
        and (
            namespace["metadata"].get("deletionTimestamp")
            or (namespace.get("status") or {}).get("phase") == "Terminating"
        )
    )


class OperatorGroupController:
    kind = WorkKind.OPERATOR_GROUP

    def __init__(self, store: Store, gateway: KubeGateway, queue: WorkQueue) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue

    def snapshot(self, namespace: str, name: str) -> GroupSnapshot:
        group = self.store.get(StoreKind.OPERATOR_GROUP, namespace, name)
        account = service_account_name(group) if group is not None else ""
        return GroupSnapshot(
            namespace=namespace,
            name=name,
            group=group,
            sibling_names=tuple(
                sorted(
                    key_name for _, key_name in self.store.keys(StoreKind.OPERATOR_GROUP, namespace)
                )
            ),
            namespaces={
                n["metadata"]["name"]: n["metadata"].get("labels") or {}
                for n in self.store.items(StoreKind.NAMESPACE)
            },
            namespace_terminating=_terminating(self.store.get(StoreKind.NAMESPACE, "", namespace)),
            csvs=tuple(self.store.items(StoreKind.CSV, namespace)),
            now=utc_now(),
            service_account=self.store.get(StoreKind.SERVICE_ACCOUNT, namespace, account)
            if account
            else None,
            pruned_provided_apis=pruned_provided_apis(
                group, self.store.items(StoreKind.CSV, namespace)
            )
            if group is not None
            else None,
        )

    def reconcile(self, namespace: str, name: str) -> float | None:
        snapshot = self.snapshot(namespace, name)
        return self._execute(snapshot, decide(snapshot))

    def _execute(self, snapshot: GroupSnapshot, plan: GroupPlan) -> float | None:
        group, namespace, name = snapshot.group, snapshot.namespace, snapshot.name
        if group is not None and plan.status is not None:
            try:
                self.gateway.patch_status(
                    OPERATOR_GROUP.api_version,
                    OPERATOR_GROUP.kind.value,
                    namespace,
                    name,
                    plan.status,
                    resource_version=group["metadata"].get("resourceVersion"),
                )
            except Conflict:
                return RETRY_STALE_SECONDS  # decided on a stale snapshot; the watch brings it
            except NotFound:
                return None
            for event in plan.events:
                self._event(dict(group), event.type, event.reason, event.message)
        if group is not None and plan.provided_apis is not None:
            try:
                self.gateway.apply(
                    {
                        "apiVersion": OPERATOR_GROUP.api_version,
                        "kind": OPERATOR_GROUP.kind.value,
                        "metadata": {
                            "name": name,
                            "namespace": namespace,
                            "annotations": {Annotation.PROVIDED_APIS.value: plan.provided_apis},
                        },
                    }
                )
            except NotFound:
                return None
            except Conflict:
                return RETRY_STALE_SECONDS
        for csv in plan.wake_csvs:
            self.queue.add((WorkKind.CSV, namespace, csv))
        return plan.requeue_after

    def _event(self, group: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        record_event(self.gateway, group, event_type, reason, message)
