"""The headless browser of the console's e2e tests and screenshots: Debian's Chromium.

`ensure_chromium()` returns the path of a Chromium the machine has ($OLM_CHROMIUM, else
`chromium` on PATH), and otherwise installs Debian's package with apt-get (as root), once: a
second call finds it. Playwright for Python drives it (`executable_path`), so no browser is
downloaded by Playwright itself.

Invariant: idempotent; a machine that cannot install it gets one message saying what to run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from olm.progress import QUIET, Progress

CHROMIUM_ENV = "OLM_CHROMIUM"
PACKAGE = "chromium"


class BrowserError(RuntimeError):
    """No Chromium, and it could not be installed."""


def find_chromium() -> Path | None:
    configured = os.environ.get(CHROMIUM_ENV)
    if configured and Path(configured).is_file():
        return Path(configured)
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return Path(found)
    return None


def _apt(*args: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    result = subprocess.run(
        ["apt-get", *args], capture_output=True, text=True, env=env, timeout=1800
    )
    if result.returncode != 0:
        raise BrowserError(f"apt-get {' '.join(args)} failed: {result.stderr.strip()[-500:]}")


def ensure_chromium(progress: Progress = QUIET) -> Path:
    found = find_chromium()
    if found is not None:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        raise BrowserError(
            f"no Chromium found: install Debian's `{PACKAGE}` package (apt-get install -y "
            f"{PACKAGE}) or set {CHROMIUM_ENV} to a Chromium binary"
        )
    progress.say(f"Installing Debian's {PACKAGE} (the console tests' headless browser)")
    _apt("update", "-qq")
    _apt("install", "-y", "-q", "--no-install-recommends", PACKAGE)
    found = find_chromium()
    if found is None:
        raise BrowserError(f"apt-get installed {PACKAGE} but no chromium is on PATH")
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m olm.devcluster.browser` (`make browser`): find or install Chromium, print
    its path."""
    parser = argparse.ArgumentParser(
        prog="python -m olm.devcluster.browser",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Find Chromium ($OLM_CHROMIUM, else on PATH) or install Debian's package "
        "with apt-get (as root), and print its path.",
        epilog="Takes seconds when Chromium is there, a minute or two to install it.\nWrites "
        "nothing of its own: apt-get installs the `chromium` package.",
    )
    parser.parse_args(argv)
    try:
        print(ensure_chromium(Progress()))
    except BrowserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
