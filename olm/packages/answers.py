"""Encoded list answers of the PackageManifest API, kept while the catalogs they were built
from are unchanged.

A list answer depends only on the catalogs' snapshot version, the request (namespace, label
requirements, selected name, JSON or Table and what a Table row includes) and, for a Table, the
AGE cells (one per catalog: every manifest of a catalog carries its CatalogSource's
creationTimestamp). Clients ask the same lists again and again (consoles, `kubectl get`,
`kubectl operator list-available`), so the encoded body is kept and served as is.

Invariants: an answer is kept with the snapshot version it was built from and only returned
for that version; keeping an answer of a newer version drops every older one, and one of an
older version is not kept (a changed catalog is never answered from the past); the bodies kept
never exceed `budget` bytes (least recently used out first; a body larger than the budget is
not kept). Thread-safe; no I/O.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable

DEFAULT_BUDGET = 8 * 1024 * 1024


class Answers:
    """Encoded answers of one snapshot version, by request key."""

    def __init__(self, budget: int = DEFAULT_BUDGET) -> None:
        self.budget = budget
        self._lock = threading.Lock()
        self._bodies: OrderedDict[Hashable, bytes] = OrderedDict()
        self._size = 0
        self._version = -1

    def get(self, version: int, key: Hashable) -> bytes | None:
        with self._lock:
            if version != self._version:
                return None
            body = self._bodies.get(key)
            if body is not None:
                self._bodies.move_to_end(key)
            return body

    def put(self, version: int, key: Hashable, body: bytes) -> None:
        with self._lock:
            if version < self._version:
                return  # built from a snapshot replaced meanwhile
            if version > self._version:
                self._bodies.clear()
                self._size = 0
                self._version = version
            if len(body) > self.budget:
                return
            old = self._bodies.pop(key, None)
            self._size += len(body) - (len(old) if old is not None else 0)
            self._bodies[key] = body
            while self._size > self.budget:
                _, dropped = self._bodies.popitem(last=False)
                self._size -= len(dropped)

    @property
    def size(self) -> int:
        return self._size

    def __len__(self) -> int:
        return len(self._bodies)
