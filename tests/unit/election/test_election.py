"""Leader election: the pure decisions (olm.election.decide), then the election loop
(olm.kube.lease.LeaderElector) over an in-memory Lease with an injected clock."""

from __future__ import annotations

import datetime
import threading
from typing import Any

import pytest

from olm.election.decide import (
    Action,
    LeaseRecord,
    Timing,
    decide,
    expired,
    lost,
    micro_time,
    release,
)
from olm.kube.errors import Conflict
from olm.kube.lease import LeaderElector

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
TIMING = Timing()


def at(seconds: float) -> datetime.datetime:
    return T0 + datetime.timedelta(seconds=seconds)


HELD_BY_B = LeaseRecord("b", 15.0, micro_time(T0), micro_time(T0), 3)
OURS = LeaseRecord("a", 15.0, micro_time(at(-100)), micro_time(T0), 3)
RELEASED = LeaseRecord("", 1.0, micro_time(T0), micro_time(T0), 3)
NO_DURATION = LeaseRecord("b", None, None, None, 0)


@pytest.mark.parametrize(
    ("case", "record", "now", "observed", "action", "holder", "transitions"),
    [
        ("no lease: create it", None, 0, 0, Action.CREATE, "a", 0),
        ("held, just seen", HELD_BY_B, 0, 0, Action.WAIT, "b", None),
        ("held, seen 14.9 s ago", HELD_BY_B, 14.9, 0, Action.WAIT, "b", None),
        ("held, unchanged for 15 s: expired", HELD_BY_B, 15, 0, Action.ACQUIRE, "a", 4),
        ("held, first seen late: not expired", HELD_BY_B, 20, 10, Action.WAIT, "b", None),
        ("ours: renew, same transitions", OURS, 5, 0, Action.RENEW, "a", 3),
        ("released: take it at once", RELEASED, 0, 0, Action.ACQUIRE, "a", 4),
        ("no duration: the default 15 s", NO_DURATION, 14, 0, Action.WAIT, "b", None),
        ("no duration, 15 s", NO_DURATION, 15, 0, Action.ACQUIRE, "a", 1),
    ],
)
def test_decide(
    case: str,
    record: LeaseRecord | None,
    now: float,
    observed: float,
    action: Action,
    holder: str,
    transitions: int | None,
) -> None:
    decision = decide(record, "a", at(now), at(observed), TIMING)
    assert (decision.action, decision.holder) == (action, holder), case
    if transitions is None:
        assert decision.spec is None
    else:
        assert decision.spec is not None
        assert decision.spec["holderIdentity"] == "a"
        assert decision.spec["leaseTransitions"] == transitions
        assert decision.spec["leaseDurationSeconds"] == 15
        assert decision.spec["renewTime"] == micro_time(at(now))


def test_renewing_keeps_acquire_time_and_taking_over_sets_it() -> None:
    renew = decide(OURS, "a", at(5), T0)
    assert renew.spec is not None and renew.spec["acquireTime"] == OURS.acquire_time
    take = decide(HELD_BY_B, "a", at(20), T0)
    assert take.spec is not None and take.spec["acquireTime"] == micro_time(at(20))


@pytest.mark.parametrize(
    ("since_renewal", "is_lost"), [(0, False), (9.9, False), (10, True), (30, True)]
)
def test_lost_after_the_renew_deadline(since_renewal: float, is_lost: bool) -> None:
    assert lost(T0, at(since_renewal), TIMING) is is_lost


@pytest.mark.parametrize(("seconds", "result"), [(0, False), (0.999, False), (1, True)])
def test_expired(seconds: float, result: bool) -> None:
    assert expired(T0, 1.0, at(seconds)) is result


def test_release_only_our_own_lease() -> None:
    spec = release(OURS, "a", at(3))
    assert spec is not None
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1
    assert spec["leaseTransitions"] == 3
    assert release(HELD_BY_B, "a", at(3)) is None


def test_lease_record_from_the_wire() -> None:
    lease = {
        "spec": {
            "holderIdentity": "pod-1",
            "leaseDurationSeconds": 15,
            "acquireTime": "2026-01-01T12:00:00.000000Z",
            "renewTime": "2026-01-01T12:00:05.000000Z",
            "leaseTransitions": 2,
        }
    }
    assert LeaseRecord.from_lease(lease) == LeaseRecord(
        "pod-1", 15.0, "2026-01-01T12:00:00.000000Z", "2026-01-01T12:00:05.000000Z", 2
    )
    assert LeaseRecord.from_lease({}) == LeaseRecord()
    assert micro_time(T0) == "2026-01-01T12:00:00.000000Z"


# ----- the loop over an in-memory Lease -------------------------------------------------------


class MemoryLease:
    """One Lease with resourceVersion compare-and-swap, as the API server keeps it."""

    def __init__(self) -> None:
        self.namespace, self.name = "olm", "olm-py"
        self.lease: dict[str, Any] | None = None
        self.version = 0
        self.down = False

    def get(self) -> dict[str, Any] | None:
        if self.down:
            raise Conflict("unreachable")
        return None if self.lease is None else dict(self.lease)

    def create(self, spec: dict[str, Any]) -> dict[str, Any]:
        if self.down or self.lease is not None:
            raise Conflict("exists")
        return self._store(spec)

    def update(self, lease: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        if self.down or self.lease is None:
            raise Conflict("gone")
        if lease["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
            raise Conflict("stale")
        return self._store(spec)

    def _store(self, spec: dict[str, Any]) -> dict[str, Any]:
        self.version += 1
        self.lease = {"metadata": {"resourceVersion": str(self.version)}, "spec": dict(spec)}
        return dict(self.lease)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += datetime.timedelta(seconds=seconds)


def electors(lease: MemoryLease, clock: Clock) -> tuple[LeaderElector, LeaderElector]:
    return (
        LeaderElector(lease, "a", TIMING, clock),  # type: ignore[arg-type]
        LeaderElector(lease, "b", TIMING, clock),  # type: ignore[arg-type]
    )


def test_one_leader_and_a_standby_takes_over_after_the_lease_duration() -> None:
    lease, clock = MemoryLease(), Clock()
    a, b = electors(lease, clock)
    assert a.try_acquire_or_renew() is True
    assert b.try_acquire_or_renew() is False and b.holder == "a"
    # a renews every 2 s: b never sees an expired lease
    for _ in range(20):
        clock.advance(2)
        assert a.try_acquire_or_renew() is True
        assert b.try_acquire_or_renew() is False
    # a dies: b keeps seeing the same record and takes over 15 s after it first saw it
    waited = 0.0
    while not b.try_acquire_or_renew():
        clock.advance(2)
        waited += 2
    assert 14 <= waited <= 16
    assert lease.lease is not None
    assert lease.lease["spec"]["holderIdentity"] == "b"
    assert lease.lease["spec"]["leaseTransitions"] == 1
    # the old leader, back, finds it taken
    assert a.try_acquire_or_renew() is False and a.holder == "b"


def test_a_released_lease_is_taken_at_the_next_retry() -> None:
    lease, clock = MemoryLease(), Clock()
    a, b = electors(lease, clock)
    a.try_acquire_or_renew()
    a.leading.set()
    b.try_acquire_or_renew()
    a.release()
    clock.advance(2)
    assert b.try_acquire_or_renew() is True


def test_racing_candidates_cannot_both_win() -> None:
    lease, clock = MemoryLease(), Clock()
    a, b = electors(lease, clock)
    lease.create({"holderIdentity": "x", "leaseDurationSeconds": 15})
    assert not a.try_acquire_or_renew() and not b.try_acquire_or_renew()
    clock.advance(15)
    stale = lease.get()  # what b reads just before a's takeover lands
    assert a.try_acquire_or_renew() is True
    lease.get = lambda: stale  # type: ignore[method-assign]
    assert b.try_acquire_or_renew() is False  # b's write carries the old resourceVersion
    assert lease.lease is not None and lease.lease["spec"]["holderIdentity"] == "a"


def test_run_reports_loss_when_renewals_fail_past_the_deadline() -> None:
    lease, clock = MemoryLease(), Clock()
    a, _ = electors(lease, clock)
    started, lost_event, stop = threading.Event(), threading.Event(), threading.Event()

    class Ticking(threading.Event):
        """A stop flag whose wait advances the fake clock instead of sleeping."""

        def wait(self, timeout: float | None = None) -> bool:
            clock.advance(timeout or 0)
            if clock.now >= at(6):
                lease.down = True  # the API server becomes unreachable
            return stop.is_set() or clock.now > at(120)

    a.run(Ticking(), started.set, lost_event.set)
    assert started.is_set() and lost_event.is_set()
    assert not a.leading.is_set()
    # lost at the first failed renewal 10 s after the last good one (t=4): at t=14
    assert clock.now == at(14)


def test_run_reports_loss_at_once_when_someone_else_holds_it() -> None:
    lease, clock = MemoryLease(), Clock()
    a, _ = electors(lease, clock)
    lost_event = threading.Event()

    class Ticking(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            clock.advance(timeout or 0)
            if clock.now == at(4):
                assert lease.lease is not None
                lease.lease["spec"]["holderIdentity"] = "intruder"
            return clock.now > at(60)

    a.run(Ticking(), lambda: None, lost_event.set)
    assert lost_event.is_set() and clock.now == at(4) and a.holder == "intruder"


@pytest.mark.parametrize(
    ("seen_for", "wait"), [(0, 2.0), (12, 2.0), (13.5, 1.51), (14.99, 0.05), (20, 0.05)]
)
def test_a_standby_tries_again_when_the_lease_it_watches_expires(
    seen_for: float, wait: float
) -> None:
    lease, clock = MemoryLease(), Clock()
    a, b = electors(lease, clock)
    a.try_acquire_or_renew()
    b.try_acquire_or_renew()
    clock.advance(seen_for)
    assert b.next_try() == pytest.approx(wait)
