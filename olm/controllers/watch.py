"""What olm-py watches, and which keys each change wakes. kopf owns the watch streams.

Invariant: only `@kopf.on.event` handlers are registered, so kopf writes nothing to any
object (no annotations, no finalizers, no status). Handlers only update the store and
enqueue keys; all work happens in the workers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import kopf

from olm.api.labels import Label
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store

WorkKey = tuple[str, str, str]  # (controller kind, namespace, name)


@dataclass(frozen=True)
class Watched:
    kind: str
    group: str
    version: str
    plural: str
    labels: dict[str, Any] | None = None


WATCHED: tuple[Watched, ...] = (
    Watched("csv", "operators.coreos.com", "v1alpha1", "clusterserviceversions"),
    Watched("operatorgroup", "operators.coreos.com", "v1", "operatorgroups"),
    Watched("operatorcondition", "operators.coreos.com", "v2", "operatorconditions"),
    Watched("deployment", "apps", "v1", "deployments", {Label.OWNER.value: kopf.PRESENT}),
    Watched("crd", "apiextensions.k8s.io", "v1", "customresourcedefinitions"),
    Watched("serviceaccount", "", "v1", "serviceaccounts"),
    Watched("role", "rbac.authorization.k8s.io", "v1", "roles"),
    Watched("rolebinding", "rbac.authorization.k8s.io", "v1", "rolebindings"),
    Watched("clusterrole", "rbac.authorization.k8s.io", "v1", "clusterroles"),
    Watched("clusterrolebinding", "rbac.authorization.k8s.io", "v1", "clusterrolebindings"),
    Watched("namespace", "", "v1", "namespaces"),
    Watched("subscription", "operators.coreos.com", "v1alpha1", "subscriptions"),
    Watched("installplan", "operators.coreos.com", "v1alpha1", "installplans"),
    Watched("catalogsource", "operators.coreos.com", "v1alpha1", "catalogsources"),
)


def related_keys(kind: str, obj: dict[str, Any], store: Store) -> list[WorkKey]:
    """The work a change of `obj` makes necessary."""
    meta = obj.get("metadata") or {}
    namespace, name = meta.get("namespace") or "", meta.get("name") or ""

    def csvs(ns: str | None) -> list[WorkKey]:
        return [("csv", key_ns, key_name) for key_ns, key_name in store.keys("csv", ns)]

    if kind == "subscription":
        return [("namespace", "", namespace)]
    if kind == "installplan":
        return [("installplan", namespace, name), ("namespace", "", namespace)]
    if kind == "catalogsource":
        return [("catalogsource", namespace, name)]
    if kind == "csv":
        keys: list[WorkKey] = [("csv", namespace, name), ("namespace", "", namespace)]
        keys += [
            ("operatorgroup", namespace, og) for _, og in store.keys("operatorgroup", namespace)
        ]
        replaces = (obj.get("spec") or {}).get("replaces")
        for other in store.items("csv", namespace):
            other_name = other["metadata"]["name"]
            if other_name == replaces or (other.get("spec") or {}).get("replaces") == name:
                keys.append(("csv", namespace, other_name))
        return keys
    if kind == "operatorgroup":
        siblings = [
            ("operatorgroup", namespace, og) for _, og in store.keys("operatorgroup", namespace)
        ]
        return [("operatorgroup", namespace, name), *siblings]
    if kind == "deployment":
        labels = meta.get("labels") or {}
        owner, owner_ns = labels.get(Label.OWNER), labels.get(Label.OWNER_NAMESPACE)
        return [("csv", owner_ns, owner)] if owner and owner_ns else []
    if kind == "namespace":
        return [("operatorgroup", ns, og) for ns, og in store.keys("operatorgroup")]
    if kind in ("serviceaccount", "role", "rolebinding", "operatorcondition"):
        return csvs(namespace)
    return csvs(None)  # crd, clusterrole, clusterrolebinding: cluster-wide


def register(registry: kopf.OperatorRegistry, store: Store, queue: WorkQueue) -> None:
    # Credentials come from the same kubeconfig (or in-cluster account) as our own client.
    kopf.on.login(registry=registry, id="login")(kopf.login_via_client)
    for watched in WATCHED:
        handler = _make_handler(watched.kind, store, queue)
        resource = (
            (watched.group, watched.version, watched.plural)
            if watched.group
            else (watched.version, watched.plural)
        )
        kopf.on.event(
            *resource, labels=watched.labels, registry=registry, id=f"watch-{watched.kind}"
        )(handler)


def _make_handler(kind: str, store: Store, queue: WorkQueue) -> Callable[..., None]:
    def on_event(event: dict[str, Any], **_: Any) -> None:
        obj = event.get("object") or {}
        meta = obj.get("metadata") or {}
        if event.get("type") == "DELETED":
            keys = related_keys(kind, obj, store)
            store.delete(kind, meta.get("namespace") or "", meta.get("name") or "")
        else:
            store.upsert(kind, obj)
            keys = related_keys(kind, obj, store)
        for key in keys:
            queue.add(key)

    on_event.__name__ = f"watch_{kind}"
    return on_event


def configure(settings: kopf.OperatorSettings) -> None:
    """Every kopf setting olm-py relies on, in one place (a test asserts them)."""
    settings.posting.enabled = False  # our own Events say what happened; kopf's would be noise
    settings.peering.standalone = True  # no KopfPeering objects: one olm-py per cluster
    settings.peering.mandatory = False
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 10
    settings.networking.error_backoffs = [1, 2, 5, 10, 20]
