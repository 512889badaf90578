"""An in-memory copy of the watched objects, fed by kopf's watch events (an informer cache).

Invariant: readers get deep copies-by-JSON snapshots, never objects the watch thread mutates.
"""

from __future__ import annotations

import json
import threading
from typing import Any

Key = tuple[str, str]  # (namespace or "", name)


class Store:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._objects: dict[str, dict[Key, str]] = {}

    def upsert(self, kind: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace") or "", meta.get("name") or "")
        encoded = json.dumps(obj)
        with self._lock:
            self._objects.setdefault(kind, {})[key] = encoded

    def delete(self, kind: str, namespace: str, name: str) -> None:
        with self._lock:
            self._objects.get(kind, {}).pop((namespace or "", name), None)

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            encoded = self._objects.get(kind, {}).get((namespace or "", name))
        return json.loads(encoded) if encoded is not None else None

    def items(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            items = [
                encoded
                for (ns, _), encoded in self._objects.get(kind, {}).items()
                if namespace is None or ns == namespace
            ]
        return [json.loads(encoded) for encoded in items]

    def keys(self, kind: str, namespace: str | None = None) -> list[Key]:
        with self._lock:
            return [
                key
                for key in self._objects.get(kind, {})
                if namespace is None or key[0] == namespace
            ]
