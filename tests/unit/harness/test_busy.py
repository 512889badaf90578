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
    # The command finds its two burner siblings (forks of this process: the same command
    # line, unlike any other child a test session may have) burning CPU time.
    probe = (
        "import os, time; time.sleep(0.5); p = os.getppid(); "
        "read = lambda path: open(path, 'rb').read(); "
        "kids = open(f'/proc/{p}/task/{p}/children').read().split(); "
        "burners = [k for k in kids if read(f'/proc/{k}/cmdline') == read(f'/proc/{p}/cmdline')]; "
        "ticks = [int(read(f'/proc/{k}/stat').rsplit(b')', 1)[1].split()[11]) for k in burners]; "
        "raise SystemExit(0 if len(ticks) == 2 and all(t > 0 for t in ticks) else 1)"
    )
    assert main(["--burners", "2", "--", sys.executable, "-c", probe]) == 0
