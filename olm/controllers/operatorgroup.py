"""The OperatorGroup controller: `status.namespaces`, `olm.providedAPIs`, and the
MultipleOperatorGroup condition (OLM v0 §4.1-4.2).

Invariants: status.namespaces is rewritten only when the set of targets changes; the
providedAPIs annotation is the union of the owned APIs of the group's (non-copied) CSVs; every
change wakes the CSVs of the namespace, whose annotations follow the group.
"""

from __future__ import annotations

import datetime
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.api.labels import Annotation
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.csv.phase import is_copy
from olm.csv.status import timestamp
from olm.groups.targets import provided_apis, target_namespaces
from olm.kube.gateway import Conflict, Gateway, NotFound

OPERATOR_GROUP = KINDS[Kind.OPERATOR_GROUP]
MULTIPLE_GROUPS = "MultipleOperatorGroup"


class OperatorGroupController:
    kind = "operatorgroup"

    def __init__(self, store: Store, gateway: Gateway, queue: WorkQueue) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue

    def _wake_csvs(self, namespace: str) -> None:
        for _, name in self.store.keys("csv", namespace):
            self.queue.add(("csv", namespace, name))

    def reconcile(self, namespace: str, name: str) -> float | None:
        group = self.store.get("operatorgroup", namespace, name)
        self._wake_csvs(namespace)
        if group is None or group["metadata"].get("deletionTimestamp"):
            return None
        space = self.store.get("namespace", "", namespace)
        if space and space["metadata"].get("deletionTimestamp"):
            return None  # nothing can be written in a terminating namespace
        namespaces = {
            n["metadata"]["name"]: n["metadata"].get("labels") or {}
            for n in self.store.items("namespace")
        }
        targets = target_namespaces(group, namespaces)
        status = dict(group.get("status") or {})
        new_status = dict(status)
        if set(status.get("namespaces") or []) != set(targets) or not status.get("lastUpdated"):
            new_status["namespaces"] = targets or None
            new_status["lastUpdated"] = timestamp(datetime.datetime.now(datetime.UTC))
        siblings = self.store.items("operatorgroup", namespace)
        conditions = _conditions(status.get("conditions") or [], len(siblings) > 1)
        if conditions != status.get("conditions"):
            new_status["conditions"] = conditions
        if new_status != status:
            try:
                self.gateway.patch_status(
                    OPERATOR_GROUP.api_version,
                    OPERATOR_GROUP.kind.value,
                    namespace,
                    name,
                    new_status,
                    resource_version=group["metadata"].get("resourceVersion"),
                )
            except Conflict:
                return 0.5
            except NotFound:
                return None
        members = [c for c in self.store.items("csv", namespace) if not is_copy(c)]
        provided = provided_apis(members)
        if (group["metadata"].get("annotations") or {}).get(
            Annotation.PROVIDED_APIS, ""
        ) != provided:
            self.gateway.apply(
                {
                    "apiVersion": OPERATOR_GROUP.api_version,
                    "kind": OPERATOR_GROUP.kind.value,
                    "metadata": {
                        "name": name,
                        "namespace": namespace,
                        "annotations": {Annotation.PROVIDED_APIS.value: provided},
                    },
                }
            )
        return None


def _conditions(existing: list[dict[str, Any]], multiple: bool) -> list[dict[str, Any]] | None:
    others = [c for c in existing if c.get("type") != MULTIPLE_GROUPS]
    if not multiple:
        return others or None
    current = next((c for c in existing if c.get("type") == MULTIPLE_GROUPS), None)
    if current is None:
        current = {
            "type": MULTIPLE_GROUPS,
            "status": "True",
            "reason": "MultipleOperatorGroupsFound",
            "message": "Multiple OperatorGroup found in the same namespace",
            "lastTransitionTime": timestamp(datetime.datetime.now(datetime.UTC)),
        }
    return [*others, current]
