"""Lanes of the work queue: which waiting key a free worker takes next (pure ordering).

A key waits in one lane; lane 0 is the most urgent. A free worker takes the oldest key of the
most urgent lane it may take from, with two bounds that keep the order fair:
- a lane may have a limit on how many of its keys are being processed at once (the bulk lane
  leaves a worker to the urgent one, so an install never waits behind a long pass of copies);
- a lane passed over `burst` times in a row while it had waiting keys gets the next turn
  (bulk work is slowed by urgent work, never starved by it).

Invariants:
- Within a lane, keys come out in the order they went in (FIFO).
- `pop` never returns a key of a lane at its limit; it returns None only when no waiting key
  may be taken now.
- A lane with waiting keys, not at its limit, is taken within `burst` + 1 pops.
- Pure: no clock, no threads, no I/O (the work queue holds the lock and does the waiting).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

DEFAULT_BURST = 8


@dataclass(frozen=True)
class LanePolicy:
    """How many lanes, each one's limit of keys in flight (None: no limit), and the burst."""

    limits: Sequence[int | None] = (None,)
    burst: int = DEFAULT_BURST


class Lanes:
    """The waiting keys by lane, and how many of each lane are being processed."""

    def __init__(self, policy: LanePolicy = LanePolicy()) -> None:
        self.policy = policy
        count = len(policy.limits)
        self._waiting: list[deque[Hashable]] = [deque() for _ in range(count)]
        self._in_flight = [0] * count
        self._passed_over = [0] * count

    @property
    def count(self) -> int:
        return len(self._waiting)

    def push(self, lane: int, key: Hashable) -> None:
        self._waiting[lane].append(key)

    def _eligible(self) -> list[int]:
        return [
            lane
            for lane, waiting in enumerate(self._waiting)
            if waiting
            and ((limit := self.policy.limits[lane]) is None or self._in_flight[lane] < limit)
        ]

    def pop(self) -> tuple[int, Hashable] | None:
        """The next (lane, key) to process (now counted in flight), or None."""
        eligible = self._eligible()
        if not eligible:
            return None
        starved = [lane for lane in eligible if self._passed_over[lane] >= self.policy.burst]
        chosen = starved[0] if starved else eligible[0]
        for lane in eligible:
            if lane > chosen:
                self._passed_over[lane] += 1
        self._passed_over[chosen] = 0
        self._in_flight[chosen] += 1
        return chosen, self._waiting[chosen].popleft()

    def finished(self, lane: int) -> None:
        """A key of `lane` is no longer being processed."""
        self._in_flight[lane] = max(0, self._in_flight[lane] - 1)

    def in_flight(self, lane: int) -> int:
        return self._in_flight[lane]

    def waiting(self, lane: int) -> int:
        return len(self._waiting[lane])

    def __len__(self) -> int:
        return sum(len(waiting) for waiting in self._waiting)
