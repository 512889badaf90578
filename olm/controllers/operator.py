"""Operator objects and component labels (docs/operators.md): snapshot -> `olm.operator`
decisions -> gateway, in two controllers (their wake rules: olm.controllers.wake.operator):

| work key | what it makes right | woken by |
| --- | --- | --- |
| ("adoption", "", ns) | the `operators.coreos.com/<pkg>.<ns>` labels of the namespace's Subscriptions, their installed CSVs and latest InstallPlans, and of everything those CSVs own (`olm.operator.adoption`) | a Subscription, CSV or InstallPlan there; a new or relabelled object owned by one of its CSVs; a CRD one of them owns |
| ("operator", "", name) | the Operator object `name`: created while a component carries its key, `status.components` (`olm.operator.status`) | the Operator; any change of an object that carries (or carried) an `operators.coreos.com/*` key |

Invariants:
- Labels are added with a JSON merge patch that names only them, and only where missing (the
  adoption decision); never by server-side apply, which under olm-py's one field manager
  would release every field olm-py applied to that object before (a CSV's finalizer and
  annotations, a Deployment's spec). Writes go through to the store.
- Nothing here deletes anything: not an Operator, not a component.
- A name or key the API server would refuse is not written; it is logged once per object (and
  again only if the reason changes, or after it was fixed and broke again), never as a failing
  reconcile that repeats.
- Level-triggered: a second pass over the store the first pass's writes produce writes nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from olm.api.body import labels, meta, name
from olm.api.kinds import KINDS, Kind
from olm.api.operator import COMPONENT_KINDS, ComponentKind
from olm.controllers.queue import WorkKind, WorkQueue
from olm.controllers.store import STORE_KIND_OF, Store, StoreKind
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.protocol import KubeGateway
from olm.kube.resources import register_resource
from olm.operator.adoption import AdoptionSnapshot, Candidate, LabelWrite, decide_adoption
from olm.operator.names import component_label_key, operator_names
from olm.operator.objects import may_belong_to_namespace, owned_crd_names
from olm.operator.status import Component, decide_operator

log = logging.getLogger("olm.operator")

OPERATOR_INFO = KINDS[Kind.OPERATOR]
RETRY_SOON = 0.5

# The store kind each component kind is cached under (olm.controllers.watch.WATCHED).
STORE_KIND: dict[str, StoreKind] = {c.kind: STORE_KIND_OF[c.kind] for c in COMPONENT_KINDS}
COMPONENT_OF_STORE: dict[StoreKind, ComponentKind] = {
    STORE_KIND[c.kind]: c for c in COMPONENT_KINDS
}
# Store kinds kept as metadata only.
METADATA_ONLY = frozenset({StoreKind.SECRET, StoreKind.CONFIG_MAP})

for _component in COMPONENT_KINDS:
    register_resource(
        _component.api_version, _component.kind, _component.plural, _component.namespaced
    )


# What is kept of a Secret's or ConfigMap's metadata: not its annotations, where `kubectl
# apply` leaves a copy of the whole object (data included).
KEPT_METADATA = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",  # the store drops what a namespace that ended left (olm.controllers.store)
    "labels",
    "ownerReferences",
)


def trim(kind: StoreKind, obj: dict[str, Any]) -> dict[str, Any]:
    """What the store keeps of the kinds watched only for these controllers: Secrets and
    ConfigMaps as identity, labels and owners only (their data is never held, so never
    logged)."""
    if kind not in METADATA_ONLY:
        return obj
    kept = {k: v for k, v in meta(obj).items() if k in KEPT_METADATA}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": kept}


class OperatorState:
    """What both controllers share: the cache, the gateway, the queue, and what was said."""

    def __init__(self, store: Store, gateway: KubeGateway, queue: WorkQueue) -> None:
        self.store = store
        self.gateway = gateway
        self.queue = queue
        self._said: dict[str, str] = {}
        self._lock = threading.Lock()

    def say(self, subject: str, message: str) -> None:
        """Log `message` about `subject` once (again only when it changes)."""
        with self._lock:
            if self._said.get(subject) == message:
                return
            self._said[subject] = message
        log.warning("%s: %s", subject, message)

    def settled(self, subject: str) -> None:
        with self._lock:
            self._said.pop(subject, None)

    def components(self, kinds: Iterable[ComponentKind] = COMPONENT_KINDS) -> Iterable[Component]:
        for kind in kinds:
            for obj in self.store.items(STORE_KIND[kind.kind]):
                yield Component(kind, obj)


class AdoptionController:
    kind = WorkKind.ADOPTION

    def __init__(self, state: OperatorState) -> None:
        self.state = state

    def snapshot(self, space: str) -> AdoptionSnapshot:
        store = self.state.store
        csvs = store.items(StoreKind.CSV, space)
        others: list[Candidate] = []
        if csvs:
            crds = {crd for csv in csvs for crd in owned_crd_names(csv)}
            for component in self.state.components():
                obj = component.obj
                if may_belong_to_namespace(obj, space) or (
                    component.kind.kind == "CustomResourceDefinition" and name(obj) in crds
                ):
                    others.append(Candidate(component.kind, obj))
        return AdoptionSnapshot(
            namespace=space,
            subscriptions=sorted(store.items(StoreKind.SUBSCRIPTION, space), key=name),
            csvs=sorted(csvs, key=name),
            plans=sorted(store.items(StoreKind.INSTALL_PLAN, space), key=name),
            others=others,
        )

    def reconcile(self, namespace_: str, space: str) -> float | None:
        plan = decide_adoption(self.snapshot(space))
        problems = {p.subject for p in plan.problems}
        for problem in plan.problems:
            self.state.say(problem.subject, problem.message)
        for subscription in self.state.store.items(StoreKind.SUBSCRIPTION, space):
            subject = f"Subscription {space}/{name(subscription)}"
            if subject not in problems:
                self.state.settled(subject)
        failure: GatewayError | None = None
        for write in plan.writes:
            try:
                self._write(write)
            except NotFound:
                continue
            except GatewayError as exc:
                if exc.status in (400, 403, 422):  # refused: said once, not retried
                    self.state.say(write.subject, f"could not change its labels: {exc}")
                    continue
                failure = exc  # the others are still written; the worker retries with backoff
        if failure is not None:
            raise failure
        return None

    def _write(self, write: LabelWrite) -> None:
        kind = write.kind
        self.state.gateway.patch(
            kind.api_version, kind.kind, write.namespace or None, write.name, write.patch()
        )
        store_kind = STORE_KIND[kind.kind]
        current = self.state.store.get(store_kind, write.namespace, write.name)
        if current is not None:
            self.state.store.upsert(store_kind, write.applied_to(current))
        self.state.settled(write.subject)
        for key in (*write.add, *write.remove):
            self.state.queue.add((WorkKind.OPERATOR, "", operator_names({key: ""})[0]))


class OperatorController:
    kind = WorkKind.OPERATOR

    def __init__(self, state: OperatorState) -> None:
        self.state = state

    def reconcile(self, namespace_: str, operator: str) -> float | None:
        store = self.state.store
        key = component_label_key(operator)
        components = [
            c for c in self.state.components() if key is not None and key in labels(c.obj)
        ]
        existing = store.get(StoreKind.OPERATOR, "", operator)
        plan = decide_operator(operator, existing, components)
        subject = f"Operator {operator}"
        if plan.problem is not None:
            self.state.say(subject, plan.problem)
            return None
        self.state.settled(subject)
        version = plan.resource_version
        if plan.create is not None:
            try:
                created = self.state.gateway.create(plan.create)
            except Conflict:
                return RETRY_SOON  # it exists after all: decide again once it is cached
            store.upsert(StoreKind.OPERATOR, created)
            existing = created
            version = str(meta(created).get("resourceVersion") or "")
            log.info("created Operator %s", operator)
        if plan.status is None or existing is None:
            return None
        try:
            self.state.gateway.patch_status(
                OPERATOR_INFO.api_version,
                OPERATOR_INFO.kind.value,
                None,
                operator,
                plan.status,
                resource_version=version or None,
            )
        except NotFound:
            return None  # deleted meanwhile: its DELETED event brings this key back
        except Conflict:
            return RETRY_SOON  # decided on a stale copy
        components_status = {k: v for k, v in plan.status["components"].items() if v is not None}
        current = store.get(StoreKind.OPERATOR, "", operator) or existing
        store.upsert(StoreKind.OPERATOR, {**current, "status": {"components": components_status}})
        return None


def controllers(store: Store, gateway: KubeGateway, queue: WorkQueue) -> list[Any]:
    state = OperatorState(store, gateway, queue)
    return [AdoptionController(state), OperatorController(state)]
