"""`python -m tests.busy`: the command's exit status comes back, and no burner outlives it."""

from __future__ import annotations

import multiprocessing
import sys

from tests.busy import main


def test_the_commands_exit_status_is_returned_and_the_burners_stop() -> None:
    code = main(["--burners", "2", "--", sys.executable, "-c", "import sys; sys.exit(3)"])
    assert code == 3
    assert multiprocessing.active_children() == []


def test_burners_keep_the_cores_busy_while_the_command_runs() -> None:
    # The command finds its two siblings running (state R), each burning CPU time.
    probe = (
        "import os, time; time.sleep(0.5); me = str(os.getpid()); p = os.getppid(); "
        "kids = open(f'/proc/{p}/task/{p}/children').read().split(); "
        "stats = [open(f'/proc/{k}/stat').read().rsplit(')', 1)[1].split() for k in kids "
        "if k != me]; "
        "raise SystemExit(0 if len(stats) == 2 and all(int(s[11]) > 0 for s in stats) else 1)"
    )
    assert main(["--burners", "2", "--", sys.executable, "-c", probe]) == 0
