"""The Go toolchain the dev tooling builds with: finding it, its environment, logged runs.

Invariants:
- The toolchain is `OLM_PY_GO` or `go` on PATH, at least `MINIMUM_GO`; `GOTOOLCHAIN=local`,
  so Go never downloads another toolchain.
- No cgo unless a build asks for it. The checksum database does not answer for every module
  the proxy serves here; the versions are pinned and the proxy is the trust anchor, so
  verification is off unless OLM_PY_GOSUMDB names a database.
- A run's output goes to a log file; a failed run raises `BuildError` with the log's tail and
  what to do next.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from olm.devcluster.verifiedcache import BuildError
from olm.progress import Progress

MINIMUM_GO = (1, 24)


def _parse_go_version(text: str) -> tuple[int, int] | None:
    match = re.search(r"go(\d+)\.(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_go(purpose: str, retry: str = "then retry") -> str:
    """The go binary (OLM_PY_GO, else PATH), checked to be new enough; `purpose` says what it
    builds ("the local control plane", "Helm", ...) and `retry` what to do once it is fixed."""
    go = os.environ.get("OLM_PY_GO") or shutil.which("go")
    if not go or not Path(go).exists():
        raise BuildError(
            f"The Go toolchain was not found on PATH. {purpose} is built from the Go module "
            f"proxy: install Go >= {MINIMUM_GO[0]}.{MINIMUM_GO[1]} (or set OLM_PY_GO to the go "
            f"binary), {retry}."
        )
    try:
        out = subprocess.run(
            [go, "version"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"`{go} version` failed ({exc}); check the Go installation.") from exc
    found = _parse_go_version(out)
    if found is None or found < MINIMUM_GO:
        raise BuildError(
            f"Go {MINIMUM_GO[0]}.{MINIMUM_GO[1]} or newer is needed to build {purpose}, found: "
            f"{out.strip()}. Install a newer Go, {retry}."
        )
    return go


def go_env(base: dict[str, str], goflags: str = "-buildvcs=false") -> dict[str, str]:
    """The installed toolchain, no cgo. The checksum database does not answer for every
    module the proxy serves here; the version is pinned and the proxy is the trust anchor (as
    in build.py), unless OLM_PY_GOSUMDB names one."""
    return {
        **base,
        "CGO_ENABLED": "0",
        "GOTOOLCHAIN": "local",
        "GOSUMDB": base.get("OLM_PY_GOSUMDB", "off"),
        "GOFLAGS": goflags,
    }


@dataclass(frozen=True)
class GoRun:
    """One tool's build: runs `go` with the build environment, logging to `log_path`."""

    go: str
    log_path: Path
    progress: Progress
    goflags: str = "-buildvcs=false"
    retry: str = "retry"

    def run(
        self, args: Sequence[str], cwd: Path, what: str, note: str = "", gobin: Path | None = None
    ) -> str:
        """Run `go args` in `cwd`; its stdout. `what` names the step (progress and errors),
        `note` adds to the progress line only."""
        env = go_env(dict(os.environ), self.goflags)
        if gobin is not None:
            env["GOBIN"] = str(gobin)
        nice = shutil.which("nice")
        # Two cores are shared by everyone: the compile yields to interactive work.
        prefix = [nice, "-n", "10"] if nice else []
        with self.log_path.open("a") as log, self.progress.heartbeat(what + note):
            log.write(f"$ go {' '.join(args)}\n")
            log.flush()
            result = subprocess.run(
                [*prefix, self.go, *args],
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=log,
                text=True,
            )
            log.write(result.stdout)
        if result.returncode != 0:
            tail = self.log_path.read_text(errors="replace").splitlines()[-15:]
            raise BuildError(
                f"{what} failed (go exit {result.returncode}). Check access to the "
                f"Go module proxy (GOPROXY) or the compiler errors in the log {self.log_path}. "
                "Last lines:\n  " + "\n  ".join(tail) + f"\nFix the cause, then {self.retry}."
            )
        return result.stdout
