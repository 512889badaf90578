"""An in-memory `KubeGateway` for unit tests of controllers.

It keeps objects as plain dicts, answers reads from them, applies writes with the API
server's semantics as far as tests need them (see `olm.kube.patching`), and records every
write request in `writes`, so a test can say "the second reconcile over the same snapshot
writes nothing": `fake.take_writes()` after the first pass, then `assert fake.writes == []`.

Behaviour kept from the API server:
- resourceVersion changes only when an object changes (an apply that changes nothing is a
  recorded request with `changed=False`); generation changes only when the spec part
  (anything but metadata and status) changes; uids, names from `generateName` and
  timestamps are deterministic.
- `status` is only written through `patch_status` (every kind acts as if it had a status
  subresource); `patch_status` with a stale resource_version raises `Conflict`.
- `create` of an existing object raises `Conflict`; reads and patches of a missing one raise
  `NotFound`; `delete` of a missing one is a no-op; `delete` of an object with finalizers
  only sets deletionTimestamp, and it goes when the last finalizer is removed.
- Every body is passed through `encode_body` first, as the real gateway sends it.
Not modelled: admission, validation, owner-reference garbage collection, watches, lists with
keys merged by server-side apply (lists are atomic), other field managers' ownership.

Test-side helpers (`put`, `remove`, `fail`) change the world without being recorded.
`impersonating(user)` returns a view over the same objects and record whose writes carry
`Write.user`; `fail(..., user=...)` fails only that user's requests (a Forbidden, say).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from olm.api.labels import FIELD_MANAGER
from olm.kube import warnings
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.events import event_body
from olm.kube.patching import (
    PatchError,
    Path,
    json_patch,
    merge_patch,
    selector_matches,
    server_side_apply,
)
from olm.kube.protocol import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, KubeGateway
from olm.kube.resources import RESOURCES, kind_for, parse_list_path, path_for
from olm.kube.wire import decode_body, encode_body

Key = tuple[str, str, str, str]  # apiVersion, kind, namespace ("" if cluster-scoped), name

# The characters the API server uses for generateName suffixes.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")


@dataclass(frozen=True)
class Write:
    """One write request: what was asked, and whether it changed anything."""

    verb: str  # apply | create | patch | patch_status | delete | event
    api_version: str
    kind: str
    namespace: str
    name: str
    body: Any
    changed: bool
    user: str | None = None  # who the request acted as (None: olm-py itself)


def _key(api_version: str, kind: str, namespace: str | None, name: str) -> Key:
    _, namespaced = RESOURCES.get((api_version, kind), ("", True))
    return (api_version, kind, (namespace or "") if namespaced else "", name)


def _key_of(obj: dict[str, Any]) -> Key:
    meta = obj["metadata"]
    return _key(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


def _where(key: Key) -> str:
    """The REST path of `key`, as the real gateway's messages name it."""
    return path_for(*key) if key[:2] in RESOURCES else "/".join(key)


def _spec_part(obj: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def _wire(body: Any) -> Any:
    """`body` as the API server would receive it."""
    return decode_body(encode_body(body))


class FakeGateway:
    """`KubeGateway` over a dict of objects; see the module docstring."""

    def __init__(
        self,
        objects: Iterable[dict[str, Any]] = (),
        *,
        field_manager: str = FIELD_MANAGER,
        server_version: str = "v1.33.0",
        served_kinds: frozenset[tuple[str, str, str]] = frozenset(),
        now: str = "2026-01-01T00:00:00Z",
    ) -> None:
        self.field_manager = field_manager
        self.user: str | None = None
        self.now = now
        self.objects: dict[Key, dict[str, Any]] = {}
        self.writes: list[Write] = []
        self._server_version = server_version
        self._served_kinds = served_kinds
        self._owned: dict[tuple[Key, str], frozenset[Path]] = {}
        self._failures: list[tuple[str, str | None, str | None, str | None, GatewayError]] = []
        self._counter = itertools.count(1)
        # Warning header values the API server would send when a list path is read.
        self.list_warnings: dict[str, list[str]] = {}
        for obj in objects:
            self.put(obj)

    # ----- test-side helpers (not recorded) ---------------------------------------------------

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store `obj` as the world has it (e.g. a user's edit or the kubelet's status)."""
        stored = _wire(obj)
        meta = stored.setdefault("metadata", {})
        old = self.objects.get(_key_of(stored))
        meta.setdefault("uid", (old or {}).get("metadata", {}).get("uid") or self._uid())
        meta.setdefault("creationTimestamp", self.now)
        meta.setdefault("generation", 1)
        meta["resourceVersion"] = self._next()
        self.objects[_key_of(stored)] = stored
        return copy.deepcopy(stored)

    def remove(self, api_version: str, kind: str, namespace: str | None, name: str) -> None:
        self.objects.pop(_key(api_version, kind, namespace, name), None)

    def fail(
        self,
        verb: str,
        error: GatewayError,
        kind: str | None = None,
        name: str | None = None,
        *,
        user: str | None = None,
    ) -> None:
        """Make the next `verb` (on `kind`/`name`, by `user`, if given) raise `error` instead."""
        self._failures.append((verb, kind, name, user, error))

    def impersonating(self, user: str) -> FakeGateway:
        """A view acting as `user`: the same objects, record and failures."""
        view = copy.copy(self)
        view.user = user
        return view

    def take_writes(self) -> list[Write]:
        """The writes recorded so far; the record starts again empty."""
        taken = list(self.writes)
        self.writes.clear()
        return taken

    def changes(self) -> list[Write]:
        """The recorded writes that changed an object."""
        return [w for w in self.writes if w.changed]

    def events(self) -> list[tuple[str, str, str, str]]:
        """(involved name, type, reason, message) of every Event, oldest first."""
        found = [o for k, o in self.objects.items() if k[1] == "Event"]
        found.sort(key=lambda o: int(o["metadata"]["resourceVersion"]))
        return [(o["involvedObject"]["name"], o["type"], o["reason"], o["message"]) for o in found]

    # ----- writes ------------------------------------------------------------------------------

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        self._check("apply", obj["kind"], meta["name"])
        return self._apply(_wire(obj), "apply")

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        body = _wire(obj)
        meta = body.setdefault("metadata", {})
        if not meta.get("name"):
            meta["name"] = self._generated_name(body)
        self._check("create", body["kind"], meta["name"])
        return self._create(body, "create")

    def patch_status(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        status: dict[str, Any],
        resource_version: str | None = None,
    ) -> dict[str, Any]:
        self._check("patch_status", kind, name)
        key = _key(api_version, kind, namespace, name)
        body = _wire({"status": status})
        live = self._live(key)
        if resource_version and live["metadata"]["resourceVersion"] != resource_version:
            raise Conflict(
                f"{_where(key)}/status: the object has been modified (resourceVersion "
                f"{live['metadata']['resourceVersion']}, not {resource_version})"
            )
        updated = copy.deepcopy(live)
        updated["status"] = merge_patch(live.get("status"), body["status"])
        return self._store(key, live, updated, "patch_status", body)

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str = MERGE_PATCH,
    ) -> None:
        self._check("patch", kind, name)
        body = _wire(patch)
        if content_type == APPLY_PATCH:
            self._apply(body, "patch")
            return
        key = _key(api_version, kind, namespace, name)
        live = self._live(key)
        try:
            if content_type == JSON_PATCH:
                updated = json_patch(live, body)
            else:  # merge patch; a strategic merge patch is treated as one
                updated = merge_patch(live, {k: v for k, v in body.items() if k != "status"})
        except PatchError as exc:
            raise GatewayError(f"PATCH {name} failed (422): {exc}", 422) from exc
        updated["status"] = live.get("status")
        if updated["status"] is None:
            del updated["status"]
        self._store(key, live, updated, "patch", body)

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        propagation: str = "Background",
    ) -> None:
        self._check("delete", kind, name)
        key = _key(api_version, kind, namespace, name)
        live = self.objects.get(key)
        body = {"propagationPolicy": propagation}
        if live is None:
            self.writes.append(Write("delete", *key, body, changed=False, user=self.user))
            return
        if live["metadata"].get("finalizers"):
            updated = copy.deepcopy(live)
            updated["metadata"].setdefault("deletionTimestamp", self.now)
            self._store(key, live, updated, "delete", body)
            return
        del self.objects[key]
        self.writes.append(Write("delete", *key, body, changed=True, user=self.user))

    def event(self, involved: dict[str, Any], event_type: str, reason: str, message: str) -> None:
        body = _wire(event_body(involved, event_type, reason, message, self.now))
        body["metadata"]["name"] = self._generated_name(body)
        self._check("event", "Event", body["metadata"]["name"])
        self._create(body, "event")

    # ----- reads -------------------------------------------------------------------------------

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        return copy.deepcopy(self._live(_key(api_version, kind, namespace, name)))

    def list_path(self, path: str) -> list[dict[str, Any]]:
        warnings.heard(self.list_warnings.get(path, []))
        return [copy.deepcopy(o) for o in self._listed(path, "")]

    def list_names(
        self, api_version: str, kind: str, namespace: str | None, selector: str = ""
    ) -> list[str]:
        path = path_for(api_version, kind, namespace) if (api_version, kind) in RESOURCES else ""
        if not path:
            return []
        return [o["metadata"]["name"] for o in self._listed(path, selector)]

    def list_keys(self, path: str, selector: str = "") -> list[tuple[str, str]]:
        return [
            (o["metadata"].get("namespace") or "", o["metadata"]["name"])
            for o in self._listed(path, selector)
        ]

    def server_version(self) -> str:
        return self._server_version

    def served_kinds(self, max_age: float = 60.0) -> frozenset[tuple[str, str, str]]:
        return self._served_kinds

    # ----- inside ------------------------------------------------------------------------------

    def _next(self) -> str:
        return str(next(self._counter))

    def _uid(self) -> str:
        return f"00000000-0000-0000-0000-{next(self._counter):012d}"

    def _generated_name(self, body: dict[str, Any]) -> str:
        prefix = body["metadata"].get("generateName")
        if not prefix:
            raise GatewayError("POST failed (422): metadata.name or generateName is required", 422)
        number, suffix = next(self._counter), ""
        for _ in range(5):
            number, digit = divmod(number, len(_SUFFIX_ALPHABET))
            suffix += _SUFFIX_ALPHABET[digit]
        return f"{prefix}{suffix}"

    def _check(self, verb: str, kind: str, name: str) -> None:
        for index, (want_verb, want_kind, want_name, want_user, error) in enumerate(self._failures):
            if (
                want_verb == verb
                and want_kind in (None, kind)
                and want_name in (None, name)
                and want_user in (None, self.user)
            ):
                del self._failures[index]
                raise error

    def _live(self, key: Key) -> dict[str, Any]:
        live = self.objects.get(key)
        if live is None:
            raise NotFound(_where(key))
        return live

    def _listed(self, path: str, selector: str) -> list[dict[str, Any]]:
        api_version, plural, namespace = parse_list_path(path)
        kind = kind_for(api_version, plural)
        found = [
            obj
            for (version, obj_kind, obj_namespace, _), obj in self.objects.items()
            if version == api_version
            and obj_kind == kind
            and (namespace is None or obj_namespace == namespace)
            and selector_matches(selector, obj["metadata"].get("labels") or {})
        ]
        return sorted(
            found, key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"]["name"])
        )

    def _create(self, sent: dict[str, Any], verb: str) -> dict[str, Any]:
        body = copy.deepcopy(sent)
        key = _key_of(body)
        if key in self.objects:
            raise Conflict(f"{_where(key)}: already exists")
        body.pop("status", None)
        meta = body["metadata"]
        for field in _SERVER_FIELDS:
            meta.pop(field, None)
        meta.update(
            uid=self._uid(),
            creationTimestamp=self.now,
            generation=1,
            resourceVersion=self._next(),
        )
        self.objects[key] = body
        self._owned = {k: v for k, v in self._owned.items() if k[0] != key}
        self.writes.append(Write(verb, *key, copy.deepcopy(sent), changed=True, user=self.user))
        return copy.deepcopy(body)

    def _apply(self, sent: dict[str, Any], verb: str) -> dict[str, Any]:
        body = copy.deepcopy(sent)
        body.pop("status", None)
        for field in _SERVER_FIELDS:
            body["metadata"].pop(field, None)
        key = _key_of(body)
        live = self.objects.get(key)
        owner = (key, self.field_manager)
        if live is None:
            merged, owned = server_side_apply(None, body, frozenset())
            created = self._create(merged, verb)
            self.writes[-1] = Write(verb, *key, copy.deepcopy(sent), changed=True, user=self.user)
            self._owned[owner] = owned
            return created
        merged, owned = server_side_apply(live, body, self._owned.get(owner, frozenset()))
        self._owned[owner] = owned
        return self._store(key, live, merged, verb, sent)

    def _store(
        self,
        key: Key,
        live: dict[str, Any],
        updated: dict[str, Any],
        verb: str,
        body: Any,
    ) -> dict[str, Any]:
        changed = updated != live
        if changed:
            meta = updated["metadata"]
            if _spec_part(updated) != _spec_part(live):
                meta["generation"] = int(live["metadata"].get("generation", 1)) + 1
            meta["resourceVersion"] = self._next()
            if meta.get("deletionTimestamp") and not meta.get("finalizers"):
                del self.objects[key]
            else:
                self.objects[key] = updated
        self.writes.append(Write(verb, *key, copy.deepcopy(body), changed=changed, user=self.user))
        return copy.deepcopy(self.objects.get(key, updated))


def _conforms(fake: FakeGateway) -> KubeGateway:
    return fake  # mypy checks here that FakeGateway implements the protocol
