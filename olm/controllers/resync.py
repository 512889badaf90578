"""Keeping the cache true when watches have gaps: the periodic resync, and relists after a gap.

kopf lists a kind again when its watch has lost its place (410 Gone after an etcd compaction,
a stream that ended in an error) and delivers what it lists as events of no type; what was
deleted meanwhile it never reports. The store would keep such objects, and the controllers act
on them: an InstallPlan that no longer exists carried out, a deleted Subscription resolved.

Invariants:
- Every `every` seconds: relist every watched kind (purging what a gap hid), then wake every
  controller's objects (the periodic resync).
- When kopf lists any kind again after the sync barrier, olm-py relists every watched kind
  (metadata only), `GAP_DELAY` seconds after the last such listing event (so kopf's own
  listing has been stored): what a gap hid is purged within seconds, not at the next resync.
  Every kind, because a kind whose relist finds nothing calls no handler (no listing event),
  and a gap seldom comes alone (an API server restart or a compaction hits every watch). The
  listing events of the first `STARTUP_GRACE` seconds after the barrier are the initial
  listing being delivered, not a gap, and ask nothing.
- A purged object wakes what its deletion would have woken.
- No answer from the API server ends neither: a warning line, and the next round tries again.
"""

from __future__ import annotations

import logging
import threading
import time

from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.controllers.watch import WATCHED, Lister, related_keys, relist, resync_keys
from olm.kube.errors import API_ERRORS

log = logging.getLogger("olm.watch")
GAP_DELAY = 2.0
STARTUP_GRACE = 30.0
TICK = 1.0


class Gaps:
    """Whether kopf listed a kind again after the barrier, and when to relist (thread-safe:
    the watch handlers note listings on the event loop, the resync thread takes them)."""

    def __init__(self, store: Store, delay: float = GAP_DELAY, grace: float = STARTUP_GRACE):
        self.store, self.delay, self.grace = store, delay, grace
        self._lock = threading.Lock()
        self._due: float | None = None
        self._kinds: set[StoreKind] = set()
        self._synced_at: float | None = None

    def listed(self, kind: StoreKind, now: float | None = None) -> None:
        """A listing event (no type) of `kind` arrived."""
        now = time.monotonic() if now is None else now
        if not self.store.synced.is_set():
            return
        with self._lock:
            if self._synced_at is None:
                self._synced_at = now
            if now - self._synced_at < self.grace:
                return
            self._due = now + self.delay  # the last listing event sets the time
            self._kinds.add(kind)

    def take_due(self, now: float | None = None) -> list[StoreKind]:
        """The kinds kopf listed again, once a relist (of every kind) is due; [] otherwise."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._due is None or self._due > now:
                return []
            listed, self._due, self._kinds = sorted(self._kinds), None, set()
        return listed

    def clear(self) -> None:
        """A full relist ran: nothing is due."""
        with self._lock:
            self._due, self._kinds = None, set()


def relist_and_wake(
    store: Store, lister: Lister, queue: WorkQueue, kinds: list[StoreKind] | None = None
) -> int:
    """Relist `kinds` (every watched kind when None); wake what each purge would have woken."""
    watched = WATCHED if kinds is None else tuple(w for w in WATCHED if w.kind in kinds)
    count = 0
    for one in watched:  # kind by kind: what was purged is woken even if a later list fails
        for kind, entry in relist(store, lister, (one,)):
            count += 1
            for key in related_keys(kind, entry, store, entry, deleted=True):
                queue.add(key)
    return count


def run(
    queue: WorkQueue,
    store: Store,
    lister: Lister,
    every: float,
    stop: threading.Event,
    gaps: Gaps | None = None,
) -> None:
    """The resync thread: gap relists as they fall due, the full resync every `every` s."""
    next_full = time.monotonic() + every
    while not stop.wait(min(TICK, every)):
        if not store.synced.is_set():
            next_full = time.monotonic() + every  # the barrier's own full wake-up comes first
            continue
        now = time.monotonic()
        full = now >= next_full
        listed = gaps.take_due(now) if gaps is not None else []
        if not full and not listed:
            continue
        if gaps is not None:
            gaps.clear()
        try:
            purged = relist_and_wake(store, lister, queue)
            if not full:
                log.info("relisted after a watch gap (%s): %d purged", ", ".join(listed), purged)
        except API_ERRORS as exc:  # also no answer: the resync thread must live on
            log.warning("relist failed (%s); the next round tries again", exc)
            if gaps is not None:
                for kind in listed:
                    gaps.listed(kind)
        if full:
            next_full = now + every
            for key in resync_keys(store):
                queue.add(key)
