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
- Installs first: a key waits in its kind's lane (`LANE_OF_KIND`): user-visible state of one
  object (CSV phases, InstallPlans, resolution, groups, catalogs, a group's aggregated roles,
  Operator objects and their labels) before bulk fan-out (copied CSVs, copied RBAC). With `bulk_limit`, at most that many bulk keys are
  processed at once, so a worker is always left for an install; bulk work is never starved
  (`olm.controllers.lanes`). Keys of one lane come out in the order they were added.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable, Hashable
from enum import IntEnum, StrEnum

from olm.api.backoff import exponential_backoff
from olm.controllers.lanes import DEFAULT_BURST, LanePolicy, Lanes


class WorkKind(StrEnum):
    """The controller a work key is for (each controller's `kind`; app.py dispatches on it)."""

    CSV = "csv"
    OPERATOR_GROUP = "operatorgroup"
    CATALOG_SOURCE = "catalogsource"
    INSTALL_PLAN = "installplan"
    NAMESPACE = "namespace"  # the Subscription controller resolves a whole namespace
    SCOPE = "scope"  # one original CSV across its group's scope
    SCOPE_ROLES = "scope-roles"  # one original CSV's RBAC across its scope, without copies
    SCOPE_NAMESPACE = "scope-namespace"  # one namespace's labels, copies and copied RBAC
    SCOPE_GROUP = "scope-group"  # one group's aggregation ClusterRoles
    OLM_CONFIG = "olmconfig"
    ADOPTION = "adoption"  # one namespace's component labels
    OPERATOR = "operator"  # one Operator object


WorkKey = tuple[str, str, str]  # (WorkKind, namespace or "", name)


class Lane(IntEnum):
    """The work queue's lanes, most urgent first."""

    INSTALL = 0  # what a user waits for on one object: phases, plans, resolution, group status
    BULK = 1  # fan-out over many namespaces or objects: copies, copied RBAC, labels, aggregates


LANE_OF_KIND: dict[WorkKind, Lane] = {
    WorkKind.CSV: Lane.INSTALL,
    WorkKind.OPERATOR_GROUP: Lane.INSTALL,
    WorkKind.CATALOG_SOURCE: Lane.INSTALL,
    WorkKind.INSTALL_PLAN: Lane.INSTALL,
    WorkKind.NAMESPACE: Lane.INSTALL,
    WorkKind.SCOPE: Lane.BULK,
    # The RBAC part of a scope pass (per-API ClusterRoles, lifted or copied RBAC), when a CSV
    # comes or changes phase: OLM writes it with the install, not after the copies.
    WorkKind.SCOPE_ROLES: Lane.INSTALL,
    WorkKind.SCOPE_NAMESPACE: Lane.BULK,
    # One object's derived state a user reads right after an install: a group's aggregated
    # ClusterRoles, an Operator object, its components' labels. Quick keys, one per object;
    # behind a backlog of copies they came minutes late (corpus run, 8 installs at once), where
    # OLM writes them in the same pass as the install.
    WorkKind.SCOPE_GROUP: Lane.INSTALL,
    WorkKind.OLM_CONFIG: Lane.BULK,
    WorkKind.ADOPTION: Lane.INSTALL,
    WorkKind.OPERATOR: Lane.INSTALL,
}


def lane_of(key: Hashable) -> Lane:
    """A work key's lane by its kind; any other key is urgent."""
    if isinstance(key, tuple) and key and key[0] in LANE_OF_KIND:
        return LANE_OF_KIND[WorkKind(key[0])]
    return Lane.INSTALL


class WorkQueue:
    def __init__(
        self,
        base_delay: float = 0.05,
        max_delay: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        bulk_limit: int | None = None,
        burst: int = DEFAULT_BURST,
    ) -> None:
        self._clock = clock
        self._lock = threading.Condition()
        self._lanes = Lanes(LanePolicy(limits=(None, bulk_limit), burst=burst))
        self._queued: set[Hashable] = set()
        self._processing: dict[Hashable, int] = {}  # key -> its lane
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
                self._enqueue(key)
                self._lock.notify()

    def _enqueue(self, key: Hashable) -> None:
        self._queued.add(key)
        self._lanes.push(lane_of(key), key)

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
                self._enqueue(key)
        return self._delayed[0][0] - now if self._delayed else None

    def get(self, timeout: float | None = None) -> Hashable | None:
        """The next key to process, or None when closed or on timeout."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._lock:
            while True:
                if self._closed:
                    return None
                wait = self._promote_due()
                picked = self._lanes.pop()
                if picked is not None:
                    lane, key = picked
                    self._queued.discard(key)
                    self._processing[key] = lane
                    return key
                if deadline is not None:
                    remaining = deadline - self._clock()
                    if remaining <= 0:
                        return None
                    wait = remaining if wait is None else min(wait, remaining)
                self._lock.wait(wait)

    def done(self, key: Hashable) -> None:
        with self._lock:
            lane = self._processing.pop(key, None)
            if lane is not None:
                self._lanes.finished(lane)
            if key in self._dirty:
                self._dirty.discard(key)
                if key not in self._queued:
                    self._enqueue(key)
            # Workers may now take a key (re-added, or of a lane that was at its limit).
            self._lock.notify_all()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def __len__(self) -> int:
        with self._lock:
            return len(self._lanes) + len(self._delayed)
