"""The gateway: every write olm-py makes to the API server goes through here.

Invariants:
- Owned objects are written with server-side apply, field manager `olm-py`, conflicts forced.
- Status is written through the status subresource, and only when the caller saw a change.
- Nothing here decides anything; callers pass complete objects or patches.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import threading
import time
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from olm.api.kinds import GROUP, KINDS, Kind
from olm.api.labels import EVENT_SOURCE, FIELD_MANAGER

# (apiVersion, kind) -> (plural, namespaced) for every kind olm-py reads or writes.
RESOURCES: dict[tuple[str, str], tuple[str, bool]] = {
    ("apps/v1", "Deployment"): ("deployments", True),
    ("v1", "ServiceAccount"): ("serviceaccounts", True),
    ("v1", "Namespace"): ("namespaces", False),
    ("v1", "Event"): ("events", True),
    ("v1", "Pod"): ("pods", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("rbac.authorization.k8s.io/v1", "Role"): ("roles", True),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("rolebindings", True),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): ("clusterroles", False),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("clusterrolebindings", False),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ("customresourcedefinitions", False),
    **{
        (info.api_version, info.kind.value): (info.plural, info.namespaced)
        for info in KINDS.values()
    },
}


def register_resource(api_version: str, kind: str, plural: str, namespaced: bool) -> None:
    """Teach the gateway a kind it does not know (e.g. an operator's own CRD)."""
    RESOURCES[(api_version, kind)] = (plural, namespaced)


class NotFound(LookupError):
    pass


class Conflict(RuntimeError):
    pass


class GatewayError(RuntimeError):
    """A write the API server refused; `status` is the HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def path_for(api_version: str, kind: str, namespace: str | None, name: str | None = None) -> str:
    plural, namespaced = RESOURCES[(api_version, kind)]
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    scope = f"/namespaces/{namespace}" if namespaced and namespace else ""
    return f"{prefix}{scope}/{plural}" + (f"/{name}" if name else "")


class UnservedKind(GatewayError):
    """The API server does not serve this apiVersion/kind."""


class Gateway:
    def _path(
        self, api_version: str, kind: str, namespace: str | None, name: str | None = None
    ) -> str:
        """The REST path of a kind, from the table or else from the API server's discovery."""
        if (api_version, kind) not in RESOURCES:
            self._discover(api_version)
        if (api_version, kind) not in RESOURCES:
            raise UnservedKind(
                f"the API server does not serve {kind} in {api_version}"
                + (
                    " (apiextensions.k8s.io/v1beta1 was removed in Kubernetes 1.22: the bundle needs apiextensions.k8s.io/v1)"
                    if api_version == "apiextensions.k8s.io/v1beta1"
                    else ""
                ),
                404,
            )
        return path_for(api_version, kind, namespace, name)

    def _discover(self, api_version: str) -> None:
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            listing = self._call("GET", prefix)
        except (NotFound, GatewayError):
            return
        for resource in listing.get("resources", []):
            if "/" not in resource["name"]:
                RESOURCES.setdefault(
                    (api_version, resource["kind"]),
                    (resource["name"], bool(resource.get("namespaced"))),
                )

    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        self._discovery: tuple[float, frozenset[tuple[str, str, str]]] | None = None
        self._version: str | None = None
        self._lock = threading.Lock()

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: list[tuple[str, str]] | None = None,
    ) -> Any:
        method_, url, headers, body_, post = self.api.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params={"Content-Type": content_type, "Accept": "application/json"},
            body=body,
            auth_settings=["BearerToken"],
        )
        try:
            response = self.api.call_api(
                method_, url, header_params=headers, body=body_, post_params=post
            )
        except ApiException as exc:
            raise GatewayError(f"{method} {path} failed: {exc}", exc.status or 0) from exc
        data = response.read()
        if response.status == 404:
            raise NotFound(path)
        if response.status == 409:
            raise Conflict(f"{path}: {_message(data)}")
        if response.status >= 400:
            raise GatewayError(
                f"{method} {path} failed ({response.status}): {_message(data)}", response.status
            )
        return json.loads(data) if data else None

    # ----- writes ------------------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply `obj` as field manager olm-py, forcing conflicts."""
        meta = obj["metadata"]
        path = self._path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        result: dict[str, Any] = self._call(
            "PATCH",
            path,
            body=obj,
            content_type="application/apply-patch+yaml",
            query=[("fieldManager", FIELD_MANAGER), ("force", "true")],
        )
        return result

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """POST a new object (e.g. with generateName); returns it as created."""
        meta = obj["metadata"]
        result: dict[str, Any] = self._call(
            "POST", self._path(obj["apiVersion"], obj["kind"], meta.get("namespace")), body=obj
        )
        return result

    def patch_status(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        status: dict[str, Any],
        resource_version: str | None = None,
    ) -> None:
        """Merge-patch the status subresource; with `resource_version`, refuse stale writes."""
        path = self._path(api_version, kind, namespace, name) + "/status"
        body: dict[str, Any] = {"status": status}
        if resource_version:
            body["metadata"] = {"resourceVersion": resource_version}
        self._call("PATCH", path, body=body, content_type="application/merge-patch+json")

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str = "application/merge-patch+json",
    ) -> None:
        self._call(
            "PATCH",
            self._path(api_version, kind, namespace, name),
            body=patch,
            content_type=content_type,
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        propagation: str = "Background",
    ) -> None:
        with contextlib.suppress(NotFound):
            self._call(
                "DELETE",
                self._path(api_version, kind, namespace, name),
                body={"propagationPolicy": propagation},
            )

    def event(self, involved: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        meta = involved["metadata"]
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "generateName": f"{meta['name']}.",
                "namespace": meta.get("namespace") or "default",
            },
            "involvedObject": {
                "apiVersion": involved["apiVersion"],
                "kind": involved["kind"],
                "name": meta["name"],
                "namespace": meta.get("namespace"),
                "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion"),
            },
            "reason": reason,
            "message": message[:1024],
            "type": event_type,
            "source": {"component": EVENT_SOURCE},
            "reportingComponent": EVENT_SOURCE,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
        self._call("POST", self._path("v1", "Event", meta.get("namespace") or "default"), body=body)

    # ----- reads -------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", self._path(api_version, kind, namespace, name))
        return result

    def list_path(self, path: str) -> list[dict[str, Any]]:
        """Every object at a list path (e.g. /apis/<group>/<version>/<plural>)."""
        listing = self._call("GET", path)
        return list(listing.get("items", []))

    def list_names(
        self, api_version: str, kind: str, namespace: str | None, selector: str = ""
    ) -> list[str]:
        query = [("labelSelector", selector)] if selector else []
        listing = self._call("GET", self._path(api_version, kind, namespace), query=query)
        return [item["metadata"]["name"] for item in listing.get("items", [])]

    def server_version(self) -> str:
        if self._version is None:
            self._version = str(self._call("GET", "/version")["gitVersion"])
        return self._version

    def served_kinds(self, max_age: float = 60.0) -> frozenset[tuple[str, str, str]]:
        """(group, version, kind) of every served resource, refreshed at most every minute."""
        with self._lock:
            if self._discovery and time.monotonic() - self._discovery[0] < max_age:
                return self._discovery[1]
        kinds: set[tuple[str, str, str]] = set()
        for resource in self._call("GET", "/api/v1")["resources"]:
            kinds.add(("", "v1", resource["kind"]))
        for group in self._call("GET", "/apis")["groups"]:
            for version in group["versions"]:
                listing = self._call("GET", f"/apis/{version['groupVersion']}")
                for resource in listing["resources"]:
                    kinds.add((group["name"], version["version"], resource["kind"]))
        frozen = frozenset(kinds)
        with self._lock:
            self._discovery = (time.monotonic(), frozen)
        return frozen


def _message(data: bytes | None) -> str:
    try:
        return str(json.loads(data or b"{}").get("message", data))
    except (TypeError, ValueError):
        return str(data)


CSV_API_VERSION = f"{GROUP}/v1alpha1"
OPERATOR_GROUP_API_VERSION = KINDS[Kind.OPERATOR_GROUP].api_version
