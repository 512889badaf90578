"""Run a command on a busy machine: one CPU burner per core beside it, for as long as it runs.

`make test-busy` (and `python -m tests.busy -- CMD ...`) is how the suite is checked for the
fragility a loaded 2-core CI machine shows and a quiet developer machine hides: waits that
are too short for a cluster step, assertions on a state a fast controller skips, tests that
race their own applies.

Invariants:
- The burners run at normal priority (a niced burner would yield to everything and prove
  nothing), one per core by default (`--burners N`), as child processes of this one.
- They stop when the command ends, when this process is interrupted or terminated, and
  never outlive it: each burner also checks that its parent is still alive.
- The exit status is the command's, so `make test-busy` fails exactly when the suite does.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from types import FrameType


def _burn(parent: int) -> None:
    """Spin until stopped or the parent is gone (checked about every 0.2 s)."""
    # A fork inherits the parent's handlers; a burner must die of SIGTERM, not run them.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.getppid() == parent:
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.busy",
        description="Run COMMAND with one CPU burner per core beside it.",
        epilog="Takes as long as COMMAND. Writes nothing itself; exits with COMMAND's status.",
    )
    parser.add_argument(
        "--burners", type=int, default=os.cpu_count() or 2, help="how many (default: cores)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("name the command to run, e.g. `python -m tests.busy -- make test`")

    me = os.getpid()
    burners = [
        multiprocessing.Process(target=_burn, args=(me,), daemon=True) for _ in range(args.burners)
    ]
    for burner in burners:
        burner.start()
    print(f"tests.busy: {len(burners)} CPU burner(s) running beside: {' '.join(command)}")
    child = subprocess.Popen(command)

    def forward(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)

    previous = signal.signal(signal.SIGTERM, forward), signal.getsignal(signal.SIGINT)
    # Ctrl-C reaches the command from the terminal already; wait for it to finish its cleanup.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    started = time.monotonic()
    try:
        code = child.wait()
    finally:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])
        for burner in burners:
            burner.terminate()
        for burner in burners:
            burner.join(timeout=5)
            if burner.is_alive():
                burner.kill()
                burner.join()
    print(f"tests.busy: command exited {code} after {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
