"""Build the control-plane binaries from the Go module proxy into a versioned cache.

Invariants:
- The cache is a verified cache (verifiedcache.py): complete only when `manifest.json`, written
  last, lists every binary and the kwok stages with their size and SHA-256; a complete cache
  is reused without invoking Go at all.
- Every failure raises `BuildError` naming what failed and what to do next.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from olm.devcluster.gotoolchain import find_go
from olm.devcluster.verifiedcache import (
    BuildError,
    ensure_built,
    manifest_problems,
    write_manifest,
)
from olm.devcluster.versions import (
    KUBERNETES_COMMANDS,
    KUBERNETES_STAGING_MODULES,
    KWOK_STAGE_FILES,
    PINNED,
    VersionSet,
    cache_dir,
)
from olm.progress import QUIET, Progress

STAGES_FILE = "kwok-stages.yaml"
BINARY_NAMES: tuple[str, ...] = (*KUBERNETES_COMMANDS, "etcd", "kwok", "opm")


@dataclass(frozen=True)
class Binaries:
    """The complete set of built binaries for one version set."""

    root: Path

    @property
    def bin_dir(self) -> Path:
        return self.root / "bin"

    def path(self, name: str) -> Path:
        return self.bin_dir / name

    @property
    def stages(self) -> Path:
        return self.root / STAGES_FILE


CACHED_FILES: tuple[str, ...] = (*(f"bin/{name}" for name in BINARY_NAMES), STAGES_FILE)


def cache_problems(root: Path) -> list[str]:
    """Why the cache at `root` is not complete; an empty list means it is complete."""
    return manifest_problems(root, CACHED_FILES)


def _write_manifest(root: Path, versions: VersionSet) -> None:
    # The version set is recorded for people reading the cache; the folder's name pins it.
    write_manifest(root, CACHED_FILES, versions=versions.__dict__)


def ensure_binaries(
    versions: VersionSet = PINNED,
    *,
    root: Path | None = None,
    build: bool = True,
    progress: Progress = QUIET,
) -> Binaries:
    """Return the cached binaries, building them first if the cache is not complete."""
    root = root if root is not None else cache_dir(versions)
    builder = GoBuilder(root, versions, progress)
    ensure_built(
        root,
        "control-plane binaries",
        lambda: cache_problems(root),
        builder.build_all,
        progress,
        rebuild="`olm dev build`",
        may_build=build,
        lock=False,
    )
    return Binaries(root)


class GoBuilder:
    """Runs the Go toolchain to build each component group into `root/bin`."""

    def __init__(self, root: Path, versions: VersionSet, progress: Progress) -> None:
        self.root = root
        self.versions = versions
        self.progress = progress
        self.logs = root / "logs"
        self.go = os.environ.get("OLM_PY_GO") or shutil.which("go")

    def build_all(self) -> None:
        self._check_go()
        (self.root / "bin").mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        self.progress.say(
            f"Building control-plane binaries into {self.root} "
            "(a cold build took about 10 minutes on 2 cores here; later runs reuse the cache)"
        )
        if not all((self.root / "bin" / name).is_file() for name in KUBERNETES_COMMANDS):
            self._build_kubernetes()
        if not (self.root / "bin" / "etcd").is_file():
            self._build_etcd()
        if not (self.root / "bin" / "kwok").is_file() or not (self.root / STAGES_FILE).is_file():
            self._build_kwok()
        if not (self.root / "bin" / "opm").is_file():
            self._build_opm()
        _write_manifest(self.root, self.versions)

    def _check_go(self) -> None:
        self.go = find_go("The local control plane", "then rerun `olm dev build`")

    def _go(
        self, args: Sequence[str], cwd: Path, what: str, log_name: str, cgo: bool = False
    ) -> None:
        assert self.go is not None
        # The checksum database does not answer for every module the proxy serves here; the
        # versions are pinned and the proxy is the trust anchor, so verification is off
        # unless OLM_PY_GOSUMDB names a database to use.
        env = dict(
            os.environ,
            GOFLAGS="-mod=mod",
            CGO_ENABLED="1" if cgo else "0",
            GOTOOLCHAIN="local",
            GOSUMDB=os.environ.get("OLM_PY_GOSUMDB", "off"),
        )
        log_path = self.logs / f"{log_name}.log"
        with log_path.open("a") as log, self.progress.heartbeat(what):
            log.write(f"$ go {' '.join(args)}\n")
            log.flush()
            result = subprocess.run(
                [self.go, *args], cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        if result.returncode != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-15:]
            hint = (
                "The Go module proxy could not be reached or refused a module: check network "
                f"access to GOPROXY ({os.environ.get('GOPROXY', 'the default proxy')}), or "
                "set GOSUMDB=off if only the checksum database is unreachable."
                if any(
                    marker in line
                    for line in tail
                    for marker in ("dial tcp", "proxy", "403", "404", "no such host", "timeout")
                )
                else "The compiler failed; see the log."
            )
            raise BuildError(
                f"{what} failed (go exit {result.returncode}). {hint} "
                f"Full log: {log_path}. Last lines:\n  "
                + "\n  ".join(tail)
                + "\nFix the cause, then rerun `olm dev build`."
            )

    def _wrapper_module(self, name: str, go_line: str) -> Path:
        work = self.root / "src" / name
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        (work / "go.mod").write_text(f"module local.olmpy/{name}\n\ngo {go_line}\n")
        return work

    def _build_kubernetes(self) -> None:
        kube, staging = self.versions.kubernetes, self.versions.kubernetes_staging
        work = self._wrapper_module("kubernetes", "1.24.0")
        edits = ["mod", "edit", "-godebug=default=go1.24"]
        edits += [f"-replace=k8s.io/{m}=k8s.io/{m}@{staging}" for m in KUBERNETES_STAGING_MODULES]
        self._go(edits, work, "Preparing the Kubernetes wrapper module", "kubernetes")
        packages = [f"k8s.io/kubernetes/cmd/{cmd}" for cmd in KUBERNETES_COMMANDS]
        self._go(
            ["get", "-tool", *(f"{p}@{kube}" for p in packages)],
            work,
            f"Downloading Kubernetes {kube} modules from the Go module proxy",
            "kubernetes",
        )
        major, minor = kube.lstrip("v").split(".")[:2]
        stamps = {
            "gitVersion": kube,
            "gitMajor": major,
            "gitMinor": minor,
            "gitTreeState": "clean",
            "gitCommit": "0000000000000000000000000000000000000000",
            "buildDate": "1970-01-01T00:00:00Z",
        }
        ldflags = ["-s", "-w"] + [
            f"-X {package}.{key}={value}"
            for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
            for key, value in stamps.items()
        ]
        self._go(
            [
                "build",
                "-trimpath",
                "-ldflags",
                " ".join(ldflags),
                "-o",
                str(self.root / "bin"),
                *packages,
            ],
            work,
            f"Compiling {', '.join(KUBERNETES_COMMANDS)} {kube}",
            "kubernetes",
        )

    def _build_tool(
        self,
        name: str,
        package: str,
        version: str,
        go_line: str,
        *,
        tags: str = "",
        cgo: bool = False,
    ) -> Path:
        """`go get -tool` one command into a wrapper module, then build it into bin/<name>."""
        work = self._wrapper_module(name, go_line)
        self._go(
            ["get", "-tool", f"{package}@{version}"], work, f"Downloading {name} {version}", name
        )
        flags = ["-tags", tags] if tags else []
        output = str(self.root / "bin" / name)
        what = f"Compiling {name} {version}" + (" (cgo)" if cgo else "")
        self._go(
            ["build", "-trimpath", *flags, "-ldflags", "-s -w", "-o", output, package],
            work,
            what,
            name,
            cgo=cgo,
        )
        return work

    def _build_etcd(self) -> None:
        self._build_tool("etcd", "go.etcd.io/etcd/server/v3", self.versions.etcd, "1.24.0")

    def _build_kwok(self) -> None:
        work = self._build_tool("kwok", "sigs.k8s.io/kwok/cmd/kwok", self.versions.kwok, "1.26.0")
        self._collect_kwok_stages(work)

    def _build_opm(self) -> None:
        self._build_tool(
            "opm",
            "github.com/operator-framework/operator-registry/cmd/opm",
            self.versions.opm,
            "1.24.0",
            tags="json1,containers_image_openpgp",
            cgo=True,
        )

    def _collect_kwok_stages(self, work: Path) -> None:
        assert self.go is not None
        modcache = subprocess.run(
            [self.go, "env", "GOMODCACHE"], cwd=work, capture_output=True, text=True, check=True
        ).stdout.strip()
        module_dir = Path(modcache) / f"sigs.k8s.io/kwok@{self.versions.kwok}"
        documents = []
        for relative in KWOK_STAGE_FILES:
            source = module_dir / relative
            if not source.is_file():
                raise BuildError(
                    f"kwok's stage file {source} is missing from the Go module cache; "
                    "run `go clean -modcache` only if it is corrupt, then rerun `olm dev build`."
                )
            documents.append(f"# from {relative}\n" + source.read_text().strip() + "\n")
        (self.root / STAGES_FILE).write_text("---\n".join(documents))
