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
from olm.controllers.queue import WorkQueue
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
