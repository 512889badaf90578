"""`olm.waiting.attempts`: the first attempt at once, one per interval after it, none started
once the timeout has passed after an attempt, and a sleep that returns True stops them.

No test sleeps: a fake clock advances only when the fake sleep is called."""

from __future__ import annotations

import math
import threading

import pytest

from olm.waiting import attempts


class FakeTime:
    """A clock that moves only by sleeping; records when each attempt started."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def started(timeout: float, interval: float, fake: FakeTime, limit: int = 1000) -> list[float]:
    """When each attempt began (seconds after the wait began)."""
    begun, times = fake.now, []
    for number in attempts(timeout, interval, clock=fake.clock, sleep=fake.sleep):
        assert number == len(times)
        times.append(fake.now - begun)
        if len(times) >= limit:
            break
    return times


@pytest.mark.parametrize(
    ("timeout", "interval", "expected"),
    [
        (0.0, 1.0, [0.0]),  # always one attempt
        (-5.0, 1.0, [0.0]),
        (3.0, 1.0, [0.0, 1.0, 2.0, 3.0]),  # the attempt at the deadline is the last
        (2.5, 1.0, [0.0, 1.0, 2.0, 3.0]),  # the last one may start up to an interval late
        (1.0, 0.25, [0.0, 0.25, 0.5, 0.75, 1.0]),
    ],
)
def test_attempts_until_the_timeout(timeout: float, interval: float, expected: list[float]) -> None:
    fake = FakeTime()
    assert started(timeout, interval, fake) == expected
    assert fake.slept == [interval] * (len(expected) - 1), "no sleep after the last attempt"


def test_the_loop_leaving_early_sleeps_no_more() -> None:
    fake = FakeTime()
    assert started(60.0, 2.0, fake, limit=3) == [0.0, 2.0, 4.0]
    assert fake.slept == [2.0, 2.0]


def test_an_infinite_timeout_never_ends_by_itself() -> None:
    fake = FakeTime()
    assert len(started(math.inf, 1.0, fake, limit=500)) == 500


def test_a_sleep_returning_true_stops_the_attempts() -> None:
    stop = threading.Event()
    seen = []
    for number in attempts(math.inf, 0.0, sleep=stop.wait):
        seen.append(number)
        if number == 2:
            stop.set()  # the sleep after this attempt returns True at once
    assert seen == [0, 1, 2]


def test_the_default_clock_and_sleep_are_real() -> None:
    assert list(attempts(0.0, 0.0)) == [0]
    assert len(list(attempts(0.05, 0.01))) >= 2
