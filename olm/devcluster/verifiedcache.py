"""The verified cache: built files are reused only when a record, written last, vouches for them.

Every build of the dev tooling caches its output this way: the control-plane binaries
(build.py), the reference OLM (reference_build.py), Helm and kubectl-operator (tools.py), OLM's e2e
suite (olm_e2e.py) and the base image tarball (image.py).

Invariants:
- A cache folder is complete only when its manifest exists and is readable, records the build
  inputs the caller expects (for caches that record any), lists every required file, and
  every file it lists has the recorded size and SHA-256. A single cached file (the base image
  tarball) has a record of its own beside it, checked the same way.
- The manifest (or record) is written last, through a temporary file renamed over it, so an
  interrupted build is never mistaken for a complete one; a rebuild removes the old one first.
- Checking only reads files: a complete cache is reused without running any build.
- Builders of one cache may wait for each other (a lock file beside its folder); the one that
  waited reuses what the other built.
- Every failure raises `BuildError` naming what failed and what to do next.

On disk: `<root>/manifest.json` is `{"files": {relative path: {"size": int, "sha256": hex}}}`
plus `"inputs"` (a mapping of strings, compared whole) and whatever else the caller records
(`"versions"` for the control plane); a single file's record is
`{"size": int, "sha256": hex, ...}`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from olm.progress import Progress

MANIFEST = "manifest.json"
_BLOCK = 1 << 20


class BuildError(RuntimeError):
    """A build or cache problem, with a message that says what to do."""


def sha256_file(path: Path) -> str:
    """The file's SHA-256 as hex, read in blocks (the binaries are 100 MB)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def file_record(path: Path) -> dict[str, Any]:
    """What a manifest records of one file: its size and SHA-256."""
    return {"size": path.stat().st_size, "sha256": sha256_file(path)}


def file_problem(path: Path, record: Mapping[str, Any]) -> str | None:
    """Why `path` does not match its `record`, or None when it does. The size is checked
    first: a truncated file is named without reading it whole."""
    if not path.is_file():
        return f"{path} is missing"
    if path.stat().st_size != record.get("size"):
        return f"{path} has the wrong size (corrupt or truncated)"
    if sha256_file(path) != record.get("sha256"):
        return f"{path} has the wrong checksum (corrupt)"
    return None


def _write_json_last(path: Path, document: Mapping[str, Any]) -> None:
    """Write `document` to `path` atomically: a reader sees the old file or the whole new one."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(document, indent=2, sort_keys=True))
    temporary.replace(path)


def manifest_problems(
    root: Path, required: Iterable[str] = (), inputs: Mapping[str, str] | None = None
) -> list[str]:
    """Why the cache folder `root` is not complete; an empty list means it is.

    `required`: files (relative to `root`) the manifest must list. `inputs`: what the cache
    must have been built from (any difference means stale); None for caches that record none.
    """
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing (the build was never completed)"]
    try:
        manifest = json.loads(manifest_path.read_text())
        files = manifest["files"]
        recorded = manifest["inputs"] if inputs is not None else {}
        if not isinstance(files, dict) or not isinstance(recorded, dict):
            raise TypeError("files or inputs is not a mapping")
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{manifest_path} is unreadable ({exc})"]
    if inputs is not None and recorded != dict(inputs):
        return [f"{root} was built from other inputs ({recorded}, want {dict(inputs)})"]
    problems = [
        f"{relative} is not listed in {manifest_path}"
        for relative in required
        if relative not in files
    ]
    for relative, record in files.items():
        if not isinstance(record, dict):
            problems.append(f"{manifest_path} has a bad entry for {relative}")
        elif (problem := file_problem(root / relative, record)) is not None:
            problems.append(problem)
    return problems


def write_manifest(root: Path, files: Iterable[str], **recorded: Any) -> None:
    """Seal the cache: list `files` (relative to `root`) with their size and SHA-256, and
    `recorded` (`inputs=...`, ...) beside them. Call it last, once every file is in place."""
    listing = {relative: file_record(root / relative) for relative in files}
    _write_json_last(root / MANIFEST, {**recorded, "files": listing})


def record_problems(path: Path, record_path: Path) -> list[str]:
    """Why the single cached file `path` is not complete, by its record at `record_path`."""
    if not record_path.is_file():
        return [f"{record_path} is missing (the build was never completed)"]
    try:
        record = json.loads(record_path.read_text())
        if not isinstance(record, dict):
            raise TypeError("the record is not a mapping")
        missing = [key for key in ("size", "sha256") if key not in record]
        if missing:
            raise KeyError(missing[0])
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{record_path} is unreadable ({exc})"]
    problem = file_problem(path, record)
    return [problem] if problem is not None else []


def write_record(path: Path, record_path: Path, **recorded: Any) -> None:
    """Seal a single cached file: its size, SHA-256 and `recorded`, written last."""
    _write_json_last(record_path, {**file_record(path), **recorded})


@contextlib.contextmanager
def build_lock(root: Path) -> Iterator[None]:
    """Hold `<root>.lock` (beside the folder) while building into `root`."""
    root.parent.mkdir(parents=True, exist_ok=True)
    with (root.parent / f"{root.name}.lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_built(
    root: Path,
    what: str,
    problems: Callable[[], list[str]],
    build: Callable[[], None],
    progress: Progress,
    *,
    rebuild: str,
    may_build: bool = True,
    lock: bool = True,
) -> None:
    """Reuse the cache at `root` when `problems()` finds none, else run `build()` (which
    writes the manifest last) and check again.

    `what` names the cache in progress lines and errors ("Helm v3.22.0"); `rebuild` is the
    command that (re)builds it. With `may_build` False an unusable cache is an error; with
    `lock`, concurrent builders of `root` wait for each other.
    """
    if not problems():
        progress.say(f"Using the cached {what} in {root}")
        return
    with build_lock(root) if lock else contextlib.nullcontext():
        # Another process may have finished the build while this one waited for the lock.
        found = problems()
        if not found:
            progress.say(f"Using the cached {what} in {root}")
            return
        if not may_build:
            raise BuildError(
                f"The {what} cache at {root} is not usable: {'; '.join(found)}. Run {rebuild} "
                "to (re)build it."
            )
        if (root / MANIFEST).exists():
            progress.say(
                f"The {what} cache is incomplete or stale, rebuilding: " + "; ".join(found)
            )
            (root / MANIFEST).unlink()
        build()
        remaining = problems()
        if remaining:
            raise BuildError(
                f"The {what} build finished but its cache is unusable: " + "; ".join(remaining)
            )
    progress.say(f"The {what} in {root} is ready")
