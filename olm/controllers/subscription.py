"""The Subscription controller (OLM v0 §5.2, §5.5): per namespace, snapshot ->
`olm.subscription.decide.decide` -> gateway.

Invariants:
- Keyed by namespace (work key ("namespace", "", <namespace>)); level-triggered: a second
  pass over the cache the first one's writes produce writes nothing.
- Status is written only when it changed, and written through to the cache, so the next
  decision does not act on the old status before the watch delivers the new one.
- A new InstallPlan is created, its status written right after (as OLM does), and the
  decision is taken again over a cache that holds it: that second decision points the
  Subscriptions at it. If olm-py stops in between, the plan is adopted after the restart.
- InstallPlan status written here (adoption) carries the resourceVersion it was decided on.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.api.conditions import utc_now
from olm.api.kinds import KINDS, Kind
from olm.api.subscription import RESOLUTION_FAILED_EVENT
from olm.api.versionpolicy import ROLLBACK_ANNOTATION
from olm.catalogsource.trust import CatalogTrust
from olm.controllers.catalogsource import CatalogCache
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.csv.phase import is_copy
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.metrics.counters import COUNTERS
from olm.subscription.decide import creation_failed, decide
from olm.subscription.plans import PLAN_NAME_PREFIX, reusable
from olm.subscription.resolve import rollback_target
from olm.subscription.snapshot import (
    LoadedCatalog,
    NamespaceEvent,
    NewInstallPlan,
    Plan,
    Snapshot,
    catalogs_in_scope,
)

log = logging.getLogger("olm.subscription")

SUBSCRIPTION = KINDS[Kind.SUBSCRIPTION]
INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
# Decide -> create -> decide again; more rounds than this means the cache lags: retry soon.
MAX_ROUNDS = 3
RETRY_SOON = 0.5


class SubscriptionController:
    kind = WorkKind.NAMESPACE

    def __init__(
        self,
        store: Store,
        gateway: KubeGateway,
        queue: WorkQueue,
        cache: CatalogCache,
        trust: CatalogTrust | None = None,
    ) -> None:
        self.store = store
        self.trust = trust  # --trusted-catalogs; None: every catalog in scope is used
        self.gateway = gateway
        self.queue = queue
        self.cache = cache

    # ----- snapshot ------------------------------------------------------------------------------

    def snapshot(self, namespace: str) -> Snapshot:
        sources = list(self.store.items(StoreKind.CATALOG_SOURCE, namespace))
        if namespace != GLOBAL_CATALOG_NAMESPACE:
            sources += self.store.items(StoreKind.CATALOG_SOURCE, GLOBAL_CATALOG_NAMESPACE)
        loaded = {
            key: LoadedCatalog(cached.catalog, cached.priority)
            for key, cached in self.cache.in_scope(namespace).items()
        }
        subscriptions = self.store.items(StoreKind.SUBSCRIPTION, namespace)
        rollback = any(rollback_target(s) for s in subscriptions)
        return Snapshot(
            namespace=namespace,
            namespace_object=self.store.get(StoreKind.NAMESPACE, "", namespace),
            subscriptions=tuple(
                sorted(
                    self.store.items(StoreKind.SUBSCRIPTION, namespace),
                    key=lambda s: str(s["metadata"]["name"]),
                )
            ),
            csvs={
                c["metadata"]["name"]: c
                for c in self.store.items(StoreKind.CSV, namespace)
                if not is_copy(c)
            },
            plans={
                p["metadata"]["name"]: p
                for p in self.store.items(StoreKind.INSTALL_PLAN, namespace)
            },
            catalogs=catalogs_in_scope(
                namespace, sources, loaded, GLOBAL_CATALOG_NAMESPACE, self.trust
            ),
            now=utc_now(),
            operator_groups=tuple(self.store.items(StoreKind.OPERATOR_GROUP, namespace)),
            crds={c["metadata"]["name"]: c for c in self.store.items(StoreKind.CRD)}
            if rollback
            else {},
        )

    # ----- reconcile -----------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        namespace = name  # the work key is ("namespace", "", <namespace>)
        try:
            return self._reconcile(namespace)
        finally:  # OLM's subscription_sync_total: one sync of each Subscription, as cached now
            COUNTERS.subscriptions_synced(
                namespace, self.store.items(StoreKind.SUBSCRIPTION, namespace)
            )

    def _decide(self, snapshot: Snapshot) -> Plan:
        """`decide`, timed as OLM's olm_resolution_duration_seconds when it resolves."""
        started = time.perf_counter()
        plan = decide(snapshot)
        if snapshot.subscriptions:
            failed = any(e.reason == RESOLUTION_FAILED_EVENT for e in plan.events)
            COUNTERS.resolution(time.perf_counter() - started, succeeded=not failed)
            for catalog in snapshot.catalogs:
                if catalog.loaded is not None:
                    COUNTERS.catalog_snapshot(catalog.namespace, catalog.name)
        return plan

    def _reconcile(self, namespace: str) -> float | None:
        for _ in range(MAX_ROUNDS):
            snapshot = self.snapshot(namespace)
            plan = self._decide(snapshot)
            if plan.create is None:
                return self._execute(namespace, plan)
            try:
                self._create(namespace, plan.create)
            except NotFound:
                return None  # the namespace is gone
            except GatewayError as exc:
                # Said on the Subscriptions (as OLM does), then retried with backoff.
                self._execute(namespace, creation_failed(snapshot, str(exc)))
                raise
        return RETRY_SOON

    def _create(self, namespace: str, new: NewInstallPlan) -> None:
        body = new.body
        try:
            created = self.gateway.create(body)
        except Conflict:
            # A plan of that name exists already (an earlier attempt whose answer was lost):
            # use it when it is the same plan, else let the API server pick a name.
            try:
                existing = self.gateway.get(
                    INSTALL_PLAN.api_version,
                    INSTALL_PLAN.kind.value,
                    namespace,
                    body["metadata"]["name"],
                )
            except NotFound:
                return  # gone again meanwhile: the next round decides afresh
            uids = [str(o.get("uid")) for o in body["metadata"].get("ownerReferences") or []]
            if reusable({"found": existing}, new.csv_names, uids) is not None:
                self.store.upsert(StoreKind.INSTALL_PLAN, existing)
                return
            meta = {k: v for k, v in body["metadata"].items() if k != "name"}
            created = self.gateway.create(
                {**body, "metadata": {**meta, "generateName": PLAN_NAME_PREFIX}}
            )
        name = created["metadata"]["name"]
        # Cache it before writing its status: if that write fails, the next decision adopts
        # the plan instead of creating another.
        self.store.upsert(StoreKind.INSTALL_PLAN, created)
        self.gateway.patch_status(
            INSTALL_PLAN.api_version, INSTALL_PLAN.kind.value, namespace, name, new.status
        )
        self.store.upsert(StoreKind.INSTALL_PLAN, {**created, "status": new.status})
        self.queue.add((WorkKind.INSTALL_PLAN, namespace, name))
        log.info("created InstallPlan %s/%s for %s", namespace, name, ", ".join(new.csv_names))
        for event in new.events:  # on the plan they are about: kubectl describe installplan
            with contextlib.suppress(NotFound, Conflict, GatewayError):
                self.gateway.event(created, event.type, event.reason, event.message)

    def _execute(self, namespace: str, plan: Plan) -> float | None:
        requeue = plan.requeue_after
        for request in plan.unpacks:  # bundle images a resolution needs: unpacked off-thread
            retry = self.cache.unpack((request.namespace, request.name), request.image)
            if retry is not None:  # a failed one, tried again once its backoff has passed
                requeue = retry if requeue is None else min(requeue, retry)
        for write in plan.plan_statuses:
            try:
                self.gateway.patch_status(
                    INSTALL_PLAN.api_version,
                    INSTALL_PLAN.kind.value,
                    namespace,
                    write.name,
                    write.status,
                    resource_version=write.resource_version or None,
                )
            except NotFound:
                continue
            except Conflict:
                requeue = RETRY_SOON  # decided on a stale copy; the watch brings the new one
                continue
            current = self.store.get(StoreKind.INSTALL_PLAN, namespace, write.name)
            if current is not None:
                self.store.upsert(StoreKind.INSTALL_PLAN, {**current, "status": write.status})
            self.queue.add((WorkKind.INSTALL_PLAN, namespace, write.name))
        for status in plan.statuses:
            try:
                self.gateway.patch_status(
                    SUBSCRIPTION.api_version,
                    SUBSCRIPTION.kind.value,
                    namespace,
                    status.name,
                    status.patch,
                )
            except NotFound:
                continue
            current = self.store.get(StoreKind.SUBSCRIPTION, namespace, status.name)
            if current is not None:
                merged = {**(current.get("status") or {}), **status.patch}
                self.store.upsert(
                    StoreKind.SUBSCRIPTION,
                    {**current, "status": {k: v for k, v in merged.items() if v is not None}},
                )
        for name in plan.delete_csvs:  # what a finished `olm rollback` rolled back from
            log.info("deleting ClusterServiceVersion %s/%s: rolled back from", namespace, name)
            self.gateway.delete(CSV.api_version, CSV.kind.value, namespace, name)
        for name in plan.delete_plans:
            log.info("deleting InstallPlan %s/%s: its CSVs were rolled back", namespace, name)
            self.gateway.delete(INSTALL_PLAN.api_version, INSTALL_PLAN.kind.value, namespace, name)
        for name in plan.rollbacks_done:  # carried out once: the request goes
            with contextlib.suppress(NotFound):
                self.gateway.patch(
                    SUBSCRIPTION.api_version,
                    SUBSCRIPTION.kind.value,
                    namespace,
                    name,
                    {"metadata": {"annotations": {ROLLBACK_ANNOTATION: None}}},
                )
        for event in plan.events:
            self._namespace_event(namespace, event)
        return requeue

    # ----- small writes --------------------------------------------------------------------------

    def _namespace_event(self, namespace: str, event: NamespaceEvent) -> None:
        space: dict[str, Any] | None = self.store.get(StoreKind.NAMESPACE, "", namespace)
        if space is None:
            return
        involved = {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {**space["metadata"], "namespace": namespace},
        }
        with contextlib.suppress(NotFound, Conflict, GatewayError):
            self.gateway.event(involved, event.type, event.reason, event.message)
