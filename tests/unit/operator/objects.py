"""Plain objects for the Operator tests: a Subscription's world in namespace NS."""

from __future__ import annotations

from typing import Any

NS = "ns"
PKG = "memcached-operator"
KEY = f"operators.coreos.com/{PKG}.{NS}"
CSV_NAME = "memcached-operator.v0.0.2"
CSV_UID = "uid-csv"
MANAGED = {"olm.managed": "true"}


def obj(
    api_version: str,
    kind: str,
    name: str,
    namespace: str = NS,
    labels: dict[str, str] | None = None,
    owners: list[dict[str, Any]] | None = None,
    **rest: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": dict(labels or {}), "uid": f"uid-{name}"}
    if namespace:
        meta["namespace"] = namespace
    if owners:
        meta["ownerReferences"] = owners
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **rest}


def owner(name: str = CSV_NAME, uid: str = CSV_UID) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "name": name,
        "uid": uid,
    }


def owner_labels(name: str = CSV_NAME, namespace: str = NS) -> dict[str, str]:
    return {
        "olm.owner": name,
        "olm.owner.namespace": namespace,
        "olm.owner.kind": "ClusterServiceVersion",
    }


def subscription(
    name: str = "memcached",
    package: str = PKG,
    installed: str | None = CSV_NAME,
    plan: str | None = "install-2",
    labels: dict[str, str] | None = None,
) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if installed:
        status["installedCSV"] = installed
    if plan:
        status["installPlanRef"] = {"name": plan, "namespace": NS, "kind": "InstallPlan"}
    return obj(
        "operators.coreos.com/v1alpha1",
        "Subscription",
        name,
        labels=labels,
        spec={"name": package, "source": "samples", "sourceNamespace": "olm"},
        status=status,
    )


def csv(
    name: str = CSV_NAME, labels: dict[str, str] | None = None, phase: str = "Succeeded"
) -> dict[str, Any]:
    body = obj(
        "operators.coreos.com/v1alpha1",
        "ClusterServiceVersion",
        name,
        labels={**MANAGED, **(labels or {})},
        spec={"customresourcedefinitions": {"owned": [{"name": "memcacheds.cache.example.com"}]}},
        status={
            "phase": phase,
            "reason": "InstallSucceeded",
            "message": "install strategy completed with no errors",
            "lastUpdateTime": "2026-01-01T00:00:02Z",
            "lastTransitionTime": "2026-01-01T00:00:01Z",
        },
    )
    body["metadata"]["uid"] = CSV_UID if name == CSV_NAME else f"uid-{name}"
    return body


def plan(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return obj("operators.coreos.com/v1alpha1", "InstallPlan", name, labels=labels)
