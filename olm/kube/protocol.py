"""What the controllers need from the API server, as a `typing.Protocol`.

`olm.kube.gateway.Gateway` talks to a real API server; `olm.kube.fake.FakeGateway` keeps
objects in memory and records every write, so a controller can be run in a unit test (and run
twice, to show the second pass writes nothing). Type controllers against `KubeGateway`.

Invariants (both implementations keep them):
- Writes: `apply` is server-side apply under the gateway's field manager with conflicts
  forced; `create` honours `metadata.generateName`; `patch_status` merge-patches the status
  subresource, refusing a stale `resource_version` with `Conflict`; `delete` of a missing
  object is not an error.
- Every failure is a `olm.kube.errors.GatewayError` (`NotFound`, `Conflict` included).
- Reads return plain JSON data (dicts, lists, str, int, bool, None).
- `impersonating(user)` is the same gateway acting as `user` (scoped installs); `user` is the
  user a gateway acts as (None: olm-py's own credentials).
"""

from __future__ import annotations

from typing import Any, Protocol

MERGE_PATCH = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


class KubeGateway(Protocol):
    @property
    def field_manager(self) -> str: ...

    @property
    def user(self) -> str | None: ...

    def impersonating(self, user: str) -> KubeGateway: ...

    # ----- writes ------------------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def create(self, obj: dict[str, Any]) -> dict[str, Any]: ...

    def patch_status(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        status: dict[str, Any],
        resource_version: str | None = None,
    ) -> dict[str, Any]: ...

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str = MERGE_PATCH,
    ) -> None: ...

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        propagation: str = "Background",
    ) -> None: ...

    def event(
        self, involved: dict[str, Any], event_type: str, reason: str, message: str
    ) -> None: ...

    # ----- reads -------------------------------------------------------------------------------

    def get(
        self, api_version: str, kind: str, namespace: str | None, name: str
    ) -> dict[str, Any]: ...

    def list_path(self, path: str) -> list[dict[str, Any]]: ...

    def list_names(
        self, api_version: str, kind: str, namespace: str | None, selector: str = ""
    ) -> list[str]: ...

    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]: ...

    def server_version(self) -> str: ...

    def served_kinds(self, max_age: float = 60.0) -> frozenset[tuple[str, str, str]]: ...
