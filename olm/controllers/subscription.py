"""Resolution per namespace (OLM v0 §5.2): Subscriptions + installed CSVs + catalogs in scope
-> the resolver -> one InstallPlan, and every Subscription's status.

Invariants: keyed by namespace; a namespace whose Subscriptions all wait on an InstallPlan is
not re-resolved; a failing Subscription gets `ResolutionFailed` in plain words while the
others go on; status is written only when it changed.
"""

from __future__ import annotations

import contextlib
import datetime
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.controllers.catalogsource import CatalogCache
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.csv.phase import is_copy
from olm.csv.status import timestamp
from olm.installplan.steps import plan_bundle
from olm.kube.gateway import Conflict, Gateway, GatewayError, NotFound
from olm.resolution.catalogs import candidates
from olm.resolution.model import Candidate, Installed, Source, Wanted
from olm.resolution.resolver import Resolver

SUBSCRIPTION = KINDS[Kind.SUBSCRIPTION]
INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
AT_LATEST, UPGRADE_PENDING = "AtLatestKnown", "UpgradePending"


def _now() -> str:
    return timestamp(datetime.datetime.now(datetime.UTC))


def _condition(
    conditions: list[dict[str, Any]], kind: str, message: str | None, reason: str = ""
) -> list[dict[str, Any]]:
    """Set (message given) or remove (None) one condition type, keeping transition times."""
    others = [c for c in conditions if c.get("type") != kind]
    if message is None:
        return others
    old = next((c for c in conditions if c.get("type") == kind), None)
    if old and old.get("message") == message and old.get("status") == "True":
        return [*others, old]
    return [
        *others,
        {
            "type": kind,
            "status": "True",
            "reason": reason,
            "message": message,
            "lastTransitionTime": _now(),
        },
    ]


class SubscriptionController:
    kind = "namespace"

    def __init__(
        self, store: Store, gateway: Gateway, queue: WorkQueue, cache: CatalogCache
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self.cache = cache

    def _write(self, subscription: dict[str, Any], status: dict[str, Any]) -> bool:
        """Patch the Subscription's status when it differs; True when something was written."""
        current = subscription.get("status") or {}
        if all(current.get(k) == v for k, v in status.items()):
            return False
        status = {**status, "lastUpdated": _now()}
        meta = subscription["metadata"]
        # Write through to the cache, so the next sync does not act on the old status before
        # the watch delivers the new one.
        self.store.upsert("subscription", {**subscription, "status": {**current, **status}})
        self.gateway.patch_status(
            SUBSCRIPTION.api_version,
            SUBSCRIPTION.kind.value,
            meta["namespace"],
            meta["name"],
            status,
        )
        return True

    def reconcile(self, namespace: str, name: str) -> float | None:
        # Keyed by namespace: the work key is ("namespace", "", <namespace>).
        namespace = name
        subscriptions = sorted(
            self.store.items("subscription", namespace), key=lambda s: s["metadata"]["name"]
        )
        if not subscriptions:
            return None
        csvs = {
            c["metadata"]["name"]: c for c in self.store.items("csv", namespace) if not is_copy(c)
        }
        plans = {p["metadata"]["name"]: p for p in self.store.items("installplan", namespace)}
        # Fix-ups (OLM's CSV-state step): a current CSV that exists is installed.
        waiting = []
        fixed_up = False
        for subscription in subscriptions:
            status = subscription.get("status") or {}
            current = status.get("currentCSV")
            if current and current in csvs:
                fixed_up |= self._write(subscription, {"state": AT_LATEST, "installedCSV": current})
            elif current:
                reference = (status.get("installPlanRef") or {}).get("name", "")
                plan = plans.get(reference)
                if plan is None:
                    # The plan was deleted before it ran (OLM would wait forever): say so, and
                    # resolve again from what is installed.
                    message = (
                        f"InstallPlan {reference} was deleted before it completed; resolving again"
                    )
                    conditions = _condition(
                        status.get("conditions") or [],
                        "InstallPlanMissing",
                        message,
                        "ReferencedInstallPlanNotFound",
                    )
                    installed = (
                        status.get("installedCSV") if status.get("installedCSV") in csvs else None
                    )
                    fixed_up |= self._write(
                        subscription,
                        {
                            "conditions": conditions,
                            "currentCSV": installed,
                            "state": AT_LATEST if installed else None,
                            "installPlanRef": None,
                            "installplan": None,
                        },
                    )
                    waiting.append(False)
                else:
                    waiting.append((plan.get("status") or {}).get("phase") not in ("Failed",))
        if fixed_up:
            return None  # as OLM: the status event brings the next sync, on fresh data
        if waiting and len(waiting) == len(subscriptions) and all(waiting):
            return None  # every Subscription waits on its InstallPlan
        return self._resolve(namespace, subscriptions, csvs)

    def _resolve(
        self, namespace: str, subscriptions: list[dict[str, Any]], csvs: dict[str, dict[str, Any]]
    ) -> float | None:
        sources, pool = [], []
        for (ns, name), cached in sorted(self.cache.in_scope(namespace).items()):
            source = Source(name, ns, cached.priority, own_namespace=ns == namespace)
            sources.append(source)
            pool.extend(candidates(cached.catalog, source))
        bundle_package = {c.bundle: c.package for c in pool}
        installed_of = {
            (s.get("status") or {}).get("installedCSV"): s["spec"]["name"] for s in subscriptions
        }
        installed = []
        for name, csv in csvs.items():
            package = installed_of.get(name) or bundle_package.get(name)
            if package:
                owned = ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get(
                    "owned"
                ) or []
                provides = tuple(
                    (
                        str(o.get("name", "")).split(".", 1)[-1],
                        str(o.get("version", "")),
                        str(o.get("kind", "")),
                    )
                    for o in owned
                )
                installed.append(
                    Installed(
                        name, package, str((csv.get("spec") or {}).get("version", "")), provides
                    )
                )
        wanted = []
        for subscription in subscriptions:
            spec, status = subscription.get("spec") or {}, subscription.get("status") or {}
            current = status.get("installedCSV") if status.get("installedCSV") in csvs else ""
            wanted.append(
                Wanted(
                    subscription["metadata"]["name"],
                    spec.get("name", ""),
                    spec.get("source", ""),
                    spec.get("sourceNamespace", ""),
                    spec.get("channel", "") or "",
                    spec.get("startingCSV", "") or "",
                    current or "",
                )
            )
        decision = Resolver(pool, installed, sources).resolve(wanted)
        steps, names, moved = [], [], {}
        for subscription in subscriptions:
            name = subscription["metadata"]["name"]
            status = dict(subscription.get("status") or {})
            health = [
                {
                    "catalogSourceRef": {
                        "kind": "CatalogSource",
                        "name": s.name,
                        "namespace": s.namespace,
                    },
                    "healthy": True,
                    "lastUpdated": _now(),
                }
                for s in sources
            ]
            if name in decision.failures:
                conditions = _condition(
                    status.get("conditions") or [],
                    "ResolutionFailed",
                    decision.failures[name],
                    "ConstraintsNotSatisfiable",
                )
                self._write(subscription, {"conditions": conditions, "catalogHealth": health})
                continue
            chosen = decision.chosen.get(name)
            if isinstance(chosen, Candidate) and chosen.bundle != status.get("currentCSV"):
                replaces = status.get("installedCSV") if status.get("installedCSV") in csvs else ""
                steps += plan_bundle(
                    self._objects(chosen),
                    namespace,
                    (chosen.source.name, chosen.source.namespace),
                    replaces or "",
                )
                names.append(chosen.bundle)
                moved[name] = chosen.bundle
            else:
                self._write(
                    subscription,
                    {
                        "conditions": _condition(
                            status.get("conditions") or [], "ResolutionFailed", None
                        ),
                        "catalogHealth": health,
                    },
                )
        for dependency in decision.dependencies:
            steps += plan_bundle(
                self._objects(dependency),
                namespace,
                (dependency.source.name, dependency.source.namespace),
            )
            names.append(dependency.bundle)
        if decision.failures:
            self._namespace_event(namespace, "; ".join(decision.failures.values()))
        if not steps:
            return None
        plan = self._create_plan(namespace, subscriptions, names, steps)
        for subscription in subscriptions:
            name = subscription["metadata"]["name"]
            if name not in moved:
                continue
            status = subscription.get("status") or {}
            reference = {
                "apiVersion": INSTALL_PLAN.api_version,
                "kind": INSTALL_PLAN.kind.value,
                "name": plan["metadata"]["name"],
                "namespace": namespace,
                "uid": plan["metadata"]["uid"],
            }
            self._write(
                subscription,
                {
                    "currentCSV": moved[name],
                    "state": UPGRADE_PENDING,
                    "installPlanRef": reference,
                    "installplan": {
                        "apiVersion": INSTALL_PLAN.api_version,
                        "kind": INSTALL_PLAN.kind.value,
                        "name": plan["metadata"]["name"],
                        "uuid": plan["metadata"]["uid"],
                    },
                    "installPlanGeneration": plan["spec"]["generation"],
                    "conditions": _condition(
                        _condition(status.get("conditions") or [], "ResolutionFailed", None),
                        "InstallPlanMissing",
                        None,
                    ),
                },
            )
        return None

    def _objects(self, candidate: Candidate) -> list[dict[str, Any]]:
        cached = self.cache.get(candidate.source.namespace, candidate.source.name)
        assert cached is not None
        return cached.catalog.packages[candidate.package].bundles[candidate.bundle].objects

    def _pending_plan(self, namespace: str, names: list[str]) -> dict[str, Any] | None:
        for plan in self.store.items("installplan", namespace):
            phase = (plan.get("status") or {}).get("phase", "")
            if (
                phase not in ("Complete", "Failed")
                and (plan.get("spec") or {}).get("clusterServiceVersionNames") == names
            ):
                return plan
        return None

    def _create_plan(
        self,
        namespace: str,
        subscriptions: list[dict[str, Any]],
        names: list[str],
        steps: list[Any],
    ) -> dict[str, Any]:
        pending = self._pending_plan(namespace, names)
        if pending is not None:
            return pending
        manual = any(
            (s.get("spec") or {}).get("installPlanApproval") == "Manual" for s in subscriptions
        )
        generation = 1 + max(
            [
                int((p.get("spec") or {}).get("generation") or 0)
                for p in self.store.items("installplan", namespace)
            ]
            or [0]
        )
        owners = [
            {
                "apiVersion": SUBSCRIPTION.api_version,
                "kind": SUBSCRIPTION.kind.value,
                "name": s["metadata"]["name"],
                "uid": s["metadata"]["uid"],
                "controller": False,
                "blockOwnerDeletion": False,
            }
            for s in subscriptions
        ]
        body = {
            "apiVersion": INSTALL_PLAN.api_version,
            "kind": INSTALL_PLAN.kind.value,
            "metadata": {
                "generateName": "install-",
                "namespace": namespace,
                "ownerReferences": owners,
            },
            "spec": {
                "clusterServiceVersionNames": names,
                "approval": "Manual" if manual else "Automatic",
                "approved": not manual,
                "generation": generation,
            },
        }
        plan: dict[str, Any] = self.gateway.create(body)
        status = {
            "phase": "RequiresApproval" if manual else "Installing",
            "catalogSources": sorted({s.source_name for s in steps}),
            "plan": [s.status_entry() for s in steps],
            "conditions": [],
        }
        self.gateway.patch_status(
            INSTALL_PLAN.api_version,
            INSTALL_PLAN.kind.value,
            namespace,
            plan["metadata"]["name"],
            status,
        )
        self.store.upsert("installplan", {**plan, "status": status})  # write-through, as above
        self.queue.add(("installplan", namespace, plan["metadata"]["name"]))
        return plan

    def _namespace_event(self, namespace: str, message: str) -> None:
        space = self.store.get("namespace", "", namespace)
        if space is None:
            return
        with contextlib.suppress(GatewayError, Conflict, NotFound):
            self.gateway.event(
                {
                    "apiVersion": "v1",
                    "kind": "Namespace",
                    "metadata": {**space["metadata"], "namespace": namespace},
                },
                "Warning",
                "ResolutionFailed",
                message,
            )
