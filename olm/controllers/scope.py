"""Global operators: what an OperatorGroup's scope means beyond the operator's own namespace
(copied CSVs, scope RBAC, per-API and per-group ClusterRoles, namespace labels, OLMConfig's
copied-CSV toggle). Snapshot -> `olm.scope` decisions -> gateway, in four small controllers:

| work key | what it makes right | woken by |
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
- Copies live in the cache as metadata only (`copy_metadata`, store kind "copiedcsv").
- Nothing is written into a terminating namespace; NotFound (a namespace that just went) is
  not an error.
"""

from __future__ import annotations

import contextlib
import datetime
import logging
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from olm.api.csv import CsvPhase
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Annotation, Label
from olm.api.scope import (
    DISABLED_COPIED_CSVS_EVENT_REASON,
    OLM_CONFIG_NAME,
)
from olm.controllers.events import record_event
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.csv.rbac import RbacSnapshot
from olm.install.apiservices import API_REGISTRATION, APISERVICE_KIND
from olm.install.apiservices import names as apiservice_names
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.scope.apiroles import (
    group_apis,
    operator_group_cluster_roles,
    operator_group_cluster_roles_to_delete,
)
from olm.scope.copies import (
    CopyMeta,
    CopyPrototype,
    copy_prototype,
    dangling_reason,
    is_copied,
)
from olm.scope.decide import (
    ScopePlan,
    ScopeSnapshot,
    changed,
    copy_metadata,
    copy_status,
    decide_scope,
    ref_of,
    tenant_namespaces,
)
from olm.scope.namespaces import (
    contains,
    is_all,
    namespace_label_patch,
    status_namespaces,
)
from olm.scope.olmconfig import OlmConfigSnapshot, copied_csvs_enabled, plan_olm_config
from olm.scope.rbac import ObjectRef, existing_scope_objects

log = logging.getLogger("olm.scope")

WorkKey = tuple[str, str, str]
SCOPE = "scope"
SCOPE_NAMESPACE = "scope-namespace"
SCOPE_GROUP = "scope-group"
OLM_CONFIG = "olmconfig"
COPIED_CSV = "copiedcsv"  # the store kind of copied CSVs (metadata only)

CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
OLM_CONFIG_INFO = KINDS[Kind.OLM_CONFIG]
RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
STORE_KIND = {
    "Role": "role",
    "RoleBinding": "rolebinding",
    "ClusterRole": "clusterrole",
    "ClusterRoleBinding": "clusterrolebinding",
}
OLM_CONFIG_DEBOUNCE_SECONDS = 1.0  # OLM waits 5 s; the condition settles after the copy writes
MISSING_CRD_RETRY_SECONDS = 5.0
RETRY_STALE_SECONDS = 0.5


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def terminating(namespace: Mapping[str, Any] | None) -> bool:
    return bool(
        namespace
        and (
            _meta(namespace).get("deletionTimestamp")
            or (namespace.get("status") or {}).get("phase") == "Terminating"
        )
    )


def _namespace_going(exc: GatewayError) -> bool:
    """The API server refuses new objects in a namespace being deleted (403)."""
    return exc.status == 403 and "being terminated" in str(exc)


def trim(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of a watched object: copies as metadata only; every other object
    without `metadata.managedFields` (nothing reads it, and it is often a third of an object:
    a thousand namespaces and their default ServiceAccounts cost megabytes less)."""
    if kind == COPIED_CSV:
        return copy_metadata(obj)
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
    return obj


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

    # ----- reading the cache -----------------------------------------------------------------

    def group_of(self, namespace: str) -> Mapping[str, Any] | None:
        groups = self.store.items("operatorgroup", namespace)
        return groups[0] if len(groups) == 1 else None

    def prototype(self, csv: Mapping[str, Any]) -> CopyPrototype:
        meta = _meta(csv)
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
        for copy in self.store.items(COPIED_CSV):
            meta = _meta(copy)
            if (
                meta.get("name") == name
                and (meta.get("labels") or {}).get(Label.COPIED_FROM) == namespace
            ):
                found[str(meta.get("namespace"))] = CopyMeta.of(copy)
        return found

    def active_namespaces(self) -> list[str]:
        return [
            str(_meta(n).get("name")) for n in self.store.items("namespace") if not terminating(n)
        ]

    def snapshot(self, csv: Mapping[str, Any], only: str | None = None) -> ScopeSnapshot:
        meta = _meta(csv)
        namespace, name = str(meta.get("namespace")), str(meta.get("name"))
        group = self.group_of(namespace)
        targets = status_namespaces(group) if group is not None else None
        tenants = tenant_namespaces(csv, targets)
        if only is None:
            namespaces = self.active_namespaces()
            copies = self.copies_of(namespace, name)
            occupied = {
                str(_meta(c).get("namespace"))
                for c in self.store.items("csv")
                if _meta(c).get("name") == name and _meta(c).get("namespace") != namespace
            }
            scopes = [""] if targets is not None and is_all(frozenset(targets)) else tenants
            role_namespaces: list[str] | None = None  # every namespace (leftovers included)
        else:
            namespaces = [only]
            copy = self.store.get(COPIED_CSV, only, name)
            copies = (
                {only: CopyMeta.of(copy)}
                if copy is not None
                and ((_meta(copy).get("labels") or {}).get(Label.COPIED_FROM) == namespace)
                else {}
            )
            occupied = {only} if self.store.get("csv", only, name) is not None else set()
            scopes = [only] if only in tenants else []
            role_namespaces = [only]
        rbac: dict[str, RbacSnapshot] = {}
        cluster_roles: dict[str, dict[str, Any]] = {}
        cluster_role_bindings: list[dict[str, Any]] = []
        if only is None or scopes:
            cluster_roles = {_name(r): r for r in self.store.items("clusterrole")}
            cluster_role_bindings = self.store.items("clusterrolebinding")
        for scope in scopes:
            rbac[scope] = RbacSnapshot(
                roles={_name(r): r for r in self.store.items("role", scope)} if scope else {},
                role_bindings=self.store.items("rolebinding", scope) if scope else [],
                cluster_roles=cluster_roles,
                cluster_role_bindings=cluster_role_bindings,
            )
        if role_namespaces is None:
            roles, bindings = self.store.items("role"), self.store.items("rolebinding")
        else:
            roles = [r for ns in role_namespaces for r in self.store.items("role", ns)]
            bindings = [b for ns in role_namespaces for b in self.store.items("rolebinding", ns)]
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
                found = self.store.get("crd", "", str((entry or {}).get("name") or ""))
                if found is not None:
                    crds[_name(found)] = found
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
            copies_enabled=copied_csvs_enabled(self.store.get(OLM_CONFIG, "", OLM_CONFIG_NAME)),
            protected_namespaces=self.protected_namespaces,
            prototype=self.prototype(csv),
            roles=tuple(self.store.items("role", namespace)),
            role_bindings=tuple(self.store.items("rolebinding", namespace)),
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
            ref_of(obj): self.store.get(STORE_KIND[ref_of(obj).kind], *ref_of(obj)[1:])
            for obj in wanted
        }
        for obj in changed(wanted, live):
            ref = ref_of(obj)
            try:
                self.store.upsert(STORE_KIND[ref.kind], self.gateway.apply(obj))
            except NotFound:
                continue  # its namespace just went
            except GatewayError as exc:
                if not _namespace_going(exc):
                    raise

    def delete_rbac(self, refs: Iterable[ObjectRef]) -> None:
        for ref in refs:
            self.gateway.delete(RBAC_API_VERSION, ref.kind, ref.namespace or None, ref.name)
            self.store.delete(STORE_KIND[ref.kind], ref.namespace, ref.name)

    def delete_copy(self, namespace: str, name: str) -> None:
        self.gateway.delete(CSV.api_version, CSV.kind.value, namespace, name)
        self.store.delete(COPIED_CSV, namespace, name)

    def execute(self, csv: Mapping[str, Any], plan: ScopePlan) -> bool:
        """Carry out `plan`; True when a copy was created (its uid is now in the cache)."""
        meta = _meta(csv)
        name = str(meta.get("name"))
        failures: list[GatewayError] = []
        for namespace in plan.copies.deletes:
            self.delete_copy(namespace, name)
        created = False
        for write in plan.copies.writes:
            try:
                for verb, body in write.steps():
                    if verb == "apply":
                        self.store.upsert(COPIED_CSV, copy_metadata(self.gateway.apply(body)))
                    else:
                        self.gateway.patch_status(
                            CSV.api_version,
                            CSV.kind.value,
                            write.namespace,
                            name,
                            copy_status(body),
                        )
                created = created or write.create
            except NotFound:
                continue  # the namespace just went
            except GatewayError as exc:
                if not _namespace_going(exc):
                    failures.append(exc)
        if plan.copies.disabled_event is not None:
            self._say_copies_disabled(csv, *plan.copies.disabled_event)
        if plan.copies.clear_disabled_events:
            self._clear_copies_disabled(csv)
        if plan.copies.writes or plan.copies.deletes:
            self.poke_olm_config()
        try:
            self.apply_changed(plan.desired)
            self.delete_rbac(plan.rbac.delete)
        except GatewayError as exc:
            failures.append(exc)
        for reason, message in plan.warnings:
            self.say(csv, "Warning", reason.value, message)
        if failures:
            raise failures[0]
        return created

    # ----- Events ----------------------------------------------------------------------------

    def say(self, csv: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        """One Event per (CSV, reason, message) for the life of this process."""
        key = (str(_meta(csv).get("uid")), reason, message)
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        self._event(csv, event_type, reason, message)

    def _event(self, csv: Mapping[str, Any], event_type: str, reason: str, message: str) -> None:
        record_event(self.gateway, csv, event_type, reason, message)

    def _disabled_events(self, csv: Mapping[str, Any]) -> list[dict[str, Any]]:
        meta = _meta(csv)
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
        uid = str(_meta(csv).get("uid"))
        known = self._disabled_event.get(uid)
        if known:
            return
        if known is None and self._disabled_events(csv):
            self._disabled_event[uid] = True
            return
        self._event(csv, event_type, reason, message)
        self._disabled_event[uid] = True

    def _clear_copies_disabled(self, csv: Mapping[str, Any]) -> None:
        uid = str(_meta(csv).get("uid"))
        if self._disabled_event.get(uid) is False:
            return
        for event in self._disabled_events(csv):
            event_meta = _meta(event)
            self.gateway.delete(
                "v1", "Event", str(event_meta.get("namespace")), str(event_meta.get("name"))
            )
        self._disabled_event[uid] = False

    # ----- OLMConfig -------------------------------------------------------------------------

    def poke_olm_config(self) -> None:
        """Look at the OLMConfig condition again shortly (once, however many copies moved)."""
        if self.store.get(OLM_CONFIG, "", OLM_CONFIG_NAME) is None:
            return
        with self._lock:
            if self._olm_config_due:
                return
            self._olm_config_due = True
        self.queue.add_after((OLM_CONFIG, "", OLM_CONFIG_NAME), OLM_CONFIG_DEBOUNCE_SECONDS)

    def olm_config_running(self) -> None:
        with self._lock:
            self._olm_config_due = False


def _name(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("name") or "")


# At most this many copies are written by one pass over a CSV; the rest come with the next
# pass, queued behind whatever else waits. A global operator in a cluster of 1,000 namespaces
# would otherwise hold a worker for minutes, and a few of them hold every worker: the
# operators' own installs then waited for all their copies (measured: 5 operators Succeeded
# after 538 s with copies on, 39 s with copies off).
COPY_WRITES_PER_PASS = 50


def _bounded(plan: ScopePlan) -> bool:
    """Cut the plan's copy writes to one pass's share; True when some were left for later."""
    if len(plan.copies.writes) <= COPY_WRITES_PER_PASS:
        return False
    plan.copies.writes = plan.copies.writes[:COPY_WRITES_PER_PASS]
    return True


def _decide_and_execute(
    state: ScopeState, csv: Mapping[str, Any], only: str | None
) -> tuple[ScopePlan, bool]:
    """Decide and execute (a bounded share of the copies); once more when copies were just
    created and copied RBAC waits for their uids. True when copies are left for another pass."""
    plan = decide_scope(state.snapshot(csv, only))
    more = _bounded(plan)
    if state.execute(csv, plan) and plan.rbac.waiting_for_copies:
        plan = decide_scope(state.snapshot(csv, only))
        more = _bounded(plan)
        state.execute(csv, plan)
    return plan, more


class ScopeController:
    """("scope", namespace, csv): one original CSV across its group's scope."""

    kind = SCOPE

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        state = self.state
        csv = state.store.get("csv", namespace, name)
        if csv is None or _meta(csv).get("deletionTimestamp"):
            # Its copies go with it (OLM: once it is gone); copied Roles follow their copy
            # (ownerReference), lifted ClusterRoles go with the csv-cleanup finalizer.
            for copy_namespace in sorted(state.copies_of(namespace, name)):
                state.delete_copy(copy_namespace, name)
            if csv is None:
                state.forget(namespace, name)
            return None
        if is_copied(csv):
            return None
        plan, more = _decide_and_execute(state, csv, None)
        if more:
            return 0.0  # the next share of copies, behind the keys already waiting
        if plan.api_roles.missing:
            log.info(
                "%s/%s: per-API ClusterRoles wait: %s", namespace, name, plan.api_roles.missing
            )
            return MISSING_CRD_RETRY_SECONDS
        return None


class ScopeNamespaceController:
    """("scope-namespace", "", namespace): one namespace's labels, copies and copied RBAC."""

    kind = SCOPE_NAMESPACE

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        target = name
        state, store = self.state, self.state.store
        found = store.get("namespace", "", target)
        if found is None or terminating(found):
            return None
        groups = store.items("operatorgroup")
        patch = namespace_label_patch(target, _meta(found).get("labels") or {}, groups)
        if patch is not None:
            try:
                state.gateway.patch(
                    "v1", "Namespace", None, target, {"metadata": {"labels": patch}}
                )
            except NotFound:
                return None
        deleted: set[str] = set()
        for group in groups:
            group_ns = str(_meta(group).get("namespace"))
            targets = status_namespaces(group)
            if targets is None or group_ns == target or not contains(frozenset(targets), target):
                continue
            if len(store.keys("operatorgroup", group_ns)) != 1:
                continue
            for csv in store.items("csv", group_ns):
                if is_copied(csv) or _meta(csv).get("deletionTimestamp"):
                    continue
                plan, _ = _decide_and_execute(state, csv, target)
                if target in plan.copies.deletes:
                    deleted.add(_name(csv))
        for copy in store.items(COPIED_CSV, target):
            copy_meta = CopyMeta.of(copy)
            if copy_meta.name in deleted:
                continue
            origin = copy_meta.annotations.get(Annotation.OPERATOR_NAMESPACE)
            parent = store.get("csv", origin, copy_meta.name) if origin else None
            if dangling_reason(copy_meta, parent):
                state.delete_copy(target, copy_meta.name)
                state.poke_olm_config()
        return None


class ScopeGroupController:
    """("scope-group", namespace, group): the group's admin/edit/view aggregation roles."""

    kind = SCOPE_GROUP

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        state, store = self.state, self.state.store
        group = store.get("operatorgroup", namespace, name)
        if group is None or _meta(group).get("deletionTimestamp"):
            leftovers = operator_group_cluster_roles_to_delete(
                namespace, name, store.items("clusterrole")
            )
            state.delete_rbac(ObjectRef("ClusterRole", "", role) for role in leftovers)
            return None
        if terminating(store.get("namespace", "", namespace)):
            return None
        apis = group_apis(group, store.items("csv", namespace))
        state.apply_changed(operator_group_cluster_roles(group, apis))
        return None


class OlmConfigController:
    """("olmconfig", "", "cluster"): the DisabledCopiedCSVs condition, and a nudge for every
    AllNamespaces CSV whose copies are not as the toggle wants."""

    kind = OLM_CONFIG

    def __init__(self, state: ScopeState) -> None:
        self.state = state

    def reconcile(self, namespace: str, name: str) -> float | None:
        state, store = self.state, self.state.store
        if name != OLM_CONFIG_NAME:
            return None
        state.olm_config_running()
        config = store.get(OLM_CONFIG, "", name)
        if config is None:
            return None
        copies: dict[tuple[str, str], set[str]] = {}
        for copy in store.items(COPIED_CSV):
            meta = _meta(copy)
            origin = (meta.get("labels") or {}).get(Label.COPIED_FROM)
            copies.setdefault((str(origin), str(meta.get("name"))), set()).add(
                str(meta.get("namespace"))
            )
        global_csvs = {}
        for group in store.items("operatorgroup"):
            group_ns = str(_meta(group).get("namespace"))
            if status_namespaces(group) != ("",) or len(store.keys("operatorgroup", group_ns)) != 1:
                continue
            for csv in store.items("csv", group_ns):
                if is_copied(csv) or _meta(csv).get("deletionTimestamp"):
                    continue
                key = (group_ns, _name(csv))
                global_csvs[key] = frozenset(copies.get(key, ()))
        active = sum(
            1
            for n in store.items("namespace")
            if not terminating(n) and (n.get("status") or {}).get("phase", "Active") == "Active"
        )
        plan = plan_olm_config(
            config,
            OlmConfigSnapshot(
                enabled=copied_csvs_enabled(config),
                active_namespaces=active,
                protected_namespaces=state.protected_namespaces,
                global_csvs=global_csvs,
                now=datetime.datetime.now(datetime.UTC),
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
                    resource_version=_meta(config).get("resourceVersion"),
                )
            except Conflict:
                return RETRY_STALE_SECONDS
            except NotFound:
                return None
        for csv_namespace, csv_name in plan.wake_csvs:
            state.queue.add((SCOPE, csv_namespace, csv_name))
        return None


def controllers(
    store: Store,
    gateway: KubeGateway,
    queue: WorkQueue,
    protected_namespaces: frozenset[str] = frozenset(),
) -> list[ScopeController | ScopeNamespaceController | ScopeGroupController | OlmConfigController]:
    """The four scope controllers over one shared state (what `olm run` registers)."""
    state = ScopeState(store, gateway, queue, protected_namespaces)
    return [
        ScopeController(state),
        ScopeNamespaceController(state),
        ScopeGroupController(state),
        OlmConfigController(state),
    ]
