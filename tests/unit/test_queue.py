"""The work queue: de-duplication, one worker per key, backoff."""

from __future__ import annotations

import threading
import time

from olm.controllers.queue import WorkQueue


def test_a_queued_key_is_queued_once() -> None:
    queue = WorkQueue()
    queue.add("a")
    queue.add("a")
    assert len(queue) == 1


def test_a_key_added_while_processing_comes_back_after_done() -> None:
    queue = WorkQueue()
    queue.add("a")
    assert queue.get(timeout=1) == "a"
    queue.add("a")
    assert queue.get(timeout=0.05) is None, "never handed to a second worker while processing"
    queue.done("a")
    assert queue.get(timeout=1) == "a"


def test_retry_backs_off_exponentially_and_forget_resets() -> None:
    queue = WorkQueue(base_delay=0.01, max_delay=1)
    delays = [queue.retry("k") for _ in range(4)]
    assert delays == [0.01, 0.02, 0.04, 0.08]
    queue.forget("k")
    assert queue.retry("k") == 0.01


def test_delayed_keys_arrive_after_their_delay() -> None:
    queue = WorkQueue()
    started = time.monotonic()
    queue.add_after("late", 0.1)
    assert queue.get(timeout=2) == "late"
    assert time.monotonic() - started >= 0.09


def test_close_releases_waiting_workers() -> None:
    queue = WorkQueue()
    results: list[object] = []
    worker = threading.Thread(target=lambda: results.append(queue.get()))
    worker.start()
    queue.close()
    worker.join(2)
    assert results == [None]
