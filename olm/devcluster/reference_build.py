"""The reference OLM's build: the real OLM v0.38.0's commands and CRDs, in a verified cache.

`ensure_reference_olm()` builds OLM's `olm`, `catalog` and `package-server` commands from the Go
module proxy through a throw-away wrapper module (the proxy refuses `go install` for OLM's
modules), and copies OLM's own CRDs out of the operator-framework/api module, into a cache of
their own: `<cache root>/tools/olm-v0.38.0/{olm,catalog,package-server,crds/}`. How it runs on
a local cluster is reference.py's and reference_cluster.py's.

Invariants:
- The cache is a verified cache (verifiedcache.py): complete only when `manifest.json`, written
  last, records the exact build inputs (the list of commands among them: a cache built with
  fewer is stale and rebuilt whole) and lists every command and the CRDs with their size and
  SHA-256. A complete cache is reused without invoking Go. Concurrent builders are serialized
  by a lock file next to the cache.
- Every failure raises `BuildError` naming what failed and what to do next.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from olm.devcluster import gotoolchain
from olm.devcluster.gotoolchain import GoRun, find_go
from olm.devcluster.verifiedcache import (
    MANIFEST,
    BuildError,
    ensure_built,
    manifest_problems,
    write_manifest,
)
from olm.devcluster.versions import cache_root
from olm.progress import QUIET, Progress

OLM_VERSION = "v0.38.0"
OLM_MODULE = "github.com/operator-framework/operator-lifecycle-manager"
# The operator-framework/api release OLM v0.38.0 resolves to; its `crds/` are OLM's CRDs.
API_MODULE = "github.com/operator-framework/api"
API_VERSION = "v0.36.0"
# package-server is OLM's aggregated API server (packages.operators.coreos.com); built for the
# parity suite to run beside the reference OLM.
COMMANDS: tuple[str, ...] = ("olm", "catalog", "package-server")
BUILD_TAGS = "json1"
WRAPPER_MODULE = "local/olmbin"
WRAPPER_GO = "1.24.6"
CRDS_DIR = "crds"


@dataclass(frozen=True)
class ReferenceOlmBinaries:
    """The built reference OLM: its commands and OLM's CRDs."""

    root: Path

    @property
    def olm(self) -> Path:
        return self.root / "olm"

    @property
    def catalog(self) -> Path:
        return self.root / "catalog"

    @property
    def package_server(self) -> Path:
        return self.root / "package-server"

    @property
    def crds(self) -> Path:
        return self.root / CRDS_DIR

    def crd_files(self) -> list[Path]:
        return sorted(self.crds.glob("*.yaml"))


def reference_dir(version: str = OLM_VERSION) -> Path:
    return cache_root() / "tools" / f"olm-{version}"


def reference_ldflags(version: str = OLM_VERSION) -> str:
    """Strip, and stamp the version (else `olm --version` says `OLM version: ` and nothing)."""
    return f"-s -w -X {OLM_MODULE}/pkg/version.OLMVersion={version}"


def wrapper_go_mod() -> str:
    return f"module {WRAPPER_MODULE}\n\ngo {WRAPPER_GO}\n"


def go_get_args(version: str = OLM_VERSION) -> list[str]:
    """`go get -tool` pins every command in the wrapper module (`go install pkg@v` is refused:
    it reads the module's version list, which the proxy answers with 403 for OLM)."""
    return ["get", "-tool", *(f"{OLM_MODULE}/cmd/{name}@{version}" for name in COMMANDS)]


def go_build_args(out_dir: Path, version: str = OLM_VERSION) -> list[str]:
    return [
        "build",
        "-trimpath",
        "-tags",
        BUILD_TAGS,
        "-ldflags",
        reference_ldflags(version),
        "-o",
        f"{out_dir}/",
        *(f"{OLM_MODULE}/cmd/{name}" for name in COMMANDS),
    ]


GOFLAGS = "-mod=mod -buildvcs=false"


def go_env(base: Mapping[str, str]) -> dict[str, str]:
    """The build environment: modules only, the installed toolchain, no cgo (gotoolchain.py)."""
    return gotoolchain.go_env(dict(base), GOFLAGS)


def build_inputs(version: str = OLM_VERSION, api_version: str = API_VERSION) -> dict[str, str]:
    """What the cache was built from; any change means a rebuild."""
    return {
        "module": OLM_MODULE,
        "version": version,
        "commands": ",".join(COMMANDS),
        "api_module": API_MODULE,
        "api_version": api_version,
        "tags": BUILD_TAGS,
        "ldflags": reference_ldflags(version),
        "cgo": "0",
    }


def cache_problems(root: Path, inputs: Mapping[str, str]) -> list[str]:
    """Why the reference cache at `root` is not usable; an empty list means it is complete."""
    problems = manifest_problems(root, COMMANDS, inputs)
    if problems or any(path.startswith(f"{CRDS_DIR}/") for path in _listed(root)):
        return problems
    return [f"no CRDs are listed in {root / MANIFEST}"]


def _listed(root: Path) -> list[str]:
    return list(json.loads((root / MANIFEST).read_text())["files"])


def _write_manifest(root: Path, inputs: Mapping[str, str]) -> None:
    crds = (f"{CRDS_DIR}/{path.name}" for path in sorted((root / CRDS_DIR).glob("*")))
    write_manifest(root, [*COMMANDS, *crds], inputs=dict(inputs))


def _find_go() -> str:
    return find_go(f"The reference OLM {OLM_VERSION}")


def go_available() -> bool:
    """Whether a usable Go toolchain is installed (tests skip the reference OLM without it)."""
    try:
        _find_go()
    except BuildError:
        return False
    return True


class _Builder:
    def __init__(self, root: Path, go: str, progress: Progress) -> None:
        self.root = root
        self.go = GoRun(go, root / "build.log", progress, GOFLAGS, "run `make reference-olm`")

    def go_run(self, args: Sequence[str], cwd: Path, what: str) -> str:
        return self.go.run(args, cwd, what)

    def build(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.go.log_path.write_text("")
        work = self.root / "src"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        (work / "go.mod").write_text(wrapper_go_mod())
        self.go_run(go_get_args(), work, f"Resolving OLM {OLM_VERSION} in a wrapper module")
        out = Path(tempfile.mkdtemp(prefix="bin-", dir=self.root))
        try:
            self.go_run(
                go_build_args(out),
                work,
                f"Building the real OLM {OLM_VERSION} ({', '.join(COMMANDS)}) into {self.root} "
                "(about 7 minutes cold on 2 busy cores; later runs reuse it)",
            )
            for name in COMMANDS:
                built = out / name
                if not built.is_file():
                    raise BuildError(f"go build reported success but {built} is missing.")
                built.replace(self.root / name)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        self._copy_crds(work)

    def _copy_crds(self, work: Path) -> None:
        listed = json.loads(
            self.go_run(["list", "-m", "-json", API_MODULE], work, "Locating OLM's API module")
        )
        if listed.get("Version") != API_VERSION:
            raise BuildError(
                f"OLM {OLM_VERSION} resolved {API_MODULE} {listed.get('Version')}, expected "
                f"{API_VERSION}: update API_VERSION in olm/devcluster/reference_build.py together "
                "with OLM_VERSION."
            )
        downloaded = json.loads(
            self.go_run(
                ["mod", "download", "-json", f"{API_MODULE}@{API_VERSION}"],
                work,
                f"Fetching OLM's CRDs ({API_MODULE} {API_VERSION})",
            )
        )
        source = Path(str(downloaded.get("Dir", ""))) / CRDS_DIR
        crds = sorted(source.glob("*.yaml"))
        if not crds:
            raise BuildError(f"No CRDs were found in {source} ({API_MODULE} {API_VERSION}).")
        target = self.root / CRDS_DIR
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for crd in crds:
            (target / crd.name).write_bytes(crd.read_bytes())


def ensure_reference_olm(progress: Progress = QUIET, *, build: bool = True) -> ReferenceOlmBinaries:
    """The cached real OLM (`olm`, `catalog`, OLM's CRDs), building it first if needed."""
    root = reference_dir()
    inputs = build_inputs()

    def build_and_seal() -> None:
        _Builder(root, _find_go(), progress).build()
        _write_manifest(root, inputs)

    ensure_built(
        root,
        f"reference OLM {OLM_VERSION}",
        lambda: cache_problems(root, inputs),
        build_and_seal,
        progress,
        rebuild="`make reference-olm`",
        may_build=build,
    )
    return ReferenceOlmBinaries(root)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m olm.devcluster.reference_build` (`make reference-olm`): build or reuse the cache."""
    argparse.ArgumentParser(
        prog="python -m olm.devcluster.reference_build",
        description=(
            f"Build (or reuse) the real OLM {OLM_VERSION}: its olm, catalog and package-server"
            " commands from the Go module proxy, and its CRDs; print the cache's folder."
        ),
        epilog=(
            "Takes about 7 minutes cold, a second when the cache is complete. Writes"
            f" <cache root>/tools/olm-{OLM_VERSION}/ ($OLM_PY_CACHE, else ~/.cache/olm-py) and"
            " Go's own caches."
        ),
    ).parse_args(argv)
    try:
        binaries = ensure_reference_olm(Progress())
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(binaries.root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
