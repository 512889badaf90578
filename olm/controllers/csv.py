"""The ClusterServiceVersion controller: snapshot (`olm.controllers.csvworld`) ->
`olm.csv.phase.decide` -> gateway. It only carries the plan out: what a refused write means
for the CSV is decided in `olm.csv.refusals`.

Invariants:
- Level-triggered and idempotent: the plan is computed from the current snapshot only, and
  running it twice changes nothing the second time.
- Status writes carry the resourceVersion the decision was based on, so a decision made on a
  stale snapshot is refused (409) and retried instead of overwriting newer status.
- The only metadata olm-py writes on a CSV (its finalizer and the three olm.* group
  annotations) is written together, by server-side apply, so neither removes the other.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import logging
from typing import Any

from olm.api.conditions import utc_now
from olm.api.kinds import KINDS, Kind
from olm.api.labels import CSV_CLEANUP_FINALIZER, Annotation, Label
from olm.controllers.csvworld import read_world
from olm.controllers.events import record_event, refused_as_terminating
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.csv.operatorcondition import (
    OPERATOR_CONDITION,
    condition_role,
    condition_role_binding,
    needs_apply,
    operator_condition,
    synced_conditions,
)
from olm.csv.phase import Plan, World, decide, is_copy
from olm.csv.refusals import annotations_refused, deployment_refused, resource_refused
from olm.groups.serviceaccount import attenuated_user
from olm.install.apiservices import (
    API_REGISTRATION,
    APISERVICE_KIND,
    legacy_removable,
    legacy_resources,
    orphaned_apiservices,
)
from olm.install.certresources import (
    KUBE_SYSTEM,
    cert_deployments,
    has_cert_resources,
    owned_by,
    service_name,
)
from olm.install.conversion import conversion_cleanup, is_conversion_patch
from olm.install.webhooks import ADMISSION_API, CONFIG_KINDS
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.kube.resources import register_resource
from olm.metrics.counters import COUNTERS

log = logging.getLogger("olm.csv")

CSV = KINDS[Kind.CLUSTER_SERVICE_VERSION]
OPERATOR_GROUP = KINDS[Kind.OPERATOR_GROUP]
OLM_ANNOTATIONS = (
    Annotation.OPERATOR_GROUP,
    Annotation.OPERATOR_NAMESPACE,
    Annotation.TARGET_NAMESPACES,
)


# Kinds the webhook install writes (olm.install.render), known without discovery.
for _api, _kind, _plural, _namespaced in (
    ("v1", "Secret", "secrets", True),
    ("v1", "Service", "services", True),
    (ADMISSION_API, "ValidatingWebhookConfiguration", "validatingwebhookconfigurations", False),
    (ADMISSION_API, "MutatingWebhookConfiguration", "mutatingwebhookconfigurations", False),
    (API_REGISTRATION, APISERVICE_KIND, "apiservices", False),
):
    register_resource(_api, _kind, _plural, _namespaced)


def now() -> datetime.datetime:
    """The controller's clock (olm.api's), by a name of this module's own so tests can set it."""
    return utc_now()


class CsvController:
    kind = WorkKind.CSV

    def __init__(self, store: Store, gateway: KubeGateway, queue: WorkQueue) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue

    # ----- snapshot ----------------------------------------------------------------------------

    def world(self, csv: dict[str, Any]) -> World:
        return read_world(self.store, self.gateway, csv, now())

    # ----- reconcile ---------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        csv = self.store.get(StoreKind.CSV, namespace, name)
        if csv is None:  # gone: so are the APIServices still labelled as its own (OLM)
            for orphan in orphaned_apiservices(
                namespace, name, self.store.items(StoreKind.CSV_API_SERVICE)
            ):
                log.info("deleting APIService %s: its CSV %s/%s is gone", orphan, namespace, name)
                with contextlib.suppress(NotFound):
                    self.gateway.delete(API_REGISTRATION, APISERVICE_KIND, None, orphan)
            return None
        meta = csv["metadata"]
        if meta.get("deletionTimestamp"):
            self._cleanup(csv)
            return None
        if is_copy(csv) or self._namespace_terminating(namespace):
            return None  # nothing may be created in a terminating namespace; only cleanup runs
        if CSV_CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            self._apply_metadata(csv, finalizer=True)
            return None
        try:
            self._ensure_operator_condition(csv)
            plan = decide(self.world(csv))
            return self._execute(csv, plan)
        except GatewayError as exc:
            if not refused_as_terminating(exc):
                raise
            log.debug("csv %s/%s: namespace is being deleted: %s", namespace, name, exc)
            return None

    def _execute(self, csv: dict[str, Any], plan: Plan) -> float | None:
        meta = csv["metadata"]
        if plan.annotations is not None:
            try:
                self._apply_metadata(csv, finalizer=True, annotations=plan.annotations)
                return None
            except (NotFound, Conflict):
                raise  # not a refusal of the annotations: the worker retries
            except GatewayError as exc:
                if refused_as_terminating(exc):
                    raise
                plan = annotations_refused(self.world(csv), str(exc))
        if plan.group_provided_apis is not None:
            self._write_provided_apis(meta["namespace"], plan.group_provided_apis)
            return plan.requeue_after
        if plan.removes_deployments:
            for orphan in plan.delete_deployments:
                self.gateway.delete("apps/v1", "Deployment", meta["namespace"], orphan)
        if plan.resources or plan.delete_resources:
            plan = self._write_resources(csv, plan)
            if any(obj.get("kind") == APISERVICE_KIND for obj in plan.resources):
                self._delete_legacy(csv)
        if plan.apply:
            applying: int | None = None  # which Deployment was refused, if one was
            writer = self._writer(meta["namespace"])
            try:
                for index, deployment in enumerate(plan.apply):
                    applying = index
                    # Write through: the next decision must judge what we applied, not a
                    # cached copy from before it (which would look like drift).
                    self.store.upsert(StoreKind.DEPLOYMENT, writer.apply(deployment))
                applying = None
                for orphan in plan.delete_deployments:
                    writer.delete(
                        "apps/v1", "Deployment", meta["namespace"], orphan, propagation="Foreground"
                    )
            except (NotFound, Conflict):
                raise  # the namespace is going, or a race: the worker retries
            except GatewayError as exc:
                if refused_as_terminating(exc):
                    raise
                log.debug("installing %s/%s: %s", meta["namespace"], meta["name"], exc)
                refused = plan.apply[applying] if applying is not None else None
                plan = deployment_refused(self.world(csv), applying, refused, str(exc), exc.status)
        if plan.status is not None:
            try:
                self.gateway.patch_status(
                    CSV.api_version,
                    CSV.kind.value,
                    meta["namespace"],
                    meta["name"],
                    plan.status,
                    resource_version=meta.get("resourceVersion"),
                )
            except Conflict:
                return 0.5  # decided on a stale snapshot; the watch brings the new one
            except NotFound:
                return None
            if plan.starts_replacing(csv):
                COUNTERS.csv_upgraded()  # OLM's csv_upgrade_count
            if plan.event:
                self._event(csv, *plan.event)
            for warning_reason, warning in plan.warnings:
                self._event(csv, "Warning", warning_reason, warning)
        if plan.delete_csv:
            self.gateway.delete(CSV.api_version, CSV.kind.value, meta["namespace"], meta["name"])
        for other in plan.wake:
            self.queue.add((self.kind, meta["namespace"], other))
        return plan.requeue_after

    def _write_resources(self, csv: dict[str, Any], plan: Plan) -> Plan:
        """Apply the webhooks' objects (before the Deployments that mount their Secret) and
        delete configurations no longer declared. A refusal fails the install as OLM does."""
        meta = csv["metadata"]
        writer = self._writer(meta["namespace"])
        current: dict[str, Any] | None = None
        try:
            for obj in plan.resources:
                current = obj
                if is_conversion_patch(obj):
                    self._write_conversion(writer, obj)
                    continue
                applied = writer.apply(obj)
                if obj["kind"] == "CustomResourceDefinition":
                    self.store.upsert(StoreKind.CRD, applied)  # write through, as for Deployments
            current = None
            for api_version, kind, namespace, name in plan.delete_resources:
                writer.delete(api_version, kind, namespace, name)
        except (NotFound, Conflict):
            raise
        except GatewayError as exc:
            if refused_as_terminating(exc):
                raise
            log.debug("installing %s/%s: %s", meta["namespace"], meta["name"], exc)
            return resource_refused(self.world(csv), current, str(exc), exc.status)
        return plan

    def _delete_legacy(self, csv: dict[str, Any]) -> None:
        """After its APIServices are written: the objects older OLM releases named after them
        and labelled as this CSV's are deleted, as OLM v0.38 does (olm.install.apiservices)."""
        for api_version, kind, namespace, name in legacy_resources(csv):
            try:
                found = self.gateway.get(api_version, kind, namespace, name)
                if legacy_removable(found, csv):
                    log.info("deleting legacy %s %s/%s", kind, namespace, name)
                    self.gateway.delete(api_version, kind, namespace, name)
            except NotFound:
                continue
            except GatewayError as exc:  # no right to read or delete it: it stays
                log.debug("legacy %s %s/%s not deleted: %s", kind, namespace, name, exc)

    def _event(self, csv: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        record_event(self.gateway, csv, event_type, reason, message)

    def _write_provided_apis(self, namespace: str, provided: str) -> None:
        """OLM's AddAPIs/RemoveAPIs: the group's olm.providedAPIs annotation."""
        groups = self.store.items(StoreKind.OPERATOR_GROUP, namespace)
        if len(groups) != 1:
            return
        meta = groups[0]["metadata"]
        with contextlib.suppress(NotFound):
            applied = self.gateway.apply(
                {
                    "apiVersion": OPERATOR_GROUP.api_version,
                    "kind": OPERATOR_GROUP.kind.value,
                    "metadata": {
                        "name": meta["name"],
                        "namespace": namespace,
                        "annotations": {Annotation.PROVIDED_APIS.value: provided},
                    },
                }
            )
            self.store.upsert(StoreKind.OPERATOR_GROUP, applied)

    def _write_conversion(self, writer: KubeGateway, body: dict[str, Any]) -> None:
        """`spec.conversion` of a CRD, by merge patch: the InstallPlan applied the rest of the
        CRD under the same field manager, so an apply of this part alone would take the rest
        away (the API server then refuses a CRD with no group, names or versions)."""
        name = body["metadata"]["name"]
        conversion = body["spec"]["conversion"]
        writer.patch(
            body["apiVersion"], body["kind"], None, name, {"spec": {"conversion": conversion}}
        )
        cached = self.store.get(StoreKind.CRD, "", name)
        if cached is not None:  # write through, as for Deployments
            updated = copy.deepcopy(cached)
            updated.setdefault("spec", {})["conversion"] = conversion
            self.store.upsert(StoreKind.CRD, updated)

    def _writer(self, namespace: str) -> KubeGateway:
        """Scoped installs (OLM): the group's ServiceAccount writes the operator's Deployments."""
        user = attenuated_user(self.store.items(StoreKind.OPERATOR_GROUP, namespace))
        return self.gateway.impersonating(user) if user else self.gateway

    # ----- metadata we own on the CSV ---------------------------------------------------------------

    def _apply_metadata(
        self, csv: dict[str, Any], *, finalizer: bool, annotations: dict[str, str] | None = None
    ) -> None:
        meta = csv["metadata"]
        current = meta.get("annotations") or {}
        ours = (
            annotations
            if annotations is not None
            else {k.value: current[k] for k in OLM_ANNOTATIONS if k in current}
        )
        body = {
            "apiVersion": CSV.api_version,
            "kind": CSV.kind.value,
            "metadata": {
                "name": meta["name"],
                "namespace": meta["namespace"],
                "finalizers": [CSV_CLEANUP_FINALIZER] if finalizer else [],
                "annotations": {str(k): v for k, v in ours.items()},
            },
        }
        with contextlib.suppress(NotFound):
            self.gateway.apply(body)

    def _namespace_terminating(self, namespace: str) -> bool:
        found = self.store.get(StoreKind.NAMESPACE, "", namespace)
        return bool(
            found
            and (
                found["metadata"].get("deletionTimestamp")
                or (found.get("status") or {}).get("phase") == "Terminating"
            )
        )

    def _cleanup(self, csv: dict[str, Any]) -> None:
        """The csv-cleanup finalizer: remove cluster-scoped RBAC labelled as this CSV's."""
        meta = csv["metadata"]
        if CSV_CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
            return
        owned = {
            Label.OWNER: meta["name"],
            Label.OWNER_NAMESPACE: meta["namespace"],
            Label.OWNER_KIND: CSV.kind.value,
        }
        for kind, store_kind in (
            ("ClusterRoleBinding", StoreKind.CLUSTER_ROLE_BINDING),
            ("ClusterRole", StoreKind.CLUSTER_ROLE),
        ):
            for obj in self.store.items(store_kind):
                labels = obj["metadata"].get("labels") or {}
                if all(labels.get(k) == v for k, v in owned.items()):
                    self.gateway.delete(
                        "rbac.authorization.k8s.io/v1", kind, None, obj["metadata"]["name"]
                    )
        if has_cert_resources(csv):
            self._cleanup_webhooks(csv, owned)
        # A JSON patch, not server-side apply: the API server refuses apply requests in a
        # terminating namespace, and the namespace cannot finish until this finalizer is gone.
        # The test op makes sure exactly our entry is removed.
        index = meta["finalizers"].index(CSV_CLEANUP_FINALIZER)
        patch = [
            {"op": "test", "path": f"/metadata/finalizers/{index}", "value": CSV_CLEANUP_FINALIZER},
            {"op": "remove", "path": f"/metadata/finalizers/{index}"},
        ]
        try:
            self.gateway.patch(
                CSV.api_version,
                CSV.kind.value,
                meta["namespace"],
                meta["name"],
                patch,
                content_type="application/json-patch+json",
            )
        except (NotFound, Conflict):
            pass
        except GatewayError as exc:
            if exc.status != 422:  # 422: the list changed under us; the next event retries
                raise

    def _cleanup_webhooks(self, csv: dict[str, Any], owned: dict[Label, str]) -> None:
        """Webhook configurations are cluster-scoped, so OLM owns them by label and deletes
        them here; so is the kube-system auth-reader RoleBinding (which OLM leaves behind).
        Without a replacement, CRD conversion goes back to None (OLM), so CRs stay readable."""
        meta = csv["metadata"]
        selector = ",".join(f"{k.value}={v}" for k, v in owned.items())
        for kind in CONFIG_KINDS.values():
            for name in self.gateway.list_names(ADMISSION_API, kind, None, selector):
                self.gateway.delete(ADMISSION_API, kind, None, name)
        # Owned APIServices too (a replacement has relabelled them as its own by now).
        for name in self.gateway.list_names(API_REGISTRATION, APISERVICE_KIND, None, selector):
            with contextlib.suppress(NotFound):
                self.gateway.delete(API_REGISTRATION, APISERVICE_KIND, None, name)
        for deployment in cert_deployments(csv):
            name = f"{service_name(deployment)}-auth-reader"
            try:
                binding = self.gateway.get(
                    "rbac.authorization.k8s.io/v1", "RoleBinding", KUBE_SYSTEM, name
                )
            except NotFound:
                continue
            if owned_by(binding, csv):
                self.gateway.delete(
                    "rbac.authorization.k8s.io/v1", "RoleBinding", KUBE_SYSTEM, name
                )
        replaced = any(
            (other.get("spec") or {}).get("replaces") == meta["name"]
            for other in self.store.items(StoreKind.CSV, meta["namespace"])
        )
        if replaced:
            return  # the replacement serves the conversions now
        crds = {c["metadata"]["name"]: c for c in self.store.items(StoreKind.CRD)}
        for crd_name, patch in conversion_cleanup(csv, crds):
            with contextlib.suppress(NotFound):
                self.gateway.patch(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", None, crd_name, patch
                )

    def _ensure_operator_condition(self, csv: dict[str, Any]) -> None:
        """The CSV's OperatorCondition, then (once it has a uid) the Role and RoleBinding that
        let the operator's ServiceAccounts read and update it (olm.csv.operatorcondition)."""
        meta = csv["metadata"]
        desired = operator_condition(csv)
        existing = self.store.get(StoreKind.OPERATOR_CONDITION, meta["namespace"], meta["name"])
        if needs_apply(desired, existing):
            self.gateway.apply(desired)
        if existing is None or not existing["metadata"].get("uid"):
            return  # its watch event wakes this CSV again
        synced = synced_conditions(existing)
        if synced is not None:  # what the operator reports, copied to status as OLM does
            with contextlib.suppress(NotFound, Conflict):  # the watch brings the new one
                self.gateway.patch_status(
                    OPERATOR_CONDITION.api_version,
                    OPERATOR_CONDITION.kind.value,
                    meta["namespace"],
                    meta["name"],
                    {"conditions": synced},
                    resource_version=existing["metadata"].get("resourceVersion"),
                )
        for kind, obj in (
            (StoreKind.ROLE, condition_role(existing)),
            (StoreKind.ROLE_BINDING, condition_role_binding(existing)),
        ):
            if needs_apply(obj, self.store.get(kind, meta["namespace"], meta["name"])):
                self.gateway.apply(obj)
