"""Leader election on a coordination.k8s.io/v1 Lease: the Lease's I/O and the election loop.

The decisions (free, expired, ours, lost) are `olm.election.decide`'s; this module reads and
writes the Lease and runs the loop client-go runs:
- acquire: every `retry_period`, read the Lease and create/take it when `decide` says so;
- lead: every `retry_period`, renew; a renewal that keeps failing for `renew_deadline`, or a
  Lease found held by someone else, ends leadership (`on_lost`), never silently;
- on a graceful stop the leader hands the Lease back (`release`), so a standby takes over at
  its next retry instead of after the lease duration.

Writes are optimistic: an update carries the resourceVersion read, so two candidates racing
for the same Lease cannot both win (the API server answers 409 to the loser).

Not `kubernetes.leaderelection`: that one reads the package's global client configuration,
compares naive local timestamps, and cannot take an injected clock.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from olm.api.conditions import utc_now
from olm.election.decide import (
    DEFAULT_TIMING,
    Action,
    LeaseRecord,
    Timing,
    decide,
    lost,
    release,
)
from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.wire import decode_body

log = logging.getLogger("olm.leader")

API_VERSION = "coordination.k8s.io/v1"
Clock = Callable[[], datetime.datetime]


class LeaseLock:
    """GET/POST/PUT of one Lease, each with a request timeout (a hung request must not outlive
    the renew deadline)."""

    def __init__(
        self, api: client.ApiClient, namespace: str, name: str, timeout: float = 5.0
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.timeout = timeout

    @property
    def _collection(self) -> str:
        return f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        method_, url, headers, _, _ = self.api.param_serialize(
            method,
            path,
            header_params={"Content-Type": "application/json", "Accept": "application/json"},
            auth_settings=["BearerToken"],
        )
        try:
            response = self.api.call_api(
                method_, url, header_params=headers, body=body, _request_timeout=self.timeout
            )
            data = response.read()
        except ApiException as exc:
            raise GatewayError(f"{method} {path} failed: {exc}", exc.status or 0) from exc
        except Exception as exc:  # timeouts and connection errors of urllib3
            raise GatewayError(f"{method} {path} failed: {exc}", 0) from exc
        if response.status == 404:
            raise NotFound(path)
        if response.status == 409:
            raise Conflict(f"{path}: lease changed meanwhile")
        if response.status >= 400:
            raise GatewayError(f"{method} {path} failed ({response.status})", response.status)
        return decode_body(data)

    def get(self) -> dict[str, Any] | None:
        try:
            found: dict[str, Any] = self._call("GET", f"{self._collection}/{self.name}")
        except NotFound:
            return None
        return found

    def create(self, spec: dict[str, Any]) -> dict[str, Any]:
        body = {
            "apiVersion": API_VERSION,
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": spec,
        }
        created: dict[str, Any] = self._call("POST", self._collection, body)
        return created

    def update(self, lease: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
        """Replace the spec of `lease` as read (its resourceVersion makes this a CAS)."""
        body = {**lease, "spec": spec}
        updated: dict[str, Any] = self._call("PUT", f"{self._collection}/{self.name}", body)
        return updated


class LeaderElector:
    def __init__(
        self,
        lock: LeaseLock,
        identity: str,
        timing: Timing = DEFAULT_TIMING,
        clock: Clock = utc_now,
    ) -> None:
        self.lock = lock
        self.identity = identity
        self.timing = timing
        self.clock = clock
        self.leading = threading.Event()
        self.holder = ""  # who holds the lease, as last seen
        self._observed: LeaseRecord | None = None
        self._observed_at = clock()
        self._lease: dict[str, Any] | None = None

    @property
    def description(self) -> str:
        return f"Lease {self.lock.namespace}/{self.lock.name}"

    def try_acquire_or_renew(self) -> bool:
        """One round: True when this candidate holds the lease afterwards."""
        now = self.clock()
        try:
            lease = self.lock.get()
        except GatewayError as exc:
            log.warning("reading %s failed: %s", self.description, exc)
            return False
        record = LeaseRecord.from_lease(lease) if lease is not None else None
        if record != self._observed:
            self._observed, self._observed_at = record, now
        decision = decide(record, self.identity, now, self._observed_at, self.timing)
        self.holder = decision.holder if decision.action == Action.WAIT else self.holder
        if decision.action == Action.WAIT:
            return False
        assert decision.spec is not None
        try:
            if lease is None:
                lease = self.lock.create(decision.spec)
            else:
                lease = self.lock.update(lease, decision.spec)
        except GatewayError as exc:  # Conflict: another candidate wrote first
            log.debug("writing %s failed: %s", self.description, exc)
            return False
        self._lease = lease
        self._observed, self._observed_at = LeaseRecord.from_lease(lease), now
        self.holder = self.identity
        if decision.action == Action.ACQUIRE and record is not None and record.holder:
            log.info("%s taken over from %s (expired)", self.description, record.holder)
        return True

    def next_try(self) -> float:
        """Seconds until a standby tries again: the retry period, or less when the lease it
        watches expires sooner (so a takeover comes at expiry, not up to a retry later)."""
        record = self._observed
        if record is None or not record.holder:
            return self.timing.retry_period
        duration = record.duration if record.duration is not None else self.timing.lease_duration
        left = duration - (self.clock() - self._observed_at).total_seconds()
        return max(0.05, min(self.timing.retry_period, left + 0.01))

    def run(
        self,
        stop: threading.Event,
        on_started: Callable[[], None],
        on_lost: Callable[[], None],
    ) -> None:
        """Acquire, lead, and return when leadership is lost (after `on_lost`) or `stop` is set."""
        log.info("waiting to lead: %s as %s", self.description, self.identity)
        waited_for = ""
        while not self.try_acquire_or_renew():
            if self.holder and self.holder != waited_for:
                log.info("%s is held by %s; standing by", self.description, self.holder)
                waited_for = self.holder
            if stop.wait(self.next_try()):
                return
        last_renewed = self.clock()
        self.leading.set()
        log.info("became leader: %s held by %s", self.description, self.identity)
        on_started()
        while not stop.wait(self.timing.retry_period):
            if self.try_acquire_or_renew():
                last_renewed = self.clock()
                continue
            taken = self.holder not in ("", self.identity)
            if taken or lost(last_renewed, self.clock(), self.timing):
                self.leading.clear()
                log.error(
                    "leader election lost: %s %s",
                    self.description,
                    f"is now held by {self.holder}"
                    if taken
                    else f"not renewed for {self.timing.renew_deadline:.0f}s",
                )
                on_lost()
                return

    def release(self) -> None:
        """Hand the lease back (a graceful stop); only when this candidate leads."""
        if not self.leading.is_set():
            return
        self.leading.clear()
        try:
            lease = self.lock.get()
            if lease is None:
                return
            spec = release(LeaseRecord.from_lease(lease), self.identity, self.clock())
            if spec is not None:
                self.lock.update(lease, spec)
                log.info("released %s", self.description)
        except GatewayError as exc:
            log.warning("releasing %s failed (%s); it expires by itself", self.description, exc)
