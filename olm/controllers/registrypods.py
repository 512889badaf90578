"""Registry pods, written: the I/O half of olm.catalogsource.registrypod (opt-in, `olm run
--registry-image IMAGE`).

The CatalogSource controller calls `RegistryPods.ensure` for a live, trusted ConfigMap
catalog whose ConfigMap it has just read: the pod's ServiceAccount, Role and RoleBinding are
applied when they differ from what they should be, then the pods labelled as the catalog's
(watched: a deleted pod wakes its CatalogSource) are made one current pod: a pod of another
ConfigMap version or spec is deleted and a new one created, as OLM rolls its registry pod.

Invariants: reads come from the store (pods, ServiceAccounts, Roles, RoleBindings are
watched); a failed write is logged once per cause and never stops the catalog from being read
and reported.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from olm.api import body
from olm.api.catalogsource import CATALOG_SOURCE_LABEL
from olm.catalogsource.registrypod import pod_actions, registry_access, registry_pod
from olm.controllers.store import Store, StoreKind
from olm.installplan.objects import contains
from olm.kube.errors import GatewayError, NotFound
from olm.kube.protocol import KubeGateway

log = logging.getLogger("olm.catalogsource")

ACCESS_KINDS = {
    "ServiceAccount": StoreKind.SERVICE_ACCOUNT,
    "Role": StoreKind.ROLE,
    "RoleBinding": StoreKind.ROLE_BINDING,
}


class RegistryPods:
    """The registry pods of ConfigMap catalogs, run with olm-py's `image`."""

    def __init__(self, store: Store, gateway: KubeGateway, image: str) -> None:
        self.store, self.gateway, self.image = store, gateway, image
        self._said: set[str] = set()

    def _warn(self, cause: str) -> None:
        if cause not in self._said:
            self._said.add(cause)
            log.warning("%s", cause)

    def ensure(self, source: Mapping[str, Any], configmap_version: str) -> None:
        """One current registry pod for `source`, serving ConfigMap version
        `configmap_version`, and the access it needs."""
        namespace, name = body.key(source)
        for obj in registry_access(source):
            found = self.store.get(ACCESS_KINDS[obj["kind"]], namespace, body.name(obj))
            if found is None or not contains(found, obj):
                try:
                    self.gateway.apply(obj)
                except GatewayError as exc:
                    self._warn(f"{obj['kind']} {namespace}/{body.name(obj)} not written: {exc}")
                    return
        status = {**(source.get("status") or {})}
        status["configMapReference"] = {
            **(status.get("configMapReference") or {}),
            "resourceVersion": configmap_version,
        }
        wanted = registry_pod({**source, "status": status}, self.image)
        pods = [
            pod
            for pod in self.store.items(StoreKind.REGISTRY_POD, namespace)
            if body.labels(pod).get(CATALOG_SOURCE_LABEL) == name
        ]
        actions = pod_actions(wanted, pods)
        try:
            for stale in actions.delete:
                with contextlib.suppress(NotFound):
                    self.gateway.delete("v1", "Pod", namespace, stale)
                log.info("deleted registry pod %s/%s of catalog %s", namespace, stale, name)
            if actions.create is not None:
                created = self.gateway.create(actions.create)
                self.store.upsert(StoreKind.REGISTRY_POD, created)  # seen at once: no twin
                log.info(
                    "created registry pod %s/%s of catalog %s", namespace, body.name(created), name
                )
        except GatewayError as exc:
            self._warn(f"registry pod of catalog {namespace}/{name} not written: {exc}")
