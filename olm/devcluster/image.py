"""Build olm-py's container image offline: `olm dev image`.

On the stand-in base image (image_base.py: `python:3.11-slim-bookworm` made from Debian
packages), this module builds the project's wheels on the host and runs `podman build
--pull=never --network=none`. The same Dockerfile builds anywhere the official image can be
pulled.

Invariants:
- Nothing is written into the repo: the record of the last build lives in
  `<cache root>/podman`, the dependencies' wheels in `<cache root>/wheels/<key>` (key: the
  venv's pinned versions, pyproject.toml, the Python tag); the project's wheel is built from a
  temporary copy of the sources, in a temporary build context removed afterwards.
- An image is rebuilt only when one of its inputs changed (sources, Dockerfile, dependency
  versions, base image ID, version, git revision): their fingerprint is recorded with the
  image ID after each build.
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
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from olm.devcluster.image_base import (
    ImageError,
    ensure_base_image,
    ensure_host_packages,
    image_id,
    podman_dir,
    podman_env,
    run_step,
)
from olm.devcluster.verifiedcache import build_lock, sha256_file
from olm.devcluster.versions import cache_root
from olm.progress import QUIET, Progress

IMAGE_REPOSITORY = "localhost/olm-py"
DEV_TAG = "dev"
TITLE_LABEL = "org.opencontainers.image.title"
# ---- pure parts: paths and argument lists ----------------------------------------------------


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


def _cached_wheels(house: Path) -> list[Path] | None:
    """The wheels of a complete wheelhouse (its record lists them, all present), else None."""
    record = house / "complete.json"
    if not record.is_file():
        return None
    wheels = [house / name for name in json.loads(record.read_text())]
    return wheels if all(path.is_file() for path in wheels) else None


def ensure_dependency_wheels(
    source: Path, constraints: str, key: str, progress: Progress = QUIET
) -> list[Path]:
    """The dependencies' wheels, pinned to the running venv's versions; cached by `key`.

    Concurrent builds (two `make test` of two clones) wait for each other on a lock beside
    the wheelhouse; the one that waited reuses what the other built."""
    house = wheelhouse_dir(key)
    wheels = _cached_wheels(house)
    if wheels is None:
        with build_lock(house):
            wheels = _cached_wheels(house) or _build_wheelhouse(
                source, constraints, house, progress
            )
    progress.say(f"Using {len(wheels)} cached dependency wheels in {house}")
    return wheels


def _build_wheelhouse(
    source: Path, constraints: str, house: Path, progress: Progress
) -> list[Path]:
    partial = house.with_name(house.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(house, ignore_errors=True)
    partial.mkdir(parents=True)
    constraints_path = partial / "constraints.txt"
    constraints_path.write_text(constraints)
    run_step(
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
    # One wheelhouse per set of versions is enough: drop the older ones (not a build of
    # another set in progress, nor its lock).
    for sibling in house.parent.iterdir():
        if sibling.name.startswith(house.name) or sibling.name.endswith((".partial", ".lock")):
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
    run_step(
        args, "Building the olm-py wheel", progress, cwd=source, hint="See pip's output above."
    )
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
    ids = {image_id(tag, env) for tag in image_tags(version)}
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
        run_step(
            podman_build_args(context, version, revision),
            f"Building {', '.join(image_tags(version))} (podman build --network=none)",
            progress,
            env=env,
            log=podman_dir() / "last-build.log",
            hint="Fix the Dockerfile or the wheels, then retry `olm dev image`.",
        )
    built_id = image_id(reference, env)
    # Drop olm-py images that no tag names any more (the previous builds); errors are harmless.
    subprocess.run(
        ["podman", "image", "prune", "--force", "--filter", f"label={TITLE_LABEL}=olm-py"],
        env=env,
        capture_output=True,
    )
    current_image_record().write_text(
        json.dumps({"fingerprint": key, "image_id": built_id}, indent=2)
    )
    progress.say(f"Image {reference} is ready")
    return reference
