"""The InstallPlan controller: snapshot -> `olm.installplan.decide.decide` -> gateway.

Invariants:
- A plan runs at most once. Complete and Failed are terminal; the status that ends a plan is
  written through to the store, and the uid of every plan this process ended is remembered,
  so a cached copy that still says Installing (the watch delivers older versions after our
  own write) can never run it again.
- Objects are written optimistically: a step's object that the snapshot shows absent is
  created (409 if it exists after all), one that it shows present is applied with the
  resourceVersion it was read at (409 if it changed since). A 409 means the snapshot was
  stale: the step is decided again on fresh data, never written from a stale copy.
- One status write per reconcile, only when the status changed.
- Scoped installs: when the plan's status names an `attenuatedServiceAccountRef`, every step
  but CRDs is written as that ServiceAccount (impersonation); a Forbidden keeps the plan
  Installing, explained, and it is tried again with backoff and whenever RBAC changes.
- The upgrade preview's summary (`olm-py.io/preview-summary`, olm.preview) is written once on
  a plan a Subscription made, before any of its steps runs, from the store alone (custom
  resources are not listed: `olm plan show` does that). It is informational: a failure to
  compute or write it is logged and the plan goes on as if it were not there.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import Any

from olm.api import body
from olm.api.backoff import exponential_backoff
from olm.api.conditions import utc_now
from olm.api.installplan import (
    DONE_STEP_STATUSES,
    TERMINAL_PHASES,
    InstallPlanEventReason,
    InstallPlanPhase,
    StepStatus,
)
from olm.api.kinds import KINDS, Kind
from olm.api.preview import PREVIEW_SUMMARY_ANNOTATION
from olm.apiserver.auth import Attributes, User, review
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.csv.phase import is_copy
from olm.groups.serviceaccount import query_service_account, user_of
from olm.installplan.attenuation import forbidden_message
from olm.installplan.crdsafety import versions_to_check
from olm.installplan.decide import decide
from olm.installplan.objects import alongside_refs
from olm.installplan.partial import forbidden, interrupted
from olm.installplan.policy import DEFAULT_POLICY, InstallPolicy
from olm.installplan.snapshot import Action, Plan, Snapshot, Verb
from olm.installplan.status import ATTENUATED_REF, status_patch
from olm.installplan.stepref import CRD_KIND, Ref, owner_csvs, step_manifest, step_ref
from olm.installplan.tenancy import Right, needed_rights
from olm.kube.errors import Conflict, GatewayError, NotFound, UnservedKind
from olm.kube.protocol import KubeGateway
from olm.kube.warnings import collecting
from olm.preview.plan import Snapshot as PreviewSnapshot
from olm.preview.plan import needs_summary, preview, summary_annotation

log = logging.getLogger("olm.installplan")

INSTALL_PLAN = KINDS[Kind.INSTALL_PLAN]
CSV_KIND = KINDS[Kind.CLUSTER_SERVICE_VERSION].kind.value
# Kinds the store watches (all of them, unfiltered): read from there, not from the API server.
STORE_KINDS = {
    CSV_KIND: StoreKind.CSV,
    CRD_KIND: StoreKind.CRD,
    "ServiceAccount": StoreKind.SERVICE_ACCOUNT,
    "Role": StoreKind.ROLE,
    "RoleBinding": StoreKind.ROLE_BINDING,
    "ClusterRole": StoreKind.CLUSTER_ROLE,
    "ClusterRoleBinding": StoreKind.CLUSTER_ROLE_BINDING,
}
# Approval, the CRD stage, the CSV stage and the rest: a plan needs at most four decisions.
MAX_PASSES = 5
# After a stale snapshot (409), look again after this long, doubling up to the cap.
STALE_RETRY_SECONDS, STALE_RETRY_CAP = 0.25, 30.0
# After a Forbidden of the attenuated ServiceAccount, try again after this long, doubling up to
# the cap (RBAC changes in the namespace wake the plan sooner: olm.controllers.scope).
FORBIDDEN_RETRY_SECONDS, FORBIDDEN_RETRY_CAP = 1.0, 15.0
# Remembered ended plans are pruned to those still in the store beyond this many.
FINISHED_LIMIT = 4096


class InstallPlanController:
    kind = WorkKind.INSTALL_PLAN

    def __init__(
        self,
        store: Store,
        gateway: KubeGateway,
        queue: WorkQueue,
        policy: InstallPolicy = DEFAULT_POLICY,
    ) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self.policy = policy
        self._lock = threading.Lock()
        self._finished: dict[str, str] = {}  # uid -> the terminal phase this process wrote
        self._stale: dict[str, int] = {}  # uid -> consecutive stale snapshots
        self._forbidden: dict[str, int] = {}  # uid -> consecutive Forbidden answers
        # (plan uid, step ref) -> the API server's warnings met reading that step's objects
        self._warned: dict[tuple[str, Ref], list[str]] = {}

    # ----- snapshot ----------------------------------------------------------------------------

    def snapshot(
        self,
        plan: dict[str, Any],
        written: dict[Ref, dict[str, Any]],
        answers: dict[tuple[str, Right], bool] | None = None,
    ) -> Snapshot:
        """Plain data for `decide`: the plan, and the live objects its steps name (what this
        reconcile wrote first, then the store, then the API server for kinds not cached), and
        with the tenancy opt-in the scoped ServiceAccount's access (`answers` caches it)."""
        uid = str(plan["metadata"].get("uid") or "")
        with self._lock:
            finished = uid in self._finished
        status = plan.get("status") or {}
        objects: dict[Ref, dict[str, Any] | None] = {}
        unserved: dict[Ref, str] = {}
        custom_resources: dict[tuple[str, str], list[dict[str, Any]]] = {}
        alongside: dict[tuple[str, str], bool] = {}
        if finished or status.get("phase") != InstallPlanPhase.INSTALLING:
            return Snapshot(plan, utc_now(), finished)
        for entry in status.get("plan") or []:
            manifest = step_manifest(entry) if isinstance(entry, dict) else None
            if manifest is None:
                continue
            ref = step_ref(manifest)
            kind = ref[1]
            step_done = entry.get("status") in DONE_STEP_STATUSES
            if ref in written:
                objects[ref] = written[ref]
            elif kind in STORE_KINDS:
                objects[ref] = self.store.get(STORE_KINDS[kind], ref[2], ref[3])
                if objects[ref] is None and kind == CSV_KIND and step_done:
                    # Created by an earlier pass, not in the cache yet: its uid goes into the
                    # other steps' owner references, so read it rather than guess.
                    try:
                        objects[ref] = self.gateway.get(ref[0], kind, ref[2] or None, ref[3])
                    except NotFound:
                        objects[ref] = None
            elif step_done:
                continue
            else:
                try:
                    objects[ref] = self.gateway.get(ref[0], kind, ref[2] or None, ref[3])
                except UnservedKind as exc:
                    unserved[ref] = str(exc)
                except NotFound:
                    objects[ref] = None
            if not step_done:
                # A CSV named as owner without a uid: OLM fills the uid in from the CSV of that
                # name in the namespace, whether or not the plan creates it.
                for owner_ref in owner_csvs(manifest, str(plan["metadata"]["namespace"])):
                    if owner_ref not in objects:
                        objects[owner_ref] = self.store.get(
                            StoreKind.CSV, owner_ref[2], owner_ref[3]
                        )
            live = objects.get(ref)
            if (
                kind == CRD_KIND
                and live is not None
                and not body.meta(live).get("deletionTimestamp")
                and not step_done
                and entry.get("status") != StepStatus.WAITING_FOR_API
            ):
                custom_resources.update(self._custom_resources(uid, live, manifest))
            if kind == CRD_KIND:
                for csv_ref in alongside_refs(live):
                    original = self.store.get(StoreKind.CSV, *csv_ref)
                    alongside[csv_ref] = original is not None and not is_copy(original)
        groups = tuple(self.store.items(StoreKind.OPERATOR_GROUP, plan["metadata"]["namespace"]))
        access = self._access(plan, groups, {} if answers is None else answers)
        return Snapshot(
            plan,
            utc_now(),
            finished,
            objects,
            unserved,
            custom_resources,
            groups=groups,
            policy=self.policy,
            access=access,
            alongside=alongside,
        )

    def _access(
        self,
        plan: dict[str, Any],
        groups: tuple[dict[str, Any], ...],
        answers: dict[tuple[str, Right], bool],
    ) -> dict[Right, bool] | None:
        """With the tenancy opt-in, before a scoped plan's first write: may its group's
        ServiceAccount do each thing the plan needs (SubjectAccessReviews, one per distinct
        right, each asked once per reconcile)? None: nothing was asked."""
        entries = [e for e in (plan.get("status") or {}).get("plan") or [] if isinstance(e, dict)]
        done = [e.get("status") in DONE_STEP_STATUSES for e in entries]
        if not self.policy.admin_namespaces or any(done):
            return None  # once something is written, the writes' own Forbidden answers tell
        ref, _ = query_service_account(groups)
        if ref is None:
            return None
        manifests = [step_manifest(e) or {} for e in entries]
        user = user_of(ref)
        access: dict[Right, bool] = {}
        for right in needed_rights(plan["metadata"]["namespace"], manifests, groups, done):
            if (user, right) not in answers:
                attributes = Attributes(right.verb, right.namespace, right.group, right.resource)
                body = review(User(user), replace(attributes, name=right.name))
                try:
                    answer = self.gateway.create(body).get("status") or {}
                except GatewayError as exc:  # unknown: left to the write's own answer
                    log.warning("installplan %s: access review failed: %s", ref, exc)
                    continue
                answers[(user, right)] = bool(answer.get("allowed"))
            access[right] = answers[(user, right)]
        return access

    def _custom_resources(
        self, uid: str, live: dict[str, Any], manifest: dict[str, Any]
    ) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The existing objects of every version a CRD update must keep valid."""
        spec = manifest.get("spec") or {}
        plural = (spec.get("names") or {}).get("plural")
        found: dict[tuple[str, str], list[dict[str, Any]]] = {}
        with collecting() as warned:
            for version in versions_to_check(live, manifest):
                try:
                    path = f"/apis/{spec.get('group')}/{version}/{plural}"
                    objects = self.gateway.list_path(path)
                except NotFound:
                    objects = []
                found[(manifest["metadata"]["name"], version)] = objects
        if warned:  # said with the CRD's step (AppliedWithWarnings), as OLM does
            with self._lock:
                self._warned[(uid, step_ref(manifest))] = list(warned)
        return found

    # ----- reconcile ---------------------------------------------------------------------------

    def reconcile(self, namespace: str, name: str) -> float | None:
        plan_object = self.store.get(StoreKind.INSTALL_PLAN, namespace, name)
        if plan_object is None or self._namespace_terminating(namespace):
            return None
        if needs_summary(plan_object):
            plan_object = self._annotate_summary(plan_object)
        current = plan_object
        written: dict[Ref, dict[str, Any]] = {}
        event: tuple[str, str, str] | None = None
        requeue: float | None = None
        answers: dict[tuple[str, Right], bool] = {}  # access reviews, asked once per reconcile
        for _ in range(MAX_PASSES):
            snapshot = self.snapshot(current, written, answers)
            plan = self._execute(snapshot, decide(snapshot), written)
            if plan.status is not None:
                current = {**current, "status": plan.status}
            event = plan.event or event
            requeue = plan.requeue_after
            if not plan.again:
                break
        else:
            requeue = 0.0  # still more to do (never expected): go on after the status write
        self._write_status(plan_object, current.get("status") or {}, event)
        if (current.get("status") or {}).get("phase") in TERMINAL_PHASES:
            uid = str(plan_object["metadata"].get("uid") or "")
            with self._lock:  # warnings heard for steps the finished plan never wrote
                for key in [k for k in self._warned if k[0] == uid]:
                    del self._warned[key]
        return requeue

    def _annotate_summary(self, plan: dict[str, Any]) -> dict[str, Any]:
        """Write the plan's upgrade preview summary (olm.preview), from the store only, before
        anything of the plan runs. Informational: any failure is logged, never the plan's."""
        meta = plan["metadata"]
        namespace = str(meta["namespace"])
        try:
            live: dict[Ref, dict[str, Any] | None] = {}
            for entry in (plan.get("status") or {}).get("plan") or []:
                manifest = step_manifest(entry) if isinstance(entry, dict) else None
                ref = step_ref(manifest) if manifest is not None else None
                if ref is not None and ref[1] in STORE_KINDS:
                    live[ref] = self.store.get(STORE_KINDS[ref[1]], ref[2], ref[3])
            groups = self.store.items(StoreKind.OPERATOR_GROUP, namespace)
            result = preview(
                PreviewSnapshot(
                    plan,
                    live,
                    {c["metadata"]["name"]: c for c in self.store.items(StoreKind.CSV, namespace)},
                    self.store.items(StoreKind.SUBSCRIPTION, namespace),
                    None,  # custom resources are not listed here: `olm plan show` does
                    len(groups) == 1
                    and ((groups[0].get("status") or {}).get("namespaces") or []) == [""],
                )
            )
            annotations = {PREVIEW_SUMMARY_ANNOTATION: summary_annotation(result)}
            self.gateway.patch(
                INSTALL_PLAN.api_version,
                INSTALL_PLAN.kind.value,
                namespace,
                str(meta["name"]),
                {"metadata": {"annotations": annotations}},
            )
        except Exception as exc:  # the preview must never block or fail a plan
            log.warning("installplan %s/%s: no preview summary: %s", namespace, meta["name"], exc)
            return plan
        # Write through, so the next reconcile does not preview the plan again.
        annotated = {
            **plan,
            "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}), **annotations}},
        }
        cached = self.store.get(StoreKind.INSTALL_PLAN, namespace, str(meta["name"]))
        if cached is not None and cached["metadata"].get("uid") == meta.get("uid"):
            self.store.upsert(StoreKind.INSTALL_PLAN, {**cached, "metadata": annotated["metadata"]})
        return annotated

    def _execute(self, snapshot: Snapshot, plan: Plan, written: dict[Ref, dict[str, Any]]) -> Plan:
        uid = str(snapshot.plan["metadata"].get("uid") or "")
        ref = (plan.status or {}).get(ATTENUATED_REF)
        scoped = self.gateway.impersonating(user_of(ref)) if ref else None
        for done, action in enumerate(plan.actions):
            # OLM writes CRDs with its own client, everything else as the group's SA.
            writer = scoped if scoped is not None and action.body["kind"] != CRD_KIND else None
            try:
                with collecting() as warned:
                    if action.verb == Verb.CREATE:
                        result = (writer or self.gateway).create(action.body)
                    else:
                        result = (writer or self.gateway).apply(action.body)
            except UnservedKind as exc:
                return interrupted(snapshot, plan, done, str(exc))
            except (NotFound, Conflict) as exc:
                # Decided on a stale copy (the object appeared, changed or went since it was
                # read): keep what was done, and decide again when the cache has caught up.
                with self._lock:
                    count = self._stale[uid] = self._stale.get(uid, 0) + 1
                delay = exponential_backoff(count, STALE_RETRY_SECONDS, STALE_RETRY_CAP)
                log.info("installplan %s: %s; deciding again in %.2fs", uid, exc, delay)
                stale = interrupted(snapshot, plan, done)
                return Plan(stale.actions, stale.status, requeue_after=delay)
            except GatewayError as exc:
                if exc.status == 403 and writer is not None and ref:
                    return self._forbidden_retry(snapshot, plan, done, ref, str(exc))
                return interrupted(snapshot, plan, done, str(exc))
            written[step_ref(action.body)] = result or action.body
            self._say_warnings(snapshot, action, warned)
        with self._lock:
            self._stale.pop(uid, None)
            if plan.actions:
                self._forbidden.pop(uid, None)
        return plan

    def _say_warnings(self, snapshot: Snapshot, action: Action, heard: list[str]) -> None:
        """OLM's AppliedWithWarnings Event for the warnings a step met: while its object was
        read (a CRD's custom resources of a deprecated version) or written."""
        uid = str(snapshot.plan["metadata"].get("uid") or "")
        with self._lock:
            said = [*self._warned.pop((uid, step_ref(action.body)), []), *heard]
        if not said:
            return
        entries = (snapshot.plan.get("status") or {}).get("plan") or []
        resolving = (
            entries[action.index].get("resolving", "") if action.index < len(entries) else ""
        )
        meta = body.meta(action.body)
        message = (
            f'{len(said)} warning(s) generated during installation of operator "{resolving}" '
            f'({action.body.get("kind")} "{meta.get("name")}"): {", ".join(said)}'
        )
        self._event(
            snapshot.plan, "Warning", InstallPlanEventReason.APPLIED_WITH_WARNINGS.value, message
        )

    def _forbidden_retry(
        self, snapshot: Snapshot, plan: Plan, done: int, ref: dict[str, Any], error: str
    ) -> Plan:
        uid = str(snapshot.plan["metadata"].get("uid") or "")
        with self._lock:
            count = self._forbidden[uid] = self._forbidden.get(uid, 0) + 1
        delay = exponential_backoff(count, FORBIDDEN_RETRY_SECONDS, FORBIDDEN_RETRY_CAP)
        groups = [g for g in snapshot.groups if (g.get("status") or {}).get("namespaces")]
        group_name = str(groups[0]["metadata"]["name"]) if len(groups) == 1 else ""
        message = forbidden_message(error, ref, plan.actions[done].body, group_name)
        log.info("installplan %s: %s; trying again in %.0fs", uid, message, delay)
        retry = forbidden(snapshot, plan, done, message)
        return Plan(retry.actions, retry.status, requeue_after=delay, event=retry.event)

    def _write_status(
        self, plan: dict[str, Any], status: dict[str, Any], event: tuple[str, str, str] | None
    ) -> None:
        meta = plan["metadata"]
        patch = status_patch(plan.get("status") or {}, status)
        if not patch:
            return
        # A plan without status may get its first one from whoever made it at the same time:
        # that write wins (ours is decided again on what it wrote).
        first = not (plan.get("status") or {}).get("phase")
        try:
            self.gateway.patch_status(
                INSTALL_PLAN.api_version,
                INSTALL_PLAN.kind.value,
                meta["namespace"],
                meta["name"],
                patch,
                resource_version=str(meta.get("resourceVersion") or "") if first else None,
            )
        except NotFound:
            return
        except Conflict:
            log.info(
                "installplan %s/%s got its status from its maker first",
                meta["namespace"],
                meta["name"],
            )
            return
        # Write through: until the watch brings this write, the cache must not show the old
        # status (an Installing plan that ran already would run again).
        cached = self.store.get(StoreKind.INSTALL_PLAN, meta["namespace"], meta["name"]) or plan
        if cached["metadata"].get("uid") == meta.get("uid"):
            self.store.upsert(StoreKind.INSTALL_PLAN, {**cached, "status": status})
        if status.get("phase") in TERMINAL_PHASES:
            with self._lock:
                self._finished[str(meta.get("uid") or "")] = str(status["phase"])
                if len(self._finished) > FINISHED_LIMIT:
                    alive = {
                        str(p["metadata"].get("uid"))
                        for p in self.store.items(StoreKind.INSTALL_PLAN)
                    }
                    self._finished = {u: p for u, p in self._finished.items() if u in alive}
        if event is not None:
            self._event(plan, *event)

    def _event(self, plan: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        try:
            self.gateway.event(
                {
                    **plan,
                    "apiVersion": INSTALL_PLAN.api_version,
                    "kind": INSTALL_PLAN.kind.value,
                },
                event_type,
                reason,
                message,
            )
        except GatewayError as exc:
            log.warning(
                "could not record event %s on %s: %s", reason, plan["metadata"]["name"], exc
            )

    def _namespace_terminating(self, namespace: str) -> bool:
        found = self.store.get(StoreKind.NAMESPACE, "", namespace)
        return bool(
            found
            and (
                found["metadata"].get("deletionTimestamp")
                or (found.get("status") or {}).get("phase") == "Terminating"
            )
        )
