"""Plain OLM objects, as the API server returns them, for the explain tests."""

from __future__ import annotations

from typing import Any

NS = "team-a"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
CRD = "memcacheds.cache.example.com"

Obj = dict[str, Any]


def meta(name: str, namespace: str = NS, **extra: Any) -> Obj:
    return {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", **extra}


def sub(
    name: str = "memcached",
    state: str = "AtLatestKnown",
    current: str = NEW,
    plan: str = "install-abcde",
    conditions: list[Obj] | None = None,
    source: str = "samples",
    source_namespace: str = "olm",
    **status: Any,
) -> Obj:
    body: Obj = {"state": state, "conditions": conditions or []}
    if current:
        body["currentCSV"] = current
        body["installedCSV"] = current
    if plan:
        body["installPlanRef"] = {"name": plan, "namespace": NS}
    body.update(status)
    return {
        "kind": "Subscription",
        "metadata": meta(name),
        "spec": {
            "name": "memcached-operator",
            "channel": "alpha",
            "source": source,
            "sourceNamespace": source_namespace,
            "installPlanApproval": "Manual",
        },
        "status": body,
    }


def condition(kind: str, reason: str, message: str = "", status: str = "True") -> Obj:
    return {"type": kind, "status": status, "reason": reason, "message": message}


def plan(
    name: str = "install-abcde",
    phase: str = "Complete",
    csvs: tuple[str, ...] = (NEW,),
    owners: tuple[str, ...] = ("memcached",),
    **status: Any,
) -> Obj:
    return {
        "kind": "InstallPlan",
        "metadata": meta(
            name,
            ownerReferences=[
                {"kind": "Subscription", "name": o, "uid": f"uid-{o}"} for o in owners
            ],
        ),
        "spec": {
            "clusterServiceVersionNames": list(csvs),
            "approval": "Manual",
            "approved": phase != "RequiresApproval",
        },
        "status": {"phase": phase, **status},
    }


def csv(
    name: str = NEW,
    namespace: str = NS,
    phase: str = "Succeeded",
    reason: str = "InstallSucceeded",
    message: str = "",
    owns: tuple[str, ...] = (CRD,),
    requires: tuple[str, ...] = (),
    modes: tuple[str, ...] = ("OwnNamespace", "SingleNamespace"),
    labels: dict[str, str] | None = None,
    **status: Any,
) -> Obj:
    def described(crd: str) -> Obj:
        return {"name": crd, "version": "v1", "kind": crd.split(".")[0].title().rstrip("s")}

    return {
        "kind": "ClusterServiceVersion",
        "metadata": meta(name, namespace, labels=labels or {}),
        "spec": {
            "customresourcedefinitions": {
                "owned": [described(c) for c in owns],
                "required": [described(c) for c in requires],
            },
            "installModes": [
                {"type": t, "supported": t in modes}
                for t in ("OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces")
            ],
            "install": {
                "strategy": "deployment",
                "spec": {"deployments": [{"name": "memcached-operator", "spec": {}}]},
            },
        },
        "status": {"phase": phase, "reason": reason, "message": message, **status},
    }


def group(
    name: str = "og",
    namespace: str = NS,
    targets: list[str] | None = None,
    provided: str = "",
    conditions: list[Obj] | None = None,
    **spec: Any,
) -> Obj:
    wanted = targets if targets is not None else [namespace]
    annotations = {"olm.providedAPIs": provided} if provided else {}
    return {
        "kind": "OperatorGroup",
        "metadata": meta(name, namespace, annotations=annotations),
        "spec": {"targetNamespaces": wanted, **spec} if wanted != [""] else dict(spec),
        "status": {"namespaces": wanted, "conditions": conditions or []},
    }


def catalog(
    name: str = "samples",
    namespace: str = "olm",
    state: str = "READY",
    message: str = "",
    reason: str = "",
    **spec: Any,
) -> Obj:
    status: Obj = {"connectionState": {"lastObservedState": state}}
    if message:
        status.update(message=message, reason=reason)
    return {
        "kind": "CatalogSource",
        "metadata": meta(name, namespace),
        "spec": {"sourceType": "grpc", **(spec or {"address": "127.0.0.1:50051"})},
        "status": status,
    }


def crd(name: str = CRD) -> Obj:
    return {"kind": "CustomResourceDefinition", "metadata": {"name": name}}


def package_manifest(
    package: str, source: str, source_namespace: str = "olm", owns: tuple[Obj, ...] = ()
) -> Obj:
    return {
        "kind": "PackageManifest",
        "metadata": {"name": package, "namespace": NS},
        "status": {
            "packageName": package,
            "catalogSource": source,
            "catalogSourceNamespace": source_namespace,
            "defaultChannel": "stable",
            "channels": [
                {
                    "name": "stable",
                    "currentCSV": f"{package}.v1.0.0",
                    "currentCSVDesc": {"customresourcedefinitions": {"owned": list(owns)}},
                }
            ],
        },
    }
