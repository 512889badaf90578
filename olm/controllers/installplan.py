"""The InstallPlan controller: approval, then the steps in OLM's execution order (OLM v0 §5.4).

Invariants: nothing runs before the plan is approved; CRDs are applied first and the rest waits
until they are Established; an existing CSV is never overwritten by a plan (OLM's rule); every
step's status is recorded; failures end in `Failed` with the step and the API server's words.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.csv.status import parse_timestamp, timestamp
from olm.installplan.crdsafety import (
    stored_versions_problem,
    validation_problem,
    versions_to_check,
)
from olm.installplan.steps import Step
from olm.kube.gateway import Gateway, GatewayError, NotFound

INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
# A plan gives up waiting for its CRDs to be Established after this long (OLM-like deadline).
API_DEADLINE_SECONDS = 300
CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]


def _step(entry: dict[str, Any]) -> Step:
    resource = entry["resource"]
    return Step(
        entry["resolving"],
        json.loads(resource["manifest"]),
        resource.get("sourceName", ""),
        resource.get("sourceNamespace", ""),
    )


class InstallPlanController:
    kind = "installplan"

    def __init__(self, store: Store, gateway: Gateway, queue: WorkQueue) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue

    def _status(self, plan: dict[str, Any], status: dict[str, Any]) -> None:
        meta = plan["metadata"]
        self.gateway.patch_status(
            INSTALL_PLAN.api_version,
            INSTALL_PLAN.kind.value,
            meta["namespace"],
            meta["name"],
            status,
        )

    def reconcile(self, namespace: str, name: str) -> float | None:
        plan = self.store.get("installplan", namespace, name)
        if plan is None:
            return None
        status = dict(plan.get("status") or {})
        phase = status.get("phase", "")
        if phase in ("Complete", "Failed", ""):
            return None
        if phase == "RequiresApproval":
            if (plan.get("spec") or {}).get("approved"):
                self._status(plan, {"phase": "Installing"})
            return None
        entries = list(status.get("plan") or [])
        crd_indexes = [
            i for i, e in enumerate(entries) if e["resource"]["kind"] == "CustomResourceDefinition"
        ]
        rest = [i for i in range(len(entries)) if i not in crd_indexes]
        try:
            for index in crd_indexes:
                unsafe = self._crd_upgrade_problem(_step(entries[index]).manifest)
                if unsafe:
                    raise GatewayError(unsafe, 422)
                entries[index] = {
                    **entries[index],
                    "status": self._apply(_step(entries[index]), namespace),
                }
            waiting = [
                i for i in crd_indexes if not self._established(entries[i]["resource"]["name"])
            ]
            if waiting:
                for index in waiting:
                    entries[index] = {**entries[index], "status": "WaitingForApi"}
                started = parse_timestamp(status.get("startTime")) or datetime.datetime.now(
                    datetime.UTC
                )
                if (
                    datetime.datetime.now(datetime.UTC) - started
                ).total_seconds() > API_DEADLINE_SECONDS:
                    names = ", ".join(entries[i]["resource"]["name"] for i in waiting)
                    message = f"CustomResourceDefinition {names} did not become Established within {API_DEADLINE_SECONDS // 60} minutes; check the CRD's status conditions"
                    condition = {
                        "type": "Installed",
                        "status": "False",
                        "reason": "InstallComponentFailed",
                        "message": message,
                    }
                    self._status(
                        plan,
                        {
                            "phase": "Failed",
                            "plan": entries,
                            "message": message,
                            "conditions": [condition],
                        },
                    )
                    return None
                self._status(plan, {"plan": entries, "startTime": timestamp(started)})
                return 1.0
            csv_uids: dict[str, str] = {}
            for index in rest:
                step = _step(entries[index])
                entries[index] = {
                    **entries[index],
                    "status": self._apply(step, namespace, csv_uids),
                }
        except GatewayError as exc:
            message = f"error creating step {entries[index]['resource']['kind']} {entries[index]['resource']['name']}: {exc}"
            condition = {
                "type": "Installed",
                "status": "False",
                "reason": "InstallComponentFailed",
                "message": message,
            }
            self._status(
                plan,
                {"phase": "Failed", "plan": entries, "message": message, "conditions": [condition]},
            )
            return None
        condition = {"type": "Installed", "status": "True"}
        self._status(plan, {"phase": "Complete", "plan": entries, "conditions": [condition]})
        return None

    def _crd_upgrade_problem(self, new: dict[str, Any]) -> str | None:
        """OLM's CRD upgrade safety, when the CRD exists already."""
        existing = self.store.get("crd", "", new["metadata"]["name"])
        if existing is None:
            return None
        problem = stored_versions_problem(existing, new)
        if problem:
            return problem
        spec = new.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural")
        for version in versions_to_check(existing, new):
            objects = self.gateway.list_path(f"/apis/{spec.get('group')}/{version}/{plural}")
            problem = validation_problem(new, version, objects)
            if problem:
                return problem
        return None

    def _established(self, crd_name: str) -> bool:
        crd = self.store.get("crd", "", crd_name)
        conditions = {
            c.get("type"): c.get("status")
            for c in ((crd or {}).get("status") or {}).get("conditions") or []
        }
        return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"

    def _apply(self, step: Step, namespace: str, csv_uids: dict[str, str] | None = None) -> str:
        manifest = step.manifest
        meta = manifest["metadata"]
        if manifest["kind"] == CSV.kind.value:
            try:
                existing = self.gateway.get(
                    CSV.api_version, CSV.kind.value, namespace, meta["name"]
                )
                if csv_uids is not None:
                    csv_uids[meta["name"]] = existing["metadata"]["uid"]
                return "Present"  # OLM never overwrites an existing CSV from a plan
            except NotFound:
                # A plain create, as OLM does: the CSV's spec must not be owned by olm-py's
                # apply field manager, which later applies only the CSV's metadata.
                created = self.gateway.create(manifest)
                if csv_uids is not None:
                    csv_uids[meta["name"]] = created["metadata"]["uid"]
                return "Created"
        for owner in meta.get("ownerReferences") or []:
            if (
                owner.get("kind") == CSV.kind.value
                and not owner.get("uid")
                and csv_uids is not None
            ):
                owner["uid"] = csv_uids.get(owner["name"], "")
        meta["ownerReferences"] = [
            o for o in meta.get("ownerReferences") or [] if o.get("uid")
        ] or None
        if meta["ownerReferences"] is None:
            del meta["ownerReferences"]
        self.gateway.apply(manifest)
        return "Created"
