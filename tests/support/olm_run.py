"""`olm run` as a subprocess of the test session (`OlmOperator`), and the signature of the
`kubectl_operator` fixture's runner.

Invariant: `restart()` returns only once the new process has synced its caches, so a story
that restarts olm acts on a running controller.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for


class OlmOperator:
    """`olm run` as a subprocess against the test cluster; can be killed and restarted."""

    def __init__(self, plane: ControlPlane, log_path: Path) -> None:
        self.plane = plane
        self.log_path = log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at = 0
        # Extra `olm run` flags of the current process (a story that needs a setting restarts
        # it with them, and without them when it ends: `restart()`).
        self.args: tuple[str, ...] = ()

    def start(self) -> None:
        # Where this process's output begins: until it has written something it may not have
        # installed its SIGUSR1 handler yet, and the signal would kill it (_olm_run_stacks).
        self.started_at = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olm.cli", "run", "--resync=30", *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.plane.env(),
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def restart(self, *args: str) -> None:
        """Kill it and start it again, with `args` as its extra flags (none: the defaults),
        and wait until its caches are synced (it acts on the cluster from then on, and a
        SIGTERM stops it cleanly)."""
        self.stop()
        self.args = args
        self.start()
        wait_for(self._synced, timeout=STEP_TIMEOUT, what="olm run to sync its caches")

    def _synced(self) -> bool:
        with self.log_path.open("rb") as log:
            log.seek(self.started_at)
            return b"caches synced" in log.read()


KubectlOperator = Callable[..., subprocess.CompletedProcess[str]]
