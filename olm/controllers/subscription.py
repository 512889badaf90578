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
from olm.controllers.catalogsource import GLOBAL_NAMESPACE, CatalogCache
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


def _catalog_health(
    sources: list[Source], unhealthy: list[str], previous: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """One entry per catalog in scope; an entry's lastUpdated moves only when it changes."""
    old = {
        (e["catalogSourceRef"]["namespace"], e["catalogSourceRef"]["name"]): e
        for e in previous
        if "catalogSourceRef" in e
    }
    entries = []
    for namespace, name, healthy in sorted(
        [(s.namespace, s.name, True) for s in sources]
        + [(*u.split("/", 1), False) for u in unhealthy]
    ):
        before = old.get((namespace, name))
        stamp = before["lastUpdated"] if before and before.get("healthy") == healthy else _now()
        entries.append(
            {
                "catalogSourceRef": {"kind": "CatalogSource", "name": name, "namespace": namespace},
                "healthy": healthy,
                "lastUpdated": stamp,
            }
        )
    return entries


def _set(
    conditions: list[dict[str, Any]], kind: str, status: str, reason: str, message: str
) -> list[dict[str, Any]]:
    """Set one condition; its lastTransitionTime moves only when the status changes."""
    others = [c for c in conditions if c.get("type") != kind]
    old = next((c for c in conditions if c.get("type") == kind), None)
    if old and (old.get("status"), old.get("reason"), old.get("message")) == (
        status,
        reason,
        message,
    ):
        return [*others, old]
    since = (
        old["lastTransitionTime"]
        if old and old.get("status") == status and old.get("lastTransitionTime")
        else _now()
    )
    return [
        *others,
        {
            "type": kind,
            "status": status,
            "reason": reason,
            "message": message,
            "lastTransitionTime": since,
        },
    ]


def _condition(
    conditions: list[dict[str, Any]], kind: str, message: str | None, reason: str = ""
) -> list[dict[str, Any]]:
    """Set one condition to True with `message`, or remove it when `message` is None."""
    if message is None:
        return [c for c in conditions if c.get("type") != kind]
    return _set(conditions, kind, "True", reason, message)


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
            self._label(subscription)
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
                    plan_status = plan.get("status") or {}
                    if plan_status.get("phase") == "Failed":
                        message = (
                            f"InstallPlan {reference} failed: {plan_status.get('message', '')}"
                        )
                        conditions = _set(
                            status.get("conditions") or [],
                            "InstallPlanFailed",
                            "True",
                            "InstallPlanFailed",
                            message,
                        )
                        fixed_up |= self._write(subscription, {"conditions": conditions})
                    waiting.append(plan_status.get("phase") not in ("Failed",))
        if fixed_up:
            return None  # as OLM: the status event brings the next sync, on fresh data
        if waiting and len(waiting) == len(subscriptions) and all(waiting):
            return None  # every Subscription waits on its InstallPlan
        return self._resolve(namespace, subscriptions, csvs)

    def _resolve(
        self, namespace: str, subscriptions: list[dict[str, Any]], csvs: dict[str, dict[str, Any]]
    ) -> float | None:
        sources, pool = [], []
        cached_keys = {f"{ns}/{n}" for ns, n in self.cache.in_scope(namespace)}
        unhealthy = sorted(
            f"{s['metadata']['namespace']}/{s['metadata']['name']}"
            for space in {namespace, GLOBAL_NAMESPACE}
            for s in self.store.items("catalogsource", space)
            if f"{s['metadata']['namespace']}/{s['metadata']['name']}" not in cached_keys
        )
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
            health = _catalog_health(sources, unhealthy, status.get("catalogHealth") or [])
            base_conditions = _set(
                status.get("conditions") or [],
                "CatalogSourcesUnhealthy",
                "True" if unhealthy else "False",
                "UnhealthyCatalogSourceFound" if unhealthy else "AllCatalogSourcesHealthy",
                f"unhealthy catalog sources: {', '.join(unhealthy)}"
                if unhealthy
                else "all available catalogsources are healthy",
            )
            status["conditions"] = base_conditions
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

    def _label(self, subscription: dict[str, Any]) -> None:
        """OLM's `operators.coreos.com/<package>.<namespace>` label (Operator aggregation)."""
        meta = subscription["metadata"]
        # A label name has at most 63 characters; OLM truncates "<package>.<namespace>" too.
        package = (subscription.get("spec") or {}).get("name", "")
        key = "operators.coreos.com/" + f"{package}.{meta['namespace']}"[:63].rstrip(".-_")
        if key in (meta.get("labels") or {}):
            return
        with contextlib.suppress(GatewayError, NotFound):
            self.gateway.apply(
                {
                    "apiVersion": SUBSCRIPTION.api_version,
                    "kind": SUBSCRIPTION.kind.value,
                    "metadata": {
                        "name": meta["name"],
                        "namespace": meta["namespace"],
                        "labels": {key: ""},
                    },
                }
            )

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
