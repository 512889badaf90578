"""Who holds the Lease, and what a candidate writes next: pure decisions over plain data.

The rules are client-go's leader election (which controller-runtime uses):
- A lease is free when it has no holder, or when the candidate has seen the same record for
  longer than its lease duration. Expiry is judged by the candidate's own clock from the
  moment it first *observed* that record, never by comparing its clock with the holder's
  renewTime, so clock skew between machines cannot make two leaders.
- Taking a lease from another holder (or a free one) counts one more leaseTransitions and
  sets acquireTime; renewing keeps acquireTime and moves renewTime.
- A leader that has not renewed successfully for `renew_deadline` gives up leadership (the
  caller stops reconciling), before anyone else may see the lease expired
  (renew_deadline < lease_duration).
- Releasing on a graceful stop empties the holder so a standby need not wait for expiry.

Times are timezone-aware datetimes passed in by the caller (an injected clock in tests).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class Timing:
    """controller-runtime's defaults (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s)."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


DEFAULT_TIMING = Timing()


@dataclass(frozen=True)
class LeaseRecord:
    """The parts of a Lease's spec that election reads (all optional on the wire)."""

    holder: str = ""
    duration: float | None = None
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        duration = spec.get("leaseDurationSeconds")
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            duration=float(duration) if duration is not None else None,
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )


class Action(StrEnum):
    CREATE = "create"  # no Lease yet: create it, holding it
    ACQUIRE = "acquire"  # free or expired: take it over (one more transition)
    RENEW = "renew"  # ours: move renewTime
    WAIT = "wait"  # held by someone else and not expired


@dataclass(frozen=True)
class Decision:
    action: Action
    spec: dict[str, Any] | None  # the Lease spec to write (None for WAIT)
    holder: str  # who holds the lease if the write succeeds (or still holds it)


def micro_time(moment: datetime.datetime) -> str:
    """A Kubernetes MicroTime (RFC 3339 with microseconds, UTC)."""
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def expired(observed_at: datetime.datetime, duration: float, now: datetime.datetime) -> bool:
    """Whether a record first observed at `observed_at` has outlived `duration` seconds."""
    return (now - observed_at).total_seconds() >= duration


def _spec(
    identity: str, now: datetime.datetime, timing: Timing, acquired: str, transitions: int
) -> dict[str, Any]:
    return {
        "holderIdentity": identity,
        "leaseDurationSeconds": int(timing.lease_duration),
        "acquireTime": acquired,
        "renewTime": micro_time(now),
        "leaseTransitions": transitions,
    }


def decide(
    record: LeaseRecord | None,
    identity: str,
    now: datetime.datetime,
    observed_at: datetime.datetime,
    timing: Timing = DEFAULT_TIMING,
) -> Decision:
    """What `identity` does with the Lease `record` (None: no Lease), first seen unchanged
    at `observed_at`, at time `now`."""
    if record is None:
        return Decision(Action.CREATE, _spec(identity, now, timing, micro_time(now), 0), identity)
    if record.holder == identity:
        acquired = record.acquire_time or micro_time(now)
        return Decision(
            Action.RENEW, _spec(identity, now, timing, acquired, record.transitions), identity
        )
    duration = record.duration if record.duration is not None else timing.lease_duration
    if record.holder and not expired(observed_at, duration, now):
        return Decision(Action.WAIT, None, record.holder)
    return Decision(
        Action.ACQUIRE,
        _spec(identity, now, timing, micro_time(now), record.transitions + 1),
        identity,
    )


def lost(last_renewed: datetime.datetime, now: datetime.datetime, timing: Timing) -> bool:
    """A leader whose last successful renewal is `renew_deadline` old must stop leading."""
    return (now - last_renewed).total_seconds() >= timing.renew_deadline


def release(record: LeaseRecord, identity: str, now: datetime.datetime) -> dict[str, Any] | None:
    """The spec that hands the lease back on a graceful stop (None when it is not ours)."""
    if record.holder != identity:
        return None
    return {
        "holderIdentity": "",
        "leaseDurationSeconds": 1,
        "acquireTime": record.acquire_time,
        "renewTime": micro_time(now),
        "leaseTransitions": record.transitions,
    }
