"""Exponential backoff: how long to wait after some number of failures in a row.

Every loop in olm-py that retries (a stale plan, a forbidden write, a failed image pull or
unpack, an unreachable registry, the sample operator's reconcile) waits
`exponential_backoff(failures, first, cap)`: `first` after the first failure, doubled after
each further one, never more than `cap`.

Invariants: pure; `failures` below 1 counts as 1; the result is exactly `first * 2 ** (n - 1)`
(doubling a float is exact) until it reaches `cap`, then `cap`; however large `failures` is,
no more doublings are computed than reaching `cap` takes (no overflow).
"""

from __future__ import annotations


def exponential_backoff(failures: int, first: float, cap: float | None = None) -> float:
    """The wait after `failures` failures in a row: `first`, doubled per further failure, at
    most `cap` (no limit when None)."""
    delay = first
    for _ in range(max(failures - 1, 0)):
        if cap is not None and delay >= cap:
            break
        delay *= 2
    return delay if cap is None else min(delay, cap)
