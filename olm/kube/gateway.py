"""The gateway: every request olm-py makes to the API server goes through here.

Invariants:
- Owned objects are written with server-side apply under the gateway's field manager
  (`olm-py` unless the constructor is told otherwise), conflicts forced; creates, patches and
  status writes name the same field manager.
- Status is written through the status subresource, and only when the caller saw a change.
- Every body is serialized by `olm.kube.wire.encode_body` (UTF-8, any Unicode as itself), never
  by the kubernetes client, whose ASCII escapes the API server's YAML reader refuses.
- Every failure is a `GatewayError` (`NotFound` and `Conflict` are subclasses).
- `impersonating(user)` gives a gateway whose every request carries `Impersonate-User` (scoped
  installs: an OperatorGroup's ServiceAccount), sharing this one's connection pool.
- Nothing here decides anything; callers pass complete objects or patches.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client import rest
from kubernetes.client.exceptions import ApiException

from olm.api.conditions import timestamp, utc_now
from olm.api.kinds import GROUP, KINDS, Kind
from olm.api.labels import FIELD_MANAGER
from olm.kube import warnings
from olm.kube.errors import Conflict, GatewayError, NotFound, UnservedKind
from olm.kube.events import event_body
from olm.kube.protocol import APPLY_PATCH, MERGE_PATCH, KubeGateway
from olm.kube.resources import RESOURCES, api_prefix, path_for, register_resource
from olm.kube.wire import decode_body, encode_body

__all__ = [
    "CSV_API_VERSION",
    "OPERATOR_GROUP_API_VERSION",
    "RESOURCES",
    "Conflict",
    "Gateway",
    "GatewayError",
    "KubeGateway",
    "NotFound",
    "UnservedKind",
    "path_for",
    "register_resource",
]


# A list answered as PartialObjectMetadataList (metadata only), else as the full list.
METADATA_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


class Gateway:
    """`KubeGateway` over a kubernetes `ApiClient`."""

    def __init__(
        self,
        api: client.ApiClient,
        field_manager: str = FIELD_MANAGER,
        impersonate: str | None = None,
    ) -> None:
        self.api = api
        self.field_manager = field_manager
        self.user = impersonate
        self._discovery: tuple[float, frozenset[tuple[str, str, str]]] | None = None
        self._version: str | None = None
        self._lock = threading.Lock()

    def impersonating(self, user: str) -> Gateway:
        """This gateway acting as `user` (e.g. `system:serviceaccount:<ns>:<name>`): the API
        server authorizes every request as that user (olm-py needs the `impersonate` verb)."""
        return Gateway(self.api, self.field_manager, impersonate=user)

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
        try:
            listing = self._call("GET", api_prefix(api_version))
        except GatewayError:
            return
        for resource in listing.get("resources", []):
            if "/" not in resource["name"]:
                RESOURCES.setdefault(
                    (api_version, resource["kind"]),
                    (resource["name"], bool(resource.get("namespaced"))),
                )

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: list[tuple[str, str]] | None = None,
        accept: str = "application/json",
    ) -> Any:
        header_params = {"Content-Type": content_type, "Accept": accept}
        if self.user:
            header_params["Impersonate-User"] = self.user
        method_, url, headers, _, _ = self.api.param_serialize(
            method,
            path,
            query_params=query or [],
            header_params=header_params,
            auth_settings=["BearerToken"],
        )
        try:
            if body is None:
                response = self.api.call_api(method_, url, header_params=headers)
            else:
                response = self._send(method_, url, headers, encode_body(body))
        except ApiException as exc:
            raise GatewayError(f"{method} {path} failed: {exc}", exc.status or 0) from exc
        data = response.read()
        warned = response.headers.getlist("Warning") if response.headers else []
        if warned:
            warnings.heard(warned)
        if response.status == 404:
            raise NotFound(path)
        if response.status == 409:
            raise Conflict(f"{path}: {_message(data)}")
        if response.status >= 400:
            raise GatewayError(
                f"{method} {path} failed ({response.status}): {_message(data)}", response.status
            )
        return decode_body(data)

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes) -> Any:
        """Send an already serialized body. The client's own `request` would re-serialize any
        JSON content type with `json.dumps`, so this goes to its connection pool directly,
        as `request` does (same pool, TLS, proxy and error mapping)."""
        try:
            raw = self.api.rest_client.pool_manager.request(
                method, url, body=body, headers=headers, preload_content=False
            )
        except urllib3.exceptions.SSLError as exc:
            raise ApiException(status=0, reason=f"{type(exc).__name__}\n{exc}") from exc
        return rest.RESTResponse(raw)

    def _manager(self) -> list[tuple[str, str]]:
        return [("fieldManager", self.field_manager)]

    # ----- writes ------------------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Server-side apply `obj` under the gateway's field manager, forcing conflicts."""
        meta = obj["metadata"]
        path = self._path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        result: dict[str, Any] = self._call(
            "PATCH",
            path,
            body=obj,
            content_type=APPLY_PATCH,
            query=[*self._manager(), ("force", "true")],
        )
        return result

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """POST a new object (e.g. with generateName); returns it as created."""
        meta = obj["metadata"]
        result: dict[str, Any] = self._call(
            "POST",
            self._path(obj["apiVersion"], obj["kind"], meta.get("namespace")),
            body=obj,
            query=self._manager(),
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
    ) -> dict[str, Any]:
        """Merge-patch the status subresource; with `resource_version`, refuse stale writes.
        Returns the object as written."""
        path = self._path(api_version, kind, namespace, name) + "/status"
        body: dict[str, Any] = {"status": status}
        if resource_version:
            body["metadata"] = {"resourceVersion": resource_version}
        result: dict[str, Any] = self._call(
            "PATCH", path, body=body, content_type=MERGE_PATCH, query=self._manager()
        )
        return result

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str = MERGE_PATCH,
    ) -> None:
        query = self._manager()
        if content_type == APPLY_PATCH:
            query.append(("force", "true"))
        self._call(
            "PATCH",
            self._path(api_version, kind, namespace, name),
            body=patch,
            content_type=content_type,
            query=query,
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
        body = event_body(involved, event_type, reason, message, timestamp(utc_now()))
        namespace = body["metadata"]["namespace"]
        self._call("POST", self._path("v1", "Event", namespace), body=body, query=self._manager())

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

    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]:
        """(namespace or "", name) of every object at a list path (the relist of a cache), read
        as metadata only: a relist of thousands of copied CSVs is then kilobytes per hundred,
        not their specs (a server that cannot answer so sends the full list)."""
        query = [("labelSelector", selector)] if selector else []
        listing = self._call("GET", path, query=query, accept=METADATA_LIST)
        return [  # an empty PartialObjectMetadataList has `items: null`
            (item["metadata"].get("namespace") or "", item["metadata"]["name"])
            for item in listing.get("items") or []
        ]

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
        return str(decode_body(data or b"{}").get("message", data))
    except (AttributeError, TypeError, ValueError):
        return str(data)


def _conforms(gateway: Gateway) -> KubeGateway:
    return gateway  # mypy checks here that Gateway implements the protocol


CSV_API_VERSION = f"{GROUP}/v1alpha1"
OPERATOR_GROUP_API_VERSION = KINDS[Kind.OPERATOR_GROUP].api_version
