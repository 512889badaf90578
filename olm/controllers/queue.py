"""A de-duplicating work queue with per-key exponential backoff, like client-go's.

Invariants:
- A key is queued at most once; adding a queued key does nothing.
- A key is never processed by two workers at once: a key added while it is being processed
  is queued again only when that processing is done.
- `retry(key)` re-adds it after a delay that doubles per consecutive failure (capped);
  `forget(key)` resets that count after a success.
- Time comes from one injected `clock` (monotonic seconds), so tests drive delays with a fake
  clock instead of sleeping.
- olm-py's keys are `WorkKey`s, (controller kind, namespace, name); the queue itself takes any
  hashable key.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Hashable
from enum import StrEnum

from olm.api.backoff import exponential_backoff


class WorkKind(StrEnum):
    """The controller a work key is for (each controller's `kind`; app.py dispatches on it)."""

    CSV = "csv"
    OPERATOR_GROUP = "operatorgroup"
    CATALOG_SOURCE = "catalogsource"
    INSTALL_PLAN = "installplan"
    NAMESPACE = "namespace"  # the Subscription controller resolves a whole namespace
    SCOPE = "scope"  # one original CSV across its group's scope
    SCOPE_NAMESPACE = "scope-namespace"  # one namespace's labels, copies and copied RBAC
    SCOPE_GROUP = "scope-group"  # one group's aggregation ClusterRoles
    OLM_CONFIG = "olmconfig"
    ADOPTION = "adoption"  # one namespace's component labels
    OPERATOR = "operator"  # one Operator object


WorkKey = tuple[str, str, str]  # (WorkKind, namespace or "", name)


class WorkQueue:
    def __init__(
        self,
        base_delay: float = 0.05,
        max_delay: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self._lock = threading.Condition()
        self._queue: list[Hashable] = []
        self._queued: set[Hashable] = set()
        self._processing: set[Hashable] = set()
        self._dirty: set[Hashable] = set()
        self._delayed: list[tuple[float, int, Hashable]] = []
        self._counter = itertools.count()
        self._failures: dict[Hashable, int] = {}
        self._base = base_delay
        self._max = max_delay
        self._closed = False

    def add(self, key: Hashable) -> None:
        with self._lock:
            if self._closed:
                return
            if key in self._processing:
                self._dirty.add(key)
                return
            if key not in self._queued:
                self._queued.add(key)
                self._queue.append(key)
                self._lock.notify()

    def add_after(self, key: Hashable, delay: float) -> None:
        if delay <= 0:
            self.add(key)
            return
        with self._lock:
            heapq.heappush(self._delayed, (self._clock() + delay, next(self._counter), key))
            self._lock.notify()

    def retry(self, key: Hashable) -> float:
        with self._lock:
            failures = self._failures.get(key, 0)
            self._failures[key] = failures + 1
        # failures + 1 in a row now: the base delay doubled `failures` times, at most max (the
        # helper stops doubling at the cap, so a key failing for ever never overflows a float).
        delay = exponential_backoff(failures + 1, self._base, self._max)
        self.add_after(key, delay)
        return delay

    def forget(self, key: Hashable) -> None:
        with self._lock:
            self._failures.pop(key, None)

    def failures(self, key: Hashable) -> int:
        with self._lock:
            return self._failures.get(key, 0)

    def _promote_due(self) -> float | None:
        """Move due delayed keys into the queue; return seconds until the next one."""
        now = self._clock()
        while self._delayed and self._delayed[0][0] <= now:
            _, _, key = heapq.heappop(self._delayed)
            if key in self._processing:
                self._dirty.add(key)
            elif key not in self._queued:
                self._queued.add(key)
                self._queue.append(key)
        return self._delayed[0][0] - now if self._delayed else None

    def get(self, timeout: float | None = None) -> Hashable | None:
        """The next key to process, or None when closed or on timeout."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._lock:
            while True:
                if self._closed:
                    return None
                wait = self._promote_due()
                if self._queue:
                    key = self._queue.pop(0)
                    self._queued.discard(key)
                    self._processing.add(key)
                    return key
                if deadline is not None:
                    remaining = deadline - self._clock()
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                self._lock.wait(wait)

    def done(self, key: Hashable) -> None:
        with self._lock:
            self._processing.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                if key not in self._queued:
                    self._queued.add(key)
                    self._queue.append(key)
                    self._lock.notify()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def __len__(self) -> int:
        with self._lock:
            return len(self._queue) + len(self._delayed)
