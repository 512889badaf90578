"""Plain-data InstallPlans and cluster objects for the InstallPlan tests (samples catalog)."""

from __future__ import annotations

import copy
import datetime
import json
from typing import Any

from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.installplan.steps import plan_bundle

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
