"""The sample operator tries a failed reconcile again, with backoff, until it succeeds: an
instance whose only event came while its RBAC was not yet effective is not left behind."""

from __future__ import annotations

import threading
import time

import pytest

from olm.kube.gateway import GatewayError
from olm.samples.memcached import operator


class Flaky:
    """Refuses the first `failures` reconciles (403), then succeeds."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.succeeded = threading.Event()

    def reconcile(self, namespace: str, name: str) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise GatewayError("GET memcacheds failed (403): forbidden", status=403)
        self.succeeded.set()


def wait(event: threading.Event) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not event.is_set():
        time.sleep(0.01)
    return event.is_set()


def test_a_failed_reconcile_is_tried_again_until_it_succeeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(operator, "RETRY_FIRST_SECONDS", 0.01)
    flaky = Flaky(failures=3)
    operator._safely(flaky, "ns", "retried")  # type: ignore[arg-type]
    assert wait(flaky.succeeded)
    assert flaky.calls == 4
    assert ("ns", "retried") not in operator._retries


def test_events_during_a_pending_retry_schedule_no_second_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(operator, "RETRY_FIRST_SECONDS", 0.3)
    flaky = Flaky(failures=3)
    operator._safely(flaky, "ns", "busy")  # type: ignore[arg-type]
    operator._safely(flaky, "ns", "busy")  # type: ignore[arg-type]
    operator._safely(flaky, "ns", "busy")  # type: ignore[arg-type]
    assert flaky.calls == 3  # all three refused; one retry is pending, not three
    assert wait(flaky.succeeded)
    time.sleep(0.5)  # a second chain of retries would call again within this
    assert flaky.calls == 4
