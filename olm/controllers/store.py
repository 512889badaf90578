"""An in-memory copy of the watched objects, fed by kopf's watch events (an informer cache).

Invariants: the store keeps each object exactly as the watch delivered it and replaces it
wholesale on the next event; readers get references and must treat them as read-only (the
pure logic never mutates its inputs), so a read costs no copying however big the objects are.
"""

from __future__ import annotations

import threading
from typing import Any

Key = tuple[str, str]  # (namespace or "", name)


class Store:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[Key, dict[str, Any]]] = {}

    def upsert(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        with self._lock:
            self._objects.setdefault(kind, {})[key] = obj

    def delete(self, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._objects.get(kind, {}).pop((namespace or "", name), None)

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            return self._objects.get(kind, {}).get((namespace or "", name))

    def items(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            objects = self._objects.get(kind, {})
            return [obj for (ns, _), obj in objects.items() if namespace is None or ns == namespace]

    def keys(self, kind: str, namespace: str | None = None) -> list[Key]:
        with self._lock:
            return [
                key
                for key in self._objects.get(kind, {})
                if namespace is None or key[0] == namespace
            ]
