"""The base of olm-py's image, made offline: a stand-in for `python:3.11-slim-bookworm`.

The top-level Dockerfile assumes only `python3` in its base. No registry of base images is
reachable here, so this module makes a stand-in for that image from Debian packages
(mmdebstrap) and imports it into podman under the upstream name; image.py builds olm-py's
image on it. Also here: the host packages the image build needs (podman, runc, mmdebstrap),
the podman configuration every podman call gets, and the logged run of one build step.

Invariants:
- The base tarball and the record of imported base images live in `<cache root>/images`,
  podman's config in `<cache root>/podman`; nothing is written into the repo.
- The base tarball is named after a key of its inputs (suite, mirrors, packages, hooks), so
  changing an input makes a new tarball and never reuses a stale one. A tarball is complete
  only when its sidecar record (size, SHA-256) exists and matches; the record is written last
  (a verified cache, verifiedcache.py).
- A `python:3.11-slim-bookworm` image that olm-py did not import (the real one, pulled by a
  user who can) is used as it is, never overwritten.
- Every podman call gets `CONTAINERS_CONF` pointing at olm-py's own file (runc, ulimits); the
  system's container config files are left alone.
- Every failure raises `ImageError` naming what failed and what to do next.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from olm.devcluster.verifiedcache import record_problems, write_record
from olm.devcluster.versions import cache_root
from olm.progress import QUIET, Progress

BASE_IMAGE = "docker.io/library/python:3.11-slim-bookworm"
HOST_PACKAGES: tuple[str, ...] = ("podman", "runc", "mmdebstrap")
APT_LOCK_TIMEOUT = "DPkg::Lock::Timeout=600"

# podman with crun fails here (no CAP_SYS_RESOURCE, cgroups v1 hybrid): runc and explicit
# ulimits work. Given to every podman call through CONTAINERS_CONF.
CONTAINERS_CONF = """\
# Written by olm-py (olm/devcluster/image_base.py); given to podman through CONTAINERS_CONF.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]

[engine]
runtime = "runc"
"""


class ImageError(RuntimeError):
    """A problem building the image, with a message that says what to do."""


@dataclass(frozen=True)
class BaseInputs:
    """Everything the stand-in base image is made from; its cache key is a hash of these."""

    suite: str = "bookworm"
    variant: str = "minbase"
    packages: tuple[str, ...] = (
        "python3",
        "python3-venv",
        "python3-pip",
        "ca-certificates",
        "netbase",
    )
    mirrors: tuple[str, ...] = (
        "deb http://deb.debian.org/debian bookworm main",
        "deb http://deb.debian.org/debian-security bookworm-security main",
    )
    hook_dir: str = "/usr/share/mmdebstrap/hooks/merged-usr"
    customize_hooks: tuple[str, ...] = (
        # Debian marks its Python as externally managed; the official image does not.
        'rm -f "$1"/usr/lib/python3.11/EXTERNALLY-MANAGED',
        # No host names or resolvers of this machine in the image.
        'printf "127.0.0.1 localhost\\n::1 localhost\\n" > "$1"/etc/hosts; : > "$1"/etc/resolv.conf',
    )
    env_path: str = "/usr/local/bin:/usr/bin:/bin"

    def key(self) -> str:
        text = json.dumps(self.__dict__, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


PINNED_BASE = BaseInputs()


def podman_dir() -> Path:
    return cache_root() / "podman"


def images_dir() -> Path:
    return cache_root() / "images"


def containers_conf_path() -> Path:
    return podman_dir() / "containers.conf"


def base_tarball(inputs: BaseInputs = PINNED_BASE, root: Path | None = None) -> Path:
    root = root if root is not None else images_dir()
    return root / f"python-3.11-{inputs.suite}-{inputs.key()}.tar"


def apt_commands(packages: Sequence[str]) -> list[list[str]]:
    """apt-get update, then install `packages` without recommends, waiting for other apt runs."""
    return [
        ["apt-get", "-o", APT_LOCK_TIMEOUT, "update"],
        [
            "apt-get",
            "-o",
            APT_LOCK_TIMEOUT,
            "install",
            "-y",
            "--no-install-recommends",
            *packages,
        ],
    ]


def mmdebstrap_args(output: Path, inputs: BaseInputs = PINNED_BASE) -> list[str]:
    args = [
        "mmdebstrap",
        f"--variant={inputs.variant}",
        "--format=tar",
        f"--hook-dir={inputs.hook_dir}",
        f"--include={','.join(inputs.packages)}",
        '--aptopt=APT::Install-Recommends "false"',
    ]
    args += [f"--customize-hook={hook}" for hook in inputs.customize_hooks]
    return [*args, inputs.suite, str(output), *inputs.mirrors]


def podman_import_args(tarball: Path, inputs: BaseInputs = PINNED_BASE) -> list[str]:
    return [
        "podman",
        "import",
        "--change",
        f"ENV PATH={inputs.env_path}",
        "--change",
        'CMD ["python3"]',
        str(tarball),
        BASE_IMAGE,
    ]


def podman_env() -> dict[str, str]:
    """The environment for podman: olm-py's containers.conf (written if missing)."""
    path = containers_conf_path()
    if not path.is_file() or path.read_text() != CONTAINERS_CONF:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CONTAINERS_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(path)}


def run_step(
    args: Sequence[str],
    what: str,
    progress: Progress,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    log: Path | None = None,
    hint: str = "",
) -> str:
    """Run a command under a heartbeat; on failure raise ImageError with the output's tail."""
    with progress.heartbeat(what):
        try:
            result = subprocess.run(
                list(args),
                env=dict(env) if env is not None else None,
                cwd=cwd,
                capture_output=True,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            raise ImageError(f"{what} failed: cannot run {args[0]} ({exc}). {hint}") from exc
    output = result.stdout + result.stderr
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"$ {' '.join(args)}\n{output}")
    if result.returncode != 0:
        tail = "\n  ".join(output.splitlines()[-15:])
        where = f" Full log: {log}." if log is not None else ""
        raise ImageError(
            f"{what} failed (exit {result.returncode}).{where} Last lines:\n  {tail}\n{hint}"
        )
    return result.stdout


def ensure_host_packages(progress: Progress = QUIET) -> None:
    """Install podman, runc and mmdebstrap from Debian if any is missing."""
    missing = [name for name in HOST_PACKAGES if shutil.which(name) is None]
    if not missing:
        return
    manual = "apt-get install -y --no-install-recommends " + " ".join(HOST_PACKAGES)
    if shutil.which("apt-get") is None:
        raise ImageError(
            f"{', '.join(missing)} not found and there is no apt-get here: install podman, "
            "runc and mmdebstrap with your package manager, then retry `olm dev image`."
        )
    if os.geteuid() != 0:
        raise ImageError(
            f"{', '.join(missing)} not found; installing them needs root: run "
            f"`sudo {manual}`, then retry `olm dev image`."
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    update, install = apt_commands(HOST_PACKAGES)
    hint = f"Check access to the Debian mirror, or run `{manual}` yourself and retry."
    run_step(update, "Updating the apt package lists", progress, env=env, hint=hint)
    run_step(
        install, f"Installing {', '.join(HOST_PACKAGES)} from Debian", progress, env=env, hint=hint
    )


def tarball_problems(tarball: Path) -> list[str]:
    """Why the cached base tarball is not complete, by its record beside it (`.json`)."""
    return record_problems(tarball, tarball.with_suffix(".json"))


def ensure_base_tarball(inputs: BaseInputs = PINNED_BASE, progress: Progress = QUIET) -> Path:
    """The cached mmdebstrap tarball of the stand-in base image, made if missing or corrupt."""
    tarball = base_tarball(inputs)
    problems = tarball_problems(tarball)
    if not problems:
        progress.say(f"Using the cached base image tarball {tarball}")
        return tarball
    record_path = tarball.with_suffix(".json")
    if record_path.exists():
        progress.say("Remaking the base image tarball: " + "; ".join(problems))
        record_path.unlink()
    tarball.parent.mkdir(parents=True, exist_ok=True)
    partial = tarball.with_name(tarball.stem + ".partial.tar")
    if partial.is_dir():
        shutil.rmtree(partial)
    partial.unlink(missing_ok=True)
    progress.say(
        f"The base image tarball is made once per set of inputs (about 1 minute): {tarball}"
    )
    run_step(
        mmdebstrap_args(partial, inputs),
        f"Making a Debian {inputs.suite} Python base image with mmdebstrap",
        progress,
        log=tarball.with_name(tarball.name + ".log"),
        hint="mmdebstrap needs the Debian mirrors (deb.debian.org); check network access, "
        "then retry `olm dev image`.",
    )
    partial.replace(tarball)
    write_record(tarball, record_path, key=inputs.key())
    return tarball


def image_id(reference: str, env: Mapping[str, str]) -> str | None:
    result = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Id}}", reference],
        env=dict(env),
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def ensure_base_image(inputs: BaseInputs = PINNED_BASE, progress: Progress = QUIET) -> str:
    """Make sure `python:3.11-slim-bookworm` exists in podman; return its image ID."""
    env = podman_env()
    records_path = images_dir() / "imported.json"
    try:
        records: dict[str, str] = json.loads(records_path.read_text())
    except (OSError, ValueError):
        records = {}
    current = image_id(BASE_IMAGE, env)
    key = inputs.key()
    if current is not None and records.get(key) == current:
        progress.say(f"Using the stand-in {BASE_IMAGE} already in podman")
        return current
    if current is not None and current not in records.values():
        progress.say(f"Using {BASE_IMAGE} as found in podman (not made by olm-py)")
        return current
    tarball = ensure_base_tarball(inputs, progress)
    run_step(
        podman_import_args(tarball, inputs),
        f"Importing the stand-in as {BASE_IMAGE}",
        progress,
        env=env,
        hint="Check that podman works (`podman info`).",
    )
    imported = image_id(BASE_IMAGE, env)
    if imported is None:
        raise ImageError(
            f"podman import finished but {BASE_IMAGE} is not there; see `podman images`."
        )
    records[key] = imported
    records_path.parent.mkdir(parents=True, exist_ok=True)
    records_path.write_text(json.dumps(records, indent=2, sort_keys=True))
    return imported
