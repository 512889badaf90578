"""Plain-dict builders for Subscription decisions, and `converge`, which plays the controller:
it applies each plan to the snapshot (as the executor and the watch would) and decides again."""

from __future__ import annotations

import copy
import dataclasses
import datetime
import functools
from typing import Any

from olm.catalog.model import Catalog, Problem
from olm.catalog.samples import build
from olm.catalogsource.source import BUNDLE_UNPACK_RULE
from olm.subscription.decide import decide
from olm.subscription.snapshot import LoadedCatalog, Plan, Snapshot, catalogs_in_scope

NS = "demo"
GLOBAL = "olm"
V1, V2 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
DASHBOARD = "memcached-dashboard.v0.1.0"
NOW = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
STAMP = "2030-01-02T03:04:05Z"
EARLIER = "2029-12-31T00:00:00Z"


@functools.cache
def samples() -> Catalog:
    return build()


def uid(name: str) -> str:
    return f"uid-{name}"


def subscription(
    name: str = "memcached",
    status: dict[str, Any] | None = None,
    labelled: bool = True,
    **spec: Any,
) -> dict[str, Any]:
    package = spec.pop("package", "memcached-operator")
    labels = {f"operators.coreos.com/{package}.{NS}": ""} if labelled else {}
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid(name),
            "resourceVersion": "10",
            "labels": labels,
        },
        "spec": {
            "name": package,
            "source": "samples",
            "sourceNamespace": GLOBAL,
            "channel": "alpha",
            **spec,
        },
        **({"status": status} if status is not None else {}),
    }


def csv(name: str, replaces: str = "", status: dict[str, Any] | None = None) -> dict[str, Any]:
    version = name.split(".v", 1)[-1]
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "namespace": NS, "uid": uid(name)},
        "spec": {
            "version": version,
            **({"replaces": replaces} if replaces else {}),
            "customresourcedefinitions": {
                "owned": [
                    {
                        "name": "memcacheds.cache.example.com",
                        "version": "v1alpha1",
                        "kind": "Memcached",
                    }
                ]
            }
            if name.startswith("memcached-operator")
            else {},
        },
        **({"status": status} if status is not None else {}),
    }


def install_plan(
    name: str,
    names: list[str],
    phase: str | None,
    owners: tuple[str, ...] = ("memcached",),
    generation: int = 1,
    approval: str = "Automatic",
    **status: Any,
) -> dict[str, Any]:
    """phase None: the status was never written."""
    plan: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": uid(name),
            "resourceVersion": "7",
            "ownerReferences": [
                {
                    "apiVersion": "operators.coreos.com/v1alpha1",
                    "kind": "Subscription",
                    "name": owner,
                    "uid": uid(owner),
                    "controller": False,
                    "blockOwnerDeletion": False,
                }
                for owner in owners
            ],
        },
        "spec": {
            "clusterServiceVersionNames": names,
            "approval": approval,
            "approved": approval == "Automatic",
            "generation": generation,
        },
    }
    if phase is not None:
        plan["status"] = {"phase": phase, "catalogSources": ["samples"], "plan": [], **status}
    return plan


def reference(plan: dict[str, Any]) -> dict[str, Any]:
    meta = plan["metadata"]
    return {
        "installPlanRef": {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "InstallPlan",
            "name": meta["name"],
            "namespace": NS,
            "uid": meta["uid"],
        },
        "installplan": {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "InstallPlan",
            "name": meta["name"],
            "uuid": meta["uid"],
        },
        "installPlanGeneration": plan["spec"]["generation"],
    }


def catalog_source(
    name: str = "samples", namespace: str = GLOBAL, reason: str | None = None
) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": name, "namespace": namespace, "uid": uid(name)},
        "spec": {"sourceType": "grpc", "address": "127.0.0.1:50051"},
        "status": {"reason": reason} if reason else {},
    }


def namespace_object(terminating: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": NS, "uid": uid(NS)}
    if terminating:
        meta["deletionTimestamp"] = EARLIER
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": meta,
        "status": {"phase": "Terminating" if terminating else "Active"},
    }


def world(
    subscriptions: list[dict[str, Any]] | None = None,
    csvs: list[dict[str, Any]] | None = None,
    plans: list[dict[str, Any]] | None = None,
    sources: list[dict[str, Any]] | None = None,
    loaded: dict[tuple[str, str], Catalog] | None = None,
    terminating: bool = False,
    space: dict[str, Any] | bool | None = True,
) -> Snapshot:
    sources = [catalog_source()] if sources is None else sources
    loaded = {(GLOBAL, "samples"): samples()} if loaded is None else loaded
    return Snapshot(
        namespace=NS,
        namespace_object=namespace_object(terminating) if space is True else space or None,
        subscriptions=tuple(
            sorted(subscriptions or [subscription()], key=lambda s: s["metadata"]["name"])
        ),
        csvs={c["metadata"]["name"]: c for c in csvs or []},
        plans={p["metadata"]["name"]: p for p in plans or []},
        catalogs=catalogs_in_scope(
            NS, sources, {k: LoadedCatalog(v) for k, v in loaded.items()}, GLOBAL
        ),
        now=NOW,
    )


def apply(snapshot: Snapshot, plan: Plan) -> Snapshot:
    """The cache after the executor carried out `plan` (and the watch delivered it)."""
    plans = dict(snapshot.plans)
    subscriptions = {s["metadata"]["name"]: copy.deepcopy(dict(s)) for s in snapshot.subscriptions}
    if plan.create is not None:
        body = copy.deepcopy(plan.create.body)
        name = body["metadata"]["name"]
        body["metadata"].update(uid=uid(name), resourceVersion="1")
        plans[name] = {**body, "status": plan.create.status}
    for write in plan.plan_statuses:
        plans[write.name] = {**plans[write.name], "status": write.status}
    for write in plan.statuses:
        subscriptions[write.name]["status"] = write.status
    return dataclasses.replace(
        snapshot,
        plans=plans,
        subscriptions=tuple(subscriptions[k] for k in sorted(subscriptions)),
    )


def converge(snapshot: Snapshot, rounds: int = 6) -> tuple[Snapshot, list[Plan]]:
    """Decide and apply until a decision is empty; every plan on the way is returned."""
    seen = []
    for _ in range(rounds):
        plan = decide(snapshot)
        if plan.empty:
            return snapshot, seen
        seen.append(plan)
        snapshot = apply(snapshot, plan)
    raise AssertionError(f"no fixed point after {rounds} decisions: {seen[-1]}")


def with_csvs(snapshot: Snapshot, *csvs: dict[str, Any]) -> Snapshot:
    """The cache once an InstallPlan created these CSVs."""
    return dataclasses.replace(
        snapshot, csvs={**snapshot.csvs, **{c["metadata"]["name"]: c for c in csvs}}
    )


def with_plan_phase(snapshot: Snapshot, name: str, phase: str, **status: Any) -> Snapshot:
    plans = dict(snapshot.plans)
    plans[name] = {
        **plans[name],
        "status": {**(plans[name].get("status") or {}), "phase": phase, **status},
    }
    return dataclasses.replace(snapshot, plans=plans)


def conditions(status: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in status.get("conditions") or []}


def status_of(snapshot: Snapshot, name: str = "memcached") -> dict[str, Any]:
    found = next(s for s in snapshot.subscriptions if s["metadata"]["name"] == name)
    return dict(found.get("status") or {})


IMAGE = "127.0.0.1:5000/team/memcached-bundle:v0.0.2"

WHY = "registry 127.0.0.1:5000 has no team/memcached-bundle:v0.0.2"


def broken(why: str = WHY, *, inline: bool = False) -> Catalog:
    """The samples catalog with V2's objects replaced by an image that failed to unpack."""
    catalog = copy.deepcopy(samples())
    bundle = catalog.packages["memcached-operator"].bundles[V2]
    bundle.image = IMAGE
    if not inline:
        bundle.properties = [p for p in bundle.properties if p["type"] != "olm.bundle.object"]
    catalog.problems.append(
        Problem(
            BUNDLE_UNPACK_RULE,
            f"bundle image {IMAGE} of {V2} could not be unpacked: {why}",
            path=IMAGE,
            location=f"memcached-operator/{V2}",
            level="warning",
        )
    )
    return catalog
