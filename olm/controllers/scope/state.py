"""What the four scope controllers share (`ScopeState`): the store, the gateway, the queue, the
snapshot a scope decision reads, the writes that carry a plan out, the Events it says and the
debounced OLMConfig poke.

Invariants:
- Every write is compared with the cache first (`olm.scope.decide.changed`) and written
  through to it, so a second pass over the same cache writes nothing.
- Nothing is written into a terminating namespace: NotFound (a namespace that just went) and
  the API server's "being terminated" refusal are not errors.
- One Event per (CSV, reason, message) for the life of the process; the DisabledCopiedCSVs
  Event is looked up once per CSV, then remembered.
- A pass applies its RBAC before its copies; up to `COPY_WRITE_CONCURRENCY` copies are written
  at once (the API server, not olm-py, is then the limit), one copy's requests in order, each
  response written through to the cache (no read before a write).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from olm.api import body
from olm.api.csv import CsvPhase
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.api.scope import DISABLED_COPIED_CSVS_EVENT_REASON, OLM_CONFIG_NAME
from olm.controllers.events import record_event
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.scope.cache import terminating
from olm.controllers.store import STORE_KIND_OF, Store, StoreKind
from olm.csv.rbac import RbacSnapshot
from olm.install.apiservices import API_REGISTRATION, APISERVICE_KIND
from olm.install.apiservices import names as apiservice_names
from olm.kube.errors import GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.scope.copies import CopyMeta, CopyPrototype, CopyWrite, copy_prototype
from olm.scope.decide import (
    ScopePlan,
    ScopeSnapshot,
    changed,
    copy_metadata,
    copy_status,
    ref_of,
    tenant_namespaces,
)
from olm.scope.namespaces import is_all, status_namespaces
from olm.scope.olmconfig import copied_csvs_enabled
from olm.scope.rbac import ObjectRef, existing_scope_objects

CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
# Copy writes in flight at once (the API server, not olm-py, should be the limit).
COPY_WRITE_CONCURRENCY = 8
OLM_CONFIG_DEBOUNCE_SECONDS = 1.0  # OLM waits 5 s; the condition settles after the copy writes


def _namespace_going(exc: GatewayError) -> bool:
    """The API server refuses new objects in a namespace being deleted (403)."""
    return exc.status == 403 and "being terminated" in str(exc)


class ScopeState:
    """What the four scope controllers share: the cache, the gateway, the queue, and caches
    that only save work (copy prototypes per resourceVersion, Events already said)."""

    def __init__(
        self,
        store: Store,
        gateway: KubeGateway,
        queue: WorkQueue,
        protected_namespaces: frozenset[str] = frozenset(),
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self.protected_namespaces = protected_namespaces
        self._lock = threading.Lock()
        self._prototypes: dict[tuple[str, str], tuple[str, CopyPrototype]] = {}
        self._said: set[tuple[str, str, str]] = set()
        self._disabled_event: dict[str, bool] = {}  # csv uid -> a DisabledCopiedCSVs Event exists
        self._olm_config_due = False
        self._pool: ThreadPoolExecutor | None = None  # the copy writers, made on first use

    # ----- reading the cache -----------------------------------------------------------------

    def group_of(self, namespace: str) -> Mapping[str, Any] | None:
        groups = self.store.items(StoreKind.OPERATOR_GROUP, namespace)
        return groups[0] if len(groups) == 1 else None

    def prototype(self, csv: Mapping[str, Any]) -> CopyPrototype:
        meta = body.meta(csv)
        key = (str(meta.get("namespace")), str(meta.get("name")))
        version = str(meta.get("resourceVersion") or "")
        with self._lock:
            cached = self._prototypes.get(key)
        if cached is not None and version and cached[0] == version:
            return cached[1]
        proto = copy_prototype(csv)
        with self._lock:
            self._prototypes[key] = (version, proto)
        return proto

    def forget(self, namespace: str, name: str) -> None:
        with self._lock:
            self._prototypes.pop((namespace, name), None)

    def copies_of(self, namespace: str, name: str) -> dict[str, CopyMeta]:
        """The copies of `namespace/name`, by the namespace they are in."""
        found = {}
        for copy in self.store.items(StoreKind.COPIED_CSV):
            meta = body.meta(copy)
            if (
                meta.get("name") == name
                and (meta.get("labels") or {}).get(Label.COPIED_FROM) == namespace
            ):
                found[str(meta.get("namespace"))] = CopyMeta.of(copy)
        return found

    def active_namespaces(self) -> list[str]:
        return [
            str(body.meta(n).get("name"))
            for n in self.store.items(StoreKind.NAMESPACE)
            if not terminating(n)
        ]

    def snapshot(self, csv: Mapping[str, Any], only: str | None = None) -> ScopeSnapshot:
        meta = body.meta(csv)
        namespace, name = str(meta.get("namespace")), str(meta.get("name"))
        group = self.group_of(namespace)
        targets = status_namespaces(group) if group is not None else None
        tenants = tenant_namespaces(csv, targets)
        if only is None:
            namespaces = self.active_namespaces()
            copies = self.copies_of(namespace, name)
            occupied = {
                str(body.meta(c).get("namespace"))
                for c in self.store.items(StoreKind.CSV)
                if body.meta(c).get("name") == name and body.meta(c).get("namespace") != namespace
            }
            scopes = [""] if targets is not None and is_all(frozenset(targets)) else tenants
            role_namespaces: list[str] | None = None  # every namespace (leftovers included)
        else:
            namespaces = [only]
            copy = self.store.get(StoreKind.COPIED_CSV, only, name)
            copies = (
                {only: CopyMeta.of(copy)}
                if copy is not None
                and ((body.meta(copy).get("labels") or {}).get(Label.COPIED_FROM) == namespace)
                else {}
            )
            occupied = {only} if self.store.get(StoreKind.CSV, only, name) is not None else set()
            scopes = [only] if only in tenants else []
            role_namespaces = [only]
        rbac: dict[str, RbacSnapshot] = {}
        cluster_roles: dict[str, dict[str, Any]] = {}
        cluster_role_bindings: list[dict[str, Any]] = []
        if only is None or scopes:
            cluster_roles = {body.name(r): r for r in self.store.items(StoreKind.CLUSTER_ROLE)}
            cluster_role_bindings = self.store.items(StoreKind.CLUSTER_ROLE_BINDING)
        for scope in scopes:
            rbac[scope] = RbacSnapshot(
                roles={body.name(r): r for r in self.store.items(StoreKind.ROLE, scope)}
                if scope
                else {},
                role_bindings=self.store.items(StoreKind.ROLE_BINDING, scope) if scope else [],
                cluster_roles=cluster_roles,
                cluster_role_bindings=cluster_role_bindings,
            )
        if role_namespaces is None:
            roles, bindings = (
                self.store.items(StoreKind.ROLE),
                self.store.items(StoreKind.ROLE_BINDING),
            )
        else:
            roles = [r for ns in role_namespaces for r in self.store.items(StoreKind.ROLE, ns)]
            bindings = [
                b for ns in role_namespaces for b in self.store.items(StoreKind.ROLE_BINDING, ns)
            ]
        existing = existing_scope_objects(
            csv,
            cluster_roles.values() if only is None else (),
            cluster_role_bindings if only is None else (),
            roles,
            bindings,
        )
        owned = ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or []
        crds = {}
        if only is None and (csv.get("status") or {}).get("phase") == CsvPhase.SUCCEEDED:
            for entry in owned:
                found = self.store.get(StoreKind.CRD, "", str((entry or {}).get("name") or ""))
                if found is not None:
                    crds[body.name(found)] = found
        api_services = {}
        if only is None and (csv.get("status") or {}).get("phase") == CsvPhase.SUCCEEDED:
            for name in apiservice_names(dict(csv)):  # few CSVs own any: read live, not watched
                with contextlib.suppress(NotFound):
                    api_services[name] = self.gateway.get(
                        API_REGISTRATION, APISERVICE_KIND, None, name
                    )
        return ScopeSnapshot(
            csv=csv,
            group=group,
            namespaces=namespaces,
            copies=copies,
            occupied=occupied,
            copies_enabled=copied_csvs_enabled(
                self.store.get(StoreKind.OLM_CONFIG, "", OLM_CONFIG_NAME)
            ),
            protected_namespaces=self.protected_namespaces,
            prototype=self.prototype(csv),
            roles=tuple(self.store.items(StoreKind.ROLE, namespace)),
            role_bindings=tuple(self.store.items(StoreKind.ROLE_BINDING, namespace)),
            rbac=rbac,
            existing=tuple(existing),
            crds=crds,
            api_services=api_services,
            only_namespace=only,
        )

    # ----- writing ---------------------------------------------------------------------------

    def apply_changed(self, desired: Iterable[Mapping[str, Any]]) -> None:
        """Apply what is not in step with the cache; write the results through."""
        wanted = list(desired)
        live = {
            ref_of(obj): self.store.get(STORE_KIND_OF[ref_of(obj).kind], *ref_of(obj)[1:])
            for obj in wanted
        }
        for obj in changed(wanted, live):
            ref = ref_of(obj)
            try:
                self.store.upsert(STORE_KIND_OF[ref.kind], self.gateway.apply(obj))
            except NotFound:
                continue  # its namespace just went
            except GatewayError as exc:
                if not _namespace_going(exc):
                    raise

    def delete_rbac(self, refs: Iterable[ObjectRef]) -> None:
        for ref in refs:
            self.gateway.delete(RBAC_API_VERSION, ref.kind, ref.namespace or None, ref.name)
            self.store.delete(STORE_KIND_OF[ref.kind], ref.namespace, ref.name)

    def delete_copy(self, namespace: str, name: str) -> None:
        self.gateway.delete(CSV.api_version, CSV.kind.value, namespace, name)
        self.store.delete(StoreKind.COPIED_CSV, namespace, name)

    def execute(self, csv: Mapping[str, Any], plan: ScopePlan) -> bool:
        """Carry out `plan`; True when a copy was created (its uid is now in the cache)."""
        meta = body.meta(csv)
        name = str(meta.get("name"))
        failures: list[GatewayError] = []
        for namespace in plan.copies.deletes:
            self.delete_copy(namespace, name)
        # RBAC first: lifted ClusterRoles are part of the install; copies are fan-out.
        try:
            self.apply_changed(plan.desired)
            self.delete_rbac(plan.rbac.delete)
        except GatewayError as exc:
            failures.append(exc)
        created = False
        for write, outcome in zip(
            plan.copies.writes, self._write_copies(name, plan.copies.writes), strict=True
        ):
            if isinstance(outcome, GatewayError):
                failures.append(outcome)
            elif outcome:
                created = created or write.create
        if plan.copies.disabled_event is not None:
            self._say_copies_disabled(csv, *plan.copies.disabled_event)
        if plan.copies.clear_disabled_events:
            self._clear_copies_disabled(csv)
        if plan.copies.writes or plan.copies.deletes:
            self.poke_olm_config()
        for reason, message in plan.warnings:
            self.say(csv, "Warning", reason.value, message)
        if failures:
            raise failures[0]
        return created

    def _write_copies(self, name: str, writes: Sequence[CopyWrite]) -> list[bool | GatewayError]:
        """Each write's outcome, in order: True (written), False (its namespace just went) or
        the API server's refusal. Up to `COPY_WRITE_CONCURRENCY` copies are written at once;
        one copy's requests stay in order."""
        if len(writes) <= 1:
            return [self._write_copy(name, write) for write in writes]
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(COPY_WRITE_CONCURRENCY, "olm-copies")
            pool = self._pool
        return list(pool.map(lambda write: self._write_copy(name, write), writes))

    def _write_copy(self, name: str, write: CopyWrite) -> bool | GatewayError:
        try:
            for verb, payload in write.steps():
                if verb == "apply":
                    written = self.gateway.apply(payload)
                else:
                    written = self.gateway.patch_status(
                        CSV.api_version, CSV.kind.value, write.namespace, name, copy_status(payload)
                    )
                self.store.upsert(StoreKind.COPIED_CSV, copy_metadata(written))
        except NotFound:
            return False  # the namespace just went
        except GatewayError as exc:
            return False if _namespace_going(exc) else exc
        return True

    # ----- Events ----------------------------------------------------------------------------

    def say(self, csv: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """One Event per (CSV, reason, message) for the life of this process."""
        key = (str(body.meta(csv).get("uid")), reason, message)
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        self._event(csv, event_type, reason, message)

    def _event(self, csv: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        record_event(self.gateway, csv, event_type, reason, message)

    def _disabled_events(self, csv: Mapping[str, Any]) -> list[dict[str, Any]]:
        meta = body.meta(csv)
        try:
            events = self.gateway.list_path(f"/api/v1/namespaces/{meta.get('namespace')}/events")
        except NotFound:
            return []
        return [
            e
            for e in events
            if e.get("reason") == DISABLED_COPIED_CSVS_EVENT_REASON
            and (e.get("involvedObject") or {}).get("uid") == meta.get("uid")
        ]

    def _say_copies_disabled(
        self, csv: Mapping[str, Any], event_type: str, reason: str, message: str
    ) -> None:
        uid = str(body.meta(csv).get("uid"))
        known = self._disabled_event.get(uid)
        if known:
            return
        if known is None and self._disabled_events(csv):
            self._disabled_event[uid] = True
            return
        self._event(csv, event_type, reason, message)
        self._disabled_event[uid] = True

    def _clear_copies_disabled(self, csv: Mapping[str, Any]) -> None:
        uid = str(body.meta(csv).get("uid"))
        if self._disabled_event.get(uid) is False:
            return
        for event in self._disabled_events(csv):
            event_meta = body.meta(event)
            self.gateway.delete(
                "v1", "Event", str(event_meta.get("namespace")), str(event_meta.get("name"))
            )
        self._disabled_event[uid] = False

    # ----- OLMConfig -------------------------------------------------------------------------

    def poke_olm_config(self) -> None:
        """Look at the OLMConfig condition again shortly (once, however many copies moved)."""
        if self.store.get(StoreKind.OLM_CONFIG, "", OLM_CONFIG_NAME) is None:
            return
        with self._lock:
            if self._olm_config_due:
                return
            self._olm_config_due = True
        self.queue.add_after(
            (WorkKind.OLM_CONFIG, "", OLM_CONFIG_NAME), OLM_CONFIG_DEBOUNCE_SECONDS
        )

    def olm_config_running(self) -> None:
        with self._lock:
            self._olm_config_due = False
