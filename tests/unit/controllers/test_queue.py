"""The work queue: de-duplication, one worker per key, backoff.

Time is a fake clock the tests move by hand; `get(timeout=0)` never waits, so no test sleeps or
measures wall-clock time.
"""

from __future__ import annotations

import threading

import pytest

from olm.controllers.queue import WorkQueue


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_a_queued_key_is_queued_once() -> None:
    queue = WorkQueue()
    queue.add("a")
    queue.add("a")
    assert len(queue) == 1


def test_a_key_added_while_processing_comes_back_after_done() -> None:
    queue = WorkQueue()
    queue.add("a")
    assert queue.get(timeout=0) == "a"
    queue.add("a")
    assert queue.get(timeout=0) is None, "never handed to a second worker while processing"
    queue.done("a")
    assert queue.get(timeout=0) == "a"


def test_keys_come_out_in_the_order_they_were_added() -> None:
    queue = WorkQueue()
    for key in ("b", "a", "c", "a"):
        queue.add(key)
    assert [queue.get(timeout=0) for _ in range(4)] == ["b", "a", "c", None]


def test_retry_backs_off_exponentially_and_forget_resets() -> None:
    queue = WorkQueue(base_delay=0.01, max_delay=1)
    delays = [queue.retry("k") for _ in range(4)]
    assert delays == [0.01, 0.02, 0.04, 0.08]
    queue.forget("k")
    assert queue.retry("k") == 0.01


def test_backoff_is_capped() -> None:
    queue = WorkQueue(base_delay=1, max_delay=5)
    assert [queue.retry("k") for _ in range(5)] == [1, 2, 4, 5, 5]
    assert queue.failures("k") == 5


def test_a_key_failing_for_ever_stays_at_the_cap() -> None:
    # base * 2.0**failures would overflow a float after ~1,024 failures; the cap holds instead.
    queue = WorkQueue(base_delay=0.05, max_delay=300.0)
    assert [queue.retry("k") for _ in range(2_000)][-1] == 300.0


@pytest.mark.parametrize(
    ("elapsed", "expected"),
    [(0.0, None), (9.999, None), (10.0, "late"), (60.0, "late")],
)
def test_a_delayed_key_arrives_once_its_delay_has_passed(elapsed: float, expected: str) -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    queue.add_after("late", 10)
    clock.advance(elapsed)
    assert queue.get(timeout=0) == expected


def test_delayed_keys_arrive_in_due_order_and_a_due_key_joins_the_back_of_the_queue() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    queue.add_after("second", 2)
    queue.add_after("first", 1)
    queue.add("now")
    clock.advance(2)
    assert [queue.get(timeout=0) for _ in range(4)] == ["now", "first", "second", None]


def test_a_retried_key_waits_for_its_backoff() -> None:
    clock = FakeClock()
    queue = WorkQueue(base_delay=1, clock=clock)
    queue.add("k")
    assert queue.get(timeout=0) == "k"
    queue.retry("k")
    queue.done("k")
    assert queue.get(timeout=0) is None
    clock.advance(1)
    assert queue.get(timeout=0) == "k"


def test_a_key_that_falls_due_while_processing_comes_back_after_done() -> None:
    clock = FakeClock()
    queue = WorkQueue(clock=clock)
    queue.add("k")
    assert queue.get(timeout=0) == "k"
    queue.add_after("k", 1)
    clock.advance(1)
    assert queue.get(timeout=0) is None, "never handed to a second worker while processing"
    queue.done("k")
    assert queue.get(timeout=0) == "k"


def test_a_blocked_worker_wakes_when_a_key_is_added() -> None:
    queue = WorkQueue()
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(queue.get()))
    worker.start()
    queue.add("a")
    worker.join(10)
    assert results == ["a"]


def test_close_releases_waiting_workers() -> None:
    queue = WorkQueue()
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(queue.get()))
    worker.start()
    queue.close()
    worker.join(10)
    assert results == [None]
    assert queue.get(timeout=0) is None, "a closed queue hands out nothing"
