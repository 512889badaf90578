"""Plain-data InstallPlans and cluster objects for the InstallPlan tests (samples catalog)."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.controllers.installplan import STORE_KINDS, InstallPlanController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.installplan.decide import (
    Snapshot,
)
from olm.installplan.stepref import step_ref
from olm.installplan.steps import plan_bundle
from olm.kube.fake import FakeGateway

NOW = datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=datetime.UTC)
NS = "team-a"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
CRD_NAME = "memcacheds.cache.example.com"
SA = "memcached-operator"
SUBSCRIPTION_OWNER = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "Subscription",
    "name": "memcached",
    "uid": "uid-sub",
    "controller": False,
    "blockOwnerDeletion": False,
}


def bundle_objects(name: str) -> list[dict[str, Any]]:
    return load(CATALOG.parent).packages["memcached-operator"].bundles[name].objects


def entries(csv: str = OLD, statuses: list[str] | None = None) -> list[dict[str, Any]]:
    """status.plan for one samples bundle: CSV, CRD, ServiceAccount, Role, RoleBinding."""
    replaces = OLD if csv == NEW else ""
    steps = plan_bundle(bundle_objects(csv), NS, ("samples", "olm"), replaces)
    statuses = statuses or ["Unknown"] * len(steps)
    return [step.status_entry(status) for step, status in zip(steps, statuses, strict=True)]


def manifest(entry: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(entry["resource"]["manifest"])
    return loaded


def install_plan(
    phase: str | None = "Installing",
    plan: list[dict[str, Any]] | None = None,
    *,
    name: str = "install-abc",
    approved: bool = True,
    owned: bool = True,
    **status: Any,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "10",
            **({"ownerReferences": [SUBSCRIPTION_OWNER]} if owned else {}),
        },
        "spec": {
            "clusterServiceVersionNames": [OLD],
            "approval": "Automatic" if approved else "Manual",
            "approved": approved,
            "generation": 1,
        },
    }
    if phase is not None:
        body["status"] = {
            "phase": phase,
            "catalogSources": ["samples"],
            "plan": plan if plan is not None else entries(),
            "conditions": [],
            **status,
        }
    return body


def live(obj: dict[str, Any], uid: str = "", rv: str = "5", **meta: Any) -> dict[str, Any]:
    """`obj` as the API server would hold it (a plan labels what it writes, CRDs aside)."""
    body = copy.deepcopy(obj)
    if body.get("kind") not in ("CustomResourceDefinition", "ClusterServiceVersion"):
        labels = body["metadata"].get("labels") or {}
        body["metadata"]["labels"] = {**labels, "olm.managed": "true"}
    body["metadata"].update(
        uid=uid or f"uid-{body['metadata']['name']}", resourceVersion=rv, **meta
    )
    return body


def established(crd: dict[str, Any], stored: list[str] | None = None) -> dict[str, Any]:
    body = live(crd)
    body["status"] = {
        "conditions": [
            {"type": "Established", "status": "True"},
            {"type": "NamesAccepted", "status": "True"},
        ],
        "storedVersions": stored or [v["name"] for v in body["spec"]["versions"] if v["storage"]],
    }
    return body


def csv_owner(name: str, uid: str) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "name": name,
        "uid": uid,
        "controller": False,
        "blockOwnerDeletion": False,
    }


def objects_of(plan: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The step manifests of a plan by kind."""
    return {manifest(e)["kind"]: manifest(e) for e in plan["status"]["plan"]}


def snap(
    plan: dict[str, Any],
    *present: dict[str, Any],
    absent: bool = True,
    now: datetime.datetime = NOW,
    **kwargs: Any,
) -> Snapshot:
    """A snapshot where `present` exist and (with `absent`) every other step's object does not."""
    objects: dict[Any, Any] = {}
    if absent:
        for entry in (plan.get("status") or {}).get("plan") or []:
            objects[step_ref(manifest(entry))] = None
    for obj in present:
        objects[step_ref(obj)] = obj
    return Snapshot(plan, now, objects=objects, **kwargs)


CACHED = {**STORE_KINDS, "InstallPlan": "installplan", "Namespace": "namespace"}


def sync(store: Store, fake: FakeGateway) -> None:
    """What the watch would bring: every cached kind as the fake holds it now."""
    for (_, kind, _, _), obj in fake.objects.items():
        if kind in CACHED:
            store.upsert(CACHED[kind], copy.deepcopy(obj))


def world(
    *plans: dict[str, Any], crd: bool = True
) -> tuple[FakeGateway, Store, InstallPlanController]:
    fake = FakeGateway()
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    if crd:
        crd_manifest = manifest(entries()[1])
        fake.put(established(crd_manifest))
    for plan in plans:
        fake.put(plan)
    store = Store()
    sync(store, fake)
    return fake, store, InstallPlanController(store, fake, WorkQueue())
