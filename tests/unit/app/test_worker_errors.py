"""A reconcile that fails because the API server did not answer (refused, reset: it restarts
or is stopped) is logged as one line and retried, like a refusal; only our own bugs log a
traceback. Found by the soak (benchmarks/soak): a restarted kube-apiserver filled `olm run`'s
log with urllib3 tracebacks."""

from __future__ import annotations

import logging
import threading

import pytest
import urllib3

from olm.app import _worker
from olm.controllers import packageserver, resync
from olm.controllers.packageserver import Registration
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.kube.fake import FakeGateway
from olm.metrics.counters import Counters

KEY = ("csv", "ns", "op.v1")


class Failing:
    kind = "csv"

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    def reconcile(self, namespace: str, name: str) -> float | None:
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return None


def run_once(error: Exception, caplog: pytest.LogCaptureFixture) -> Failing:
    queue = WorkQueue(base_delay=0.0)
    controller = Failing(error)
    queue.add(KEY)
    worker = threading.Thread(
        target=_worker, args=(queue, {"csv": controller}, None, None, Counters())
    )
    with caplog.at_level(logging.WARNING, logger="olm"):
        worker.start()
        while controller.calls < 2:
            threading.Event().wait(0.01)
        queue.close()
        worker.join(10)
    return controller


@pytest.mark.parametrize(
    "error",
    [
        urllib3.exceptions.MaxRetryError(
            None, "/apis", reason=ConnectionRefusedError(111, "refused")
        ),
        urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104, "reset")),
    ],
)
def test_an_unreachable_api_server_is_one_line_and_a_retry(
    error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    controller = run_once(error, caplog)
    assert controller.calls == 2  # retried
    failures = [r for r in caplog.records if "reconciling csv ns/op.v1" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].levelno == logging.WARNING and failures[0].exc_info is None


def test_our_own_bugs_still_log_a_traceback(caplog: pytest.LogCaptureFixture) -> None:
    run_once(KeyError("status"), caplog)
    failures = [r for r in caplog.records if "reconciling csv ns/op.v1" in r.getMessage()]
    assert failures and failures[0].exc_info is not None


UNANSWERED = urllib3.exceptions.MaxRetryError(
    None, "/api/v1/namespaces", reason=ConnectionRefusedError(111, "refused")
)


def test_the_resync_loop_lives_on_when_the_api_server_does_not_answer(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by the 60-minute soak: a relist during a kube-apiserver restart raised urllib3's
    error past the loop, which would end the periodic resync for good."""
    store, stop, relists = Store(), threading.Event(), []
    store.synced.set()

    def relist(store: Store, gateway: object, watched: object) -> list[object]:
        relists.append(1)
        if len(relists) == 1:
            raise UNANSWERED
        stop.set()
        return []

    monkeypatch.setattr(resync, "relist", relist)
    monkeypatch.setattr(resync, "resync_keys", lambda store: [])
    with caplog.at_level(logging.WARNING, logger="olm"):
        resync.run(WorkQueue(base_delay=0.0), store, None, 0.001, stop)  # type: ignore[arg-type]
    assert len(relists) > 1, "the loop went on after the unanswered relist"
    assert not [r for r in caplog.records if r.exc_info], "one line, no traceback"


def test_the_package_api_registration_retries_an_unanswered_request_in_one_line(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Found by the 60-minute soak: `olm run`'s log got a traceback each time the PackageManifest
    API's registration loop met a restarting kube-apiserver."""
    registration = Registration(FakeGateway(), None, "olm", False, lambda: True)  # type: ignore[arg-type]
    stop, steps = threading.Event(), []

    def step(now: object) -> float:
        steps.append(now)
        if len(steps) == 1:
            raise UNANSWERED
        stop.set()
        return 0.0

    monkeypatch.setattr(registration, "step", step)
    monkeypatch.setattr(packageserver, "FAST_SECONDS", 0.0)
    with caplog.at_level(logging.WARNING, logger="olm"):
        registration.run(stop)
    assert len(steps) == 2
    warnings = [r for r in caplog.records if "PackageManifest API" in r.getMessage()]
    assert warnings and not [r for r in caplog.records if r.exc_info]
