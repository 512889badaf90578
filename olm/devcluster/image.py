"""Build olm-py's container image offline: `olm dev image`.

The top-level Dockerfile assumes only `python3` in its base, `python:3.11-slim-bookworm`. No
registry of base images is reachable here, so this module makes a stand-in for that image from
Debian packages (mmdebstrap), imports it into podman under the upstream name, builds the
project's wheels on the host and runs `podman build --pull=never --network=none`. The same
Dockerfile builds anywhere the official image can be pulled.

Invariants:
- Nothing is written into the repo: podman's config and the record of the last build live in
  `<cache root>/podman`, the base tarball and the record of imported base images in
  `<cache root>/images`, the dependencies' wheels in `<cache root>/wheels/<key>` (key: the
  venv's pinned versions, pyproject.toml, the Python tag); the project's wheel is built from a
  temporary copy of the sources, in a temporary build context removed afterwards.
- An image is rebuilt only when one of its inputs changed (sources, Dockerfile, dependency
  versions, base image ID, version, git revision): their fingerprint is recorded with the
  image ID after each build.
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
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from olm.devcluster.verifiedcache import record_problems, sha256_file, write_record
from olm.devcluster.versions import cache_root
from olm.progress import QUIET, Progress

BASE_IMAGE = "docker.io/library/python:3.11-slim-bookworm"
IMAGE_REPOSITORY = "localhost/olm-py"
DEV_TAG = "dev"
TITLE_LABEL = "org.opencontainers.image.title"
HOST_PACKAGES: tuple[str, ...] = ("podman", "runc", "mmdebstrap")
APT_LOCK_TIMEOUT = "DPkg::Lock::Timeout=600"

# podman with crun fails here (no CAP_SYS_RESOURCE, cgroups v1 hybrid): runc and explicit
# ulimits work. Given to every podman call through CONTAINERS_CONF.
CONTAINERS_CONF = """\
# Written by olm-py (olm/devcluster/image.py); given to podman through CONTAINERS_CONF.
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


# ---- pure parts: paths and argument lists ----------------------------------------------------


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


def image_tags(version: str) -> list[str]:
    return [f"{IMAGE_REPOSITORY}:{DEV_TAG}", f"{IMAGE_REPOSITORY}:{version}"]


def podman_build_args(context: Path, version: str, revision: str | None = None) -> list[str]:
    # --layers=false: the wheels change with every source change, so a layer cache would
    # rarely hit, while committing every step (and keeping the build stage) costs time and disk.
    args = ["podman", "build", "--pull=never", "--network=none", "--layers=false"]
    args += ["--file", str(context / "Dockerfile"), "--build-arg", f"VERSION={version}"]
    if revision:
        args += ["--build-arg", f"REVISION={revision}"]
    for tag in image_tags(version):
        args += ["--tag", tag]
    return [*args, str(context)]


def wheel_args(python: str, repo: Path, wheel_dir: Path, constraints: Path | None) -> list[str]:
    args = [python, "-m", "pip", "wheel", "--disable-pip-version-check", "--quiet"]
    args += ["--wheel-dir", str(wheel_dir)]
    if constraints is not None:
        args += ["--constraint", str(constraints)]
    return [*args, str(repo)]


def constraints_from_freeze(freeze: str) -> str:
    """Pin the image's dependencies to what the venv runs (`name==version` lines only)."""
    lines = []
    for line in freeze.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "-")) and "==" in line and " @ " not in line:
            name = line.split("==", 1)[0]
            if name.lower().replace("_", "-") != "olm-py":
                lines.append(line)
    return "\n".join(lines) + "\n"


def package_version() -> str:
    try:
        return metadata.version("olm-py")
    except metadata.PackageNotFoundError:
        from olm import __version__

        return __version__


# ---- I/O -----------------------------------------------------------------------------------


def podman_env() -> dict[str, str]:
    """The environment for podman: olm-py's containers.conf (written if missing)."""
    path = containers_conf_path()
    if not path.is_file() or path.read_text() != CONTAINERS_CONF:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(CONTAINERS_CONF)
    return {**os.environ, "CONTAINERS_CONF": str(path)}


def _run(
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
    _run(update, "Updating the apt package lists", progress, env=env, hint=hint)
    _run(
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
    _run(
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


def _image_id(reference: str, env: Mapping[str, str]) -> str | None:
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
    current = _image_id(BASE_IMAGE, env)
    key = inputs.key()
    if current is not None and records.get(key) == current:
        progress.say(f"Using the stand-in {BASE_IMAGE} already in podman")
        return current
    if current is not None and current not in records.values():
        progress.say(f"Using {BASE_IMAGE} as found in podman (not made by olm-py)")
        return current
    tarball = ensure_base_tarball(inputs, progress)
    _run(
        podman_import_args(tarball, inputs),
        f"Importing the stand-in as {BASE_IMAGE}",
        progress,
        env=env,
        hint="Check that podman works (`podman info`).",
    )
    imported = _image_id(BASE_IMAGE, env)
    if imported is None:
        raise ImageError(
            f"podman import finished but {BASE_IMAGE} is not there; see `podman images`."
        )
    records[key] = imported
    records_path.parent.mkdir(parents=True, exist_ok=True)
    records_path.write_text(json.dumps(records, indent=2, sort_keys=True))
    return imported


def _git_revision(repo: Path) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        )
    except OSError:
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


# What of the checkout goes into the wheel (pyproject.toml's packages and package-data):
# copied into a temporary source tree, so the build never writes into the checkout (build/,
# *.egg-info) and the fingerprint covers exactly the files the wheel is made from.
SOURCE_FILES: tuple[str, ...] = ("pyproject.toml", "README.md")
SOURCE_DIRS: tuple[str, ...] = ("olm", "catalogs", "manifests")
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".mypy_cache")


def copy_source(repo: Path, target: Path) -> Path:
    target.mkdir(parents=True)
    for name in SOURCE_FILES:
        if (repo / name).is_file():
            shutil.copy2(repo / name, target / name)
    for name in SOURCE_DIRS:
        if (repo / name).is_dir():
            # symlinks=True keeps olm/data/catalogs -> ../../catalogs relative, as in the repo.
            shutil.copytree(repo / name, target / name, symlinks=True, ignore=IGNORED)
    return target


def tree_digest(root: Path) -> str:
    """SHA-256 over every file's relative path and content (symlinks by their target)."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest.update(f"L {relative} -> {os.readlink(path)}\n".encode())
        elif path.is_file():
            digest.update(f"F {relative} {sha256_file(path)}\n".encode())
    return digest.hexdigest()


def fingerprint(parts: Mapping[str, str]) -> str:
    """One key over everything the image is made from; a change in any part rebuilds."""
    return hashlib.sha256(json.dumps(dict(parts), sort_keys=True).encode()).hexdigest()


def wheelhouse_key(constraints: str, pyproject: bytes) -> str:
    """The dependency wheels depend on the pinned versions, the declared dependencies and
    the Python the wheels are for."""
    parts = {
        "constraints": constraints,
        "pyproject": hashlib.sha256(pyproject).hexdigest(),
        "python": f"cp{sys.version_info.major}{sys.version_info.minor}",
        "machine": os.uname().machine,
    }
    return fingerprint(parts)[:16]


def wheelhouse_dir(key: str) -> Path:
    return cache_root() / "wheels" / key


# The packaging tools `pip freeze` leaves out too: upgrading pip must not rebuild the wheels.
FREEZE_SKIPS = frozenset({"pip", "setuptools", "wheel", "distribute"})


def installed_requirements() -> str:
    """`name==version` of every distribution in the running environment, as `pip freeze` would
    list them, leaving out those installed from a URL or a directory (editable installs)."""
    lines = []
    for dist in metadata.distributions():
        name = dist.metadata["Name"]
        if name and name.lower() not in FREEZE_SKIPS and dist.read_text("direct_url.json") is None:
            lines.append(f"{name}=={dist.version}")
    return "\n".join(sorted(set(lines), key=str.lower)) + "\n"


def _pinned_constraints() -> str:
    return constraints_from_freeze(installed_requirements())


def ensure_dependency_wheels(
    source: Path, constraints: str, key: str, progress: Progress = QUIET
) -> list[Path]:
    """The dependencies' wheels, pinned to the running venv's versions; cached by `key`."""
    house = wheelhouse_dir(key)
    record = house / "complete.json"
    if record.is_file():
        names = json.loads(record.read_text())
        wheels = [house / name for name in names]
        if all(path.is_file() for path in wheels):
            progress.say(f"Using {len(wheels)} cached dependency wheels in {house}")
            return wheels
    partial = house.with_name(house.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(house, ignore_errors=True)
    partial.mkdir(parents=True)
    constraints_path = partial / "constraints.txt"
    constraints_path.write_text(constraints)
    _run(
        wheel_args(sys.executable, source, partial, constraints_path if constraints else None),
        "Building the dependencies' wheels on the host (pip wheel; once per set of versions)",
        progress,
        cwd=source,
        log=house.with_name(house.name + ".log"),
        hint="pip needs the package index (or its cache) for the dependencies; check access, "
        "then retry `olm dev image`.",
    )
    for own in partial.glob("olm_py-*.whl"):
        own.unlink()
    names = sorted(path.name for path in partial.glob("*.whl"))
    (partial / "complete.json").write_text(json.dumps(names, indent=2))
    partial.replace(house)
    # One wheelhouse per set of versions is enough: drop the older ones.
    for sibling in house.parent.iterdir():
        if sibling.name.startswith(house.name) or sibling.name.endswith(".partial"):
            continue
        if sibling.is_dir():
            shutil.rmtree(sibling, ignore_errors=True)
        else:
            sibling.unlink(missing_ok=True)
    return [house / name for name in names]


def _setuptools_usable() -> bool:
    """Can the project wheel be built without an isolated build env (no index needed)?"""
    try:
        major = int(metadata.version("setuptools").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return major >= 68


def build_project_wheel(source: Path, wheel_dir: Path, progress: Progress = QUIET) -> Path:
    args = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check"]
    if _setuptools_usable():
        args.append("--no-build-isolation")
    args += ["--quiet", "--wheel-dir", str(wheel_dir), str(source)]
    _run(args, "Building the olm-py wheel", progress, cwd=source, hint="See pip's output above.")
    built = sorted(wheel_dir.glob("olm_py-*.whl"))
    if not built:
        raise ImageError(f"pip wheel made no olm_py wheel in {wheel_dir}; see the pip output.")
    return built[-1]


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def current_image_record() -> Path:
    return podman_dir() / "olm-py-image.json"


def _image_is_current(key: str, version: str, env: Mapping[str, str]) -> bool:
    try:
        record = json.loads(current_image_record().read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("fingerprint") != key:
        return False
    ids = {_image_id(tag, env) for tag in image_tags(version)}
    return ids == {record.get("image_id")}


def repo_root() -> Path:
    """The source tree holding the Dockerfile (this checkout)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / "Dockerfile").is_file() or not (root / "pyproject.toml").is_file():
        raise ImageError(
            f"No Dockerfile and pyproject.toml in {root}: `olm dev image` builds from a source "
            "checkout of olm-py (an editable install); run it there."
        )
    return root


def build_image(progress: Progress = QUIET, repo: Path | None = None, force: bool = False) -> str:
    """Build `localhost/olm-py:dev` (and `:<version>`) offline; return the dev reference.

    Nothing is rebuilt when the image podman holds was built from the same inputs (sources,
    Dockerfile, dependency versions, base image, version, revision) unless `force`.
    """
    repo = repo if repo is not None else repo_root()
    ensure_host_packages(progress)
    base_id = ensure_base_image(progress=progress)
    version = package_version()
    revision = _git_revision(repo)
    env = podman_env()
    with tempfile.TemporaryDirectory(prefix="olm-py-image-") as temporary:
        source = copy_source(repo, Path(temporary) / "source")
        constraints = _pinned_constraints()
        deps_key = wheelhouse_key(constraints, (repo / "pyproject.toml").read_bytes())
        dockerignore = repo / ".dockerignore"
        key = fingerprint(
            {
                "source": tree_digest(source),
                "dockerfile": sha256_file(repo / "Dockerfile"),
                "dockerignore": sha256_file(dockerignore) if dockerignore.is_file() else "",
                "dependencies": deps_key,
                "base": base_id,
                "version": version,
                "revision": revision or "",
            }
        )
        reference = image_tags(version)[0]
        if not force and _image_is_current(key, version, env):
            progress.say(f"Image {reference} is up to date (same sources, wheels and base)")
            return reference
        context = Path(temporary) / "context"
        wheels = context / "wheels"
        wheels.mkdir(parents=True)
        shutil.copy2(repo / "Dockerfile", context / "Dockerfile")
        if dockerignore.is_file():
            shutil.copy2(dockerignore, context / ".dockerignore")
        for wheel in ensure_dependency_wheels(source, constraints, deps_key, progress):
            _link_or_copy(wheel, wheels / wheel.name)
        build_project_wheel(source, wheels, progress)
        _run(
            podman_build_args(context, version, revision),
            f"Building {', '.join(image_tags(version))} (podman build --network=none)",
            progress,
            env=env,
            log=podman_dir() / "last-build.log",
            hint="Fix the Dockerfile or the wheels, then retry `olm dev image`.",
        )
    image_id = _image_id(reference, env)
    # Drop olm-py images that no tag names any more (the previous builds); errors are harmless.
    subprocess.run(
        ["podman", "image", "prune", "--force", "--filter", f"label={TITLE_LABEL}=olm-py"],
        env=env,
        capture_output=True,
    )
    current_image_record().write_text(
        json.dumps({"fingerprint": key, "image_id": image_id}, indent=2)
    )
    progress.say(f"Image {reference} is ready")
    return reference
