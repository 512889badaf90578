"""Publish olm-py to a registry: `olm dev release`, which `make release` runs.

A release is two artifacts in one registry (`REGISTRY`, `host[:port][/path]`):
- the image `<REGISTRY>/olm-py:<version>`: `localhost/olm-py:dev`, built (or found current) by
  `olm dev image`, pushed by podman under that name;
- the chart `oci://<REGISTRY>/charts/olm-py`, chart version and appVersion `<version>`: a copy
  of charts/olm-py whose values.yaml names that image, packaged and pushed by Helm, so
  `helm install olm-py oci://<REGISTRY>/charts/olm-py --version <version>` needs no values.

Invariants:
- The checkout is never changed: the released chart is a temporary copy.
- The image is pushed before the chart, so a pushed chart never names a missing image.
- `<version>` is a SemVer 2 version without build metadata (Helm needs SemVer; an image tag
  cannot hold `+`); it defaults to the olm-py package's version.
- Plain HTTP only for a loopback registry (as olm.image does) or when asked (`plain_http`);
  `insecure` keeps TLS but skips verification.
- Credentials are podman's and Helm's own (`podman login`, `helm registry login`): this module
  never reads, passes or prints them.
- Every failure raises `ReleaseError` naming the step and what to do next.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from olm.devcluster.image import DEV_TAG, IMAGE_REPOSITORY, package_version
from olm.image.errors import ImageError
from olm.image.reference import is_loopback, parse
from olm.progress import QUIET, Progress

IMAGE_NAME = "olm-py"
CHART_NAME = "olm-py"
CHARTS_PATH = "charts"
SOURCE_IMAGE = f"{IMAGE_REPOSITORY}:{DEV_TAG}"
MAKE_USAGE = "make release REGISTRY=<host[:port]/path> [VERSION=x.y.z] [PLAIN_HTTP=1]"
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
)


class ReleaseError(RuntimeError):
    """A release step failed; the message says which and what to do next."""


@dataclass(frozen=True)
class Release:
    """Where one release goes; every name is derived from `registry` and `version`."""

    registry: str  # host[:port][/path], no scheme, no trailing slash
    version: str
    plain_http: bool = False
    insecure: bool = False

    @property
    def host(self) -> str:
        return self.registry.split("/", 1)[0]

    @property
    def image_repository(self) -> str:
        return f"{self.registry}/{IMAGE_NAME}"

    @property
    def image(self) -> str:
        return f"{self.image_repository}:{self.version}"

    @property
    def chart_repository(self) -> str:
        """What `helm push` is given: the OCI namespace the chart is pushed under."""
        return f"oci://{self.registry}/{CHARTS_PATH}"

    @property
    def chart(self) -> str:
        return f"{self.chart_repository}/{CHART_NAME}"

    def transport_flags(self) -> list[str]:
        """Helm's flags for this registry's transport (also for `helm install`/`pull`)."""
        if self.plain_http:
            return ["--plain-http"]
        return ["--insecure-skip-tls-verify"] if self.insecure else []

    def install_command(self) -> str:
        flags = "".join(f" {flag}" for flag in self.transport_flags())
        return f"helm install olm-py {self.chart} --version {self.version}{flags}"


# ---- pure parts: validation, the released values, argument lists, hints --------------------


def plan_release(
    registry: str, version: str | None = None, *, plain_http: bool = False, insecure: bool = False
) -> Release:
    """The release to make, or ReleaseError naming the bad value (REGISTRY or VERSION)."""
    text = registry.strip().rstrip("/")
    if not text:
        raise ReleaseError(f"REGISTRY is not set: where should the release go? Run `{MAKE_USAGE}`")
    if "://" in text:
        raise ReleaseError(
            f"REGISTRY {registry!r} has a URL scheme: leave out oci://, http:// or https:// "
            "(write host[:port]/path; PLAIN_HTTP=1 chooses plain HTTP)"
        )
    first = text.split("/", 1)[0]
    if not ("." in first or ":" in first or first == "localhost"):
        raise ReleaseError(
            f"REGISTRY {registry!r} does not start with a registry host: write host[:port]/path, "
            "e.g. quay.io/<org>, ghcr.io/<owner> or 127.0.0.1:5000"
        )
    chosen = version.strip() if version and version.strip() else package_version()
    if not _SEMVER.fullmatch(chosen):
        raise ReleaseError(
            f"VERSION {chosen!r} is not a SemVer version (MAJOR.MINOR.PATCH[-PRERELEASE], e.g. "
            "0.2.0 or 0.2.0-rc.1; no +build part): Helm needs SemVer and it is the image tag too"
        )
    try:
        parse(f"{text}/{IMAGE_NAME}:{chosen}")
    except ImageError as exc:
        raise ReleaseError(f"REGISTRY {registry!r} makes no valid image name: {exc}") from exc
    return Release(text, chosen, plain_http=plain_http or is_loopback(first), insecure=insecure)


def release_values(text: str, repository: str, tag: str) -> str:
    """values.yaml with `image.repository` and `image.tag` set (comments and the rest kept).

    The comment lines right above `repository:` are replaced by one saying where it came from.
    """
    lines = text.splitlines()
    out: list[str] = []
    in_image = False
    done = set()
    for line in lines:
        if line and not line.startswith((" ", "#")):
            in_image = line.rstrip() == "image:"
        stripped = line.strip()
        if in_image and stripped.startswith("repository:"):
            while out and out[-1].strip().startswith("#"):
                out.pop()
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# The image released with this chart (`make release`).")
            out.append(f"{indent}repository: {json.dumps(repository)}")
            done.add("repository")
        elif in_image and stripped.startswith("tag:"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}tag: {json.dumps(tag)}")
            done.add("tag")
        else:
            out.append(line)
    result = "\n".join(out) + "\n"
    image = (yaml.safe_load(result) or {}).get("image") or {}
    if done != {"repository", "tag"} or (image.get("repository"), image.get("tag")) != (
        repository,
        tag,
    ):
        raise ReleaseError(
            "charts/olm-py/values.yaml has no `image:` block with `repository:` and `tag:` "
            "lines to set; restore them (see git diff charts/olm-py/values.yaml)"
        )
    return result


def podman_push_args(release: Release, source: str, digestfile: Path) -> list[str]:
    args = ["podman", "push", "--digestfile", str(digestfile)]
    if release.plain_http or release.insecure:
        args.append("--tls-verify=false")
    return [*args, source, f"docker://{release.image}"]


def helm_package_args(helm: Path, chart: Path, destination: Path, version: str) -> list[str]:
    return [
        str(helm),
        "package",
        str(chart),
        "--version",
        version,
        "--app-version",
        version,
        "--destination",
        str(destination),
    ]


def helm_push_args(helm: Path, package: Path, release: Release) -> list[str]:
    return [str(helm), "push", str(package), release.chart_repository, *release.transport_flags()]


def push_hint(output: str, release: Release, login: str) -> str:
    """What to do about a failed push, read from the tool's output."""
    text = output.lower()
    if "server gave http response to https client" in text:
        return f"{release.host} speaks plain HTTP: add PLAIN_HTTP=1 (olm dev release --plain-http)."
    if "x509" in text or "certificate" in text:
        return (
            f"{release.host}'s TLS certificate is not trusted: trust its CA, or for a test "
            "registry add INSECURE=1 (olm dev release --insecure)."
        )
    if any(
        word in text for word in ("unauthorized", "authentication required", "denied", "forbidden")
    ):
        return f"{release.host} wants credentials: run `{login} {release.host}`, then retry."
    if any(
        word in text
        for word in ("connection refused", "no such host", "i/o timeout", "connection reset")
    ):
        return (
            f"Nothing answers at {release.host}: check REGISTRY (the local cluster's registry is "
            "OLM_REGISTRY in `olm dev env`) and that the registry runs, then retry."
        )
    return "Check REGISTRY and that the registry accepts pushes, then retry `make release`."


def failure_lines(output: str) -> list[str]:
    """The lines of a failed tool's output worth showing: its `Error:` lines (podman and Helm
    end with one; the last 3), else the last 8 lines."""
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("Error:")]
    return errors[-3:] if errors else lines[-8:]


# ---- I/O -----------------------------------------------------------------------------------


def _run(
    args: Sequence[str],
    what: str,
    progress: Progress,
    *,
    env: Mapping[str, str] | None = None,
    hint: str | None = None,
    login: str = "",
    release: Release | None = None,
) -> str:
    """Run a command under a heartbeat; on failure raise ReleaseError with the output's tail
    and what to do (`hint`, else one read from the output)."""
    with progress.heartbeat(what):
        try:
            result = subprocess.run(
                list(args),
                env=dict(env) if env is not None else None,
                capture_output=True,
                text=True,
                errors="replace",
            )
        except OSError as exc:
            raise ReleaseError(f"{what} failed: cannot run {args[0]} ({exc})") from exc
    output = result.stdout + result.stderr
    if result.returncode != 0:
        tail = "\n  ".join(failure_lines(output))
        advice = hint or (push_hint(output, release, login) if release else "")
        raise ReleaseError(f"{what} failed (exit {result.returncode}):\n  {tail}\n{advice}")
    return output


def _check_source_image(env: Mapping[str, str]) -> None:
    found = subprocess.run(
        ["podman", "image", "exists", SOURCE_IMAGE], env=dict(env), capture_output=True
    )
    if found.returncode != 0:
        raise ReleaseError(
            f"There is no {SOURCE_IMAGE} in podman to push: run `make image` first, or release "
            "without --no-build (it builds the image)."
        )


def release_chart_dir(repo: Path, release: Release, workdir: Path) -> Path:
    """A copy of charts/olm-py (symlinks resolved) whose values name the released image."""
    chart = workdir / CHART_NAME
    shutil.copytree(repo / CHARTS_PATH / CHART_NAME, chart, symlinks=False)
    values = chart / "values.yaml"
    values.write_text(release_values(values.read_text(), release.image_repository, release.version))
    return chart


def publish(
    release: Release,
    *,
    build: bool = True,
    progress: Progress = QUIET,
    repo: Path | None = None,
) -> str:
    """Push the image, then the chart; the pushed image's digest."""
    from olm.devcluster.image import build_image, repo_root
    from olm.devcluster.image_base import podman_env
    from olm.devcluster.tools import ensure_helm

    repo = repo if repo is not None else repo_root()
    transport = (
        "plain HTTP" if release.plain_http else ("TLS, unverified" if release.insecure else "TLS")
    )
    progress.say(f"Releasing olm-py {release.version} to {release.registry} ({transport})")
    if build:
        build_image(progress, repo=repo)
    env = podman_env()
    _check_source_image(env)
    helm = ensure_helm(progress)  # before any push: a missing Helm must not leave half a release
    with tempfile.TemporaryDirectory(prefix="olm-py-release-") as temporary:
        workdir = Path(temporary)
        digestfile = workdir / "digest"
        _run(
            podman_push_args(release, SOURCE_IMAGE, digestfile),
            f"Pushing {SOURCE_IMAGE} as {release.image} (podman push)",
            progress,
            env=env,
            login="podman login",
            release=release,
        )
        digest = digestfile.read_text().strip() if digestfile.is_file() else ""
        progress.say(f"Pushed {release.image}" + (f" ({digest})" if digest else ""))
        chart = release_chart_dir(repo, release, workdir)
        _run(
            [str(helm), "lint", "--strict", str(chart)],
            "Linting the release chart (helm lint --strict)",
            progress,
            hint="Fix what helm lint reports in charts/olm-py, then retry.",
        )
        packages = workdir / "packages"
        _run(
            helm_package_args(helm, chart, packages, release.version),
            f"Packaging chart {CHART_NAME} {release.version} (helm package)",
            progress,
            hint="See helm's message above; the chart is charts/olm-py.",
        )
        package = packages / f"{CHART_NAME}-{release.version}.tgz"
        if not package.is_file():
            raise ReleaseError(f"helm package made no {package.name}; see `helm package` output.")
        _run(
            helm_push_args(helm, package, release),
            f"Pushing the chart to {release.chart_repository} (helm push)",
            progress,
            login="helm registry login",
            release=release,
        )
    progress.say(f"Pushed {release.chart}:{release.version}")
    return digest
