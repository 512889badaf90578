"""Waiting: trying something again every `interval` seconds until it holds or time runs out.

Every loop in olm-py that waits on something outside it (the commands waiting on the cluster:
`olm install`, `olm uninstall`, `olm rollback`, the demo; the dev tooling waiting on its
processes; the sample operator waiting for its certificate) is `for _ in attempts(...)`: the
loop's body makes one attempt and leaves the loop (return, break, raise) when it is done;
`attempts` owns the timing. What the loop says, and what it does when time runs out (after the
`for`), stays the loop's own. Retrying after failures at growing intervals is
`olm.api.backoff.exponential_backoff`'s job, not this one's.

Invariants:
- The first attempt is at once; each later one follows an `interval` of sleep.
- After an attempt, the attempts end once `timeout` seconds have passed since the first
  (`math.inf`: never), so there is always at least one, and the last may start up to one
  interval after the deadline (no attempt is cut short).
- A `sleep` that returns True ends the attempts at once: pass `threading.Event.wait` to stop
  waiting when the event is set (`time.sleep` returns None).
- Time is read from `clock` and spent in `sleep`, looked up when the wait starts, so tests
  drive a wait with a fake clock instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator


def attempts(
    timeout: float,
    interval: float,
    *,
    clock: Callable[[], float] | None = None,
    sleep: Callable[[float], object] | None = None,
) -> Iterator[int]:
    """Yield 0, 1, 2, ... (the attempt's number), at once and then every `interval` seconds,
    until `timeout` seconds have passed or `sleep` returns True (see the module's invariants)."""
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    deadline = clock() + timeout
    number = 0
    while True:
        yield number
        if clock() >= deadline or sleep(interval) is True:
            return
        number += 1
