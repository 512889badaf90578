"""Developer tools built from the Go module proxy into caches of their own: Helm, and the
`kubectl operator` plugin (kubectl-operator) that OLM users drive OLM v0 with; and `TOOLS`,
every pinned tool a user builds with one command (`make tools`: these two and the reference
OLM of reference_build.py).

Invariants:
- Each tool lives in `<cache root>/tools/<name>-<version>/`, apart from the control-plane
  cache, so pinning or rebuilding a tool never touches the (long) Kubernetes build.
- Helm is `go install`ed; kubectl-operator is built in a throw-away wrapper module (`src/`)
  that pins it with `go get -tool` (as the reference OLM is), and is stamped with the tag's
  version and commit, checked against what the module proxy reports for the tag.
- Each tool's folder is a verified cache (verifiedcache.py): complete only when
  `manifest.json`, written last, records the exact build inputs (the version and the `-X`
  stamps) and the binary's size and SHA-256; a complete cache is reused without invoking Go.
  Concurrent builders of one tool wait for each other (a lock file beside its folder).
- Every failure raises `BuildError` naming what failed and what to do next.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from olm.devcluster.gotoolchain import GoRun, find_go
from olm.devcluster.reference_build import ensure_reference_olm
from olm.devcluster.verifiedcache import (
    BuildError,
    ensure_built,
    manifest_problems,
    write_manifest,
)
from olm.devcluster.versions import KUBERNETES_VERSION, cache_root
from olm.progress import QUIET, Progress

HELM_VERSION = "v3.22.0"
HELM_MODULE = "helm.sh/helm/v3"

KUBECTL_OPERATOR_VERSION = "v0.6.0"
KUBECTL_OPERATOR_MODULE = "github.com/operator-framework/kubectl-operator"
# The tag's commit and its time, as the module proxy's .info reports them (Origin.Hash, Time);
# stamped into `kubectl operator version` and checked against the proxy at build time.
KUBECTL_OPERATOR_COMMIT = "ddb2132976fa3e0ca5da63915c29c77b9240da70"
KUBECTL_OPERATOR_COMMIT_TIME = "2025-01-16T14:48:46Z"
KUBECTL_OPERATOR = "kubectl-operator"
WRAPPER_GO = "1.24.6"


def kube_major_minor(kubernetes_version: str = KUBERNETES_VERSION) -> tuple[str, str]:
    """`v1.34.12` -> (`1`, `34`): the Kubernetes version Helm renders and lints against."""
    major, minor = kubernetes_version.lstrip("v").split(".")[:2]
    return major, minor


def helm_ldflags(
    version: str = HELM_VERSION, kubernetes_version: str = KUBERNETES_VERSION
) -> list[str]:
    """The linker flags: strip, plus the version stamps.

    Without the stamps `helm version` says v3 and `.Capabilities.KubeVersion` is v1.20.0 in
    `helm template` and `helm lint`, which is not the cluster's version.
    """
    major, minor = kube_major_minor(kubernetes_version)
    stamps = {
        f"{HELM_MODULE}/internal/version.version": version,
        f"{HELM_MODULE}/pkg/chartutil.k8sVersionMajor": major,
        f"{HELM_MODULE}/pkg/chartutil.k8sVersionMinor": minor,
        f"{HELM_MODULE}/pkg/lint/rules.k8sVersionMajor": major,
        f"{HELM_MODULE}/pkg/lint/rules.k8sVersionMinor": minor,
    }
    return ["-s", "-w", *(f"-X {name}={value}" for name, value in stamps.items())]


def helm_install_args(
    version: str = HELM_VERSION, kubernetes_version: str = KUBERNETES_VERSION
) -> list[str]:
    """The `go` arguments that build Helm (into $GOBIN)."""
    return [
        "install",
        "-trimpath",
        "-ldflags",
        " ".join(helm_ldflags(version, kubernetes_version)),
        f"{HELM_MODULE}/cmd/helm@{version}",
    ]


def helm_inputs(
    version: str = HELM_VERSION, kubernetes_version: str = KUBERNETES_VERSION
) -> dict[str, str]:
    """What the cached binary was built from; any change means a rebuild."""
    return {
        "module": HELM_MODULE,
        "version": version,
        "ldflags": " ".join(helm_ldflags(version, kubernetes_version)),
        "cgo": "0",
    }


def helm_dir(version: str = HELM_VERSION) -> Path:
    return cache_root() / "tools" / f"helm-{version}"


def tool_problems(root: Path, name: str, inputs: dict[str, str]) -> list[str]:
    """Why the tool cache at `root` is not usable; an empty list means it is complete."""
    return manifest_problems(root, (name,), inputs)


def _write_manifest(root: Path, name: str, inputs: dict[str, str]) -> None:
    write_manifest(root, (name,), inputs=inputs)


def ensure_tool(
    name: str,
    version: str,
    root: Path,
    inputs: dict[str, str],
    build: Callable[[GoRun, Path], None],
    progress: Progress,
    goflags: str = "-buildvcs=false",
    retry: str = "retry",
) -> Path:
    """`root/name`, built by `build(go, out_dir)` (which leaves `out_dir/name`) unless the cache
    is complete; the manifest is written last."""
    binary = root / name

    def build_and_seal() -> None:
        go = GoRun(
            find_go(f"{name} {version}", f"then {retry}"),
            root / "build.log",
            progress,
            goflags,
            retry,
        )
        root.mkdir(parents=True, exist_ok=True)
        go.log_path.write_text("")
        with tempfile.TemporaryDirectory(prefix="bin-", dir=root) as out:
            build(go, Path(out))
            built = Path(out) / name
            if not built.is_file():
                raise BuildError(f"go reported success but {built} is missing; see {go.log_path}.")
            built.replace(binary)
        _write_manifest(root, name, inputs)

    ensure_built(
        root,
        f"{name} {version}",
        lambda: tool_problems(root, name, inputs),
        build_and_seal,
        progress,
        rebuild=retry,
    )
    return binary


def ensure_helm(progress: Progress = QUIET) -> Path:
    """The path of the pinned, version-stamped `helm`, building it first if not cached."""
    root = helm_dir()

    def build(go: GoRun, out: Path) -> None:
        go.run(
            helm_install_args(),
            root,
            f"Building helm {HELM_VERSION} from the Go module proxy into {root}",
            " (minutes when cold: about 3 on 2 idle cores, more under load; later runs reuse it)",
            gobin=out,
        )

    return ensure_tool("helm", HELM_VERSION, root, helm_inputs(), build, progress)


# ----- kubectl-operator -----------------------------------------------------------------------


def kubectl_operator_ldflags(
    version: str = KUBECTL_OPERATOR_VERSION,
    commit: str = KUBECTL_OPERATOR_COMMIT,
    commit_time: str = KUBECTL_OPERATOR_COMMIT_TIME,
) -> str:
    """Strip, and stamp what the plugin's own Makefile stamps from git (else `kubectl operator
    version` says `GitVersion:"unknown"`)."""
    stamps = {
        "GitVersion": version,
        "GitCommit": commit,
        "GitCommitTime": commit_time,
        "GitTreeState": "clean",
    }
    package = f"{KUBECTL_OPERATOR_MODULE}/internal/version"
    return " ".join(["-s", "-w", *(f"-X {package}.{k}={v}" for k, v in stamps.items())])


def kubectl_operator_wrapper_go_mod() -> str:
    return f"module local/kubectl-operator-bin\n\ngo {WRAPPER_GO}\n"


def kubectl_operator_go_args(
    out_dir: Path, version: str = KUBECTL_OPERATOR_VERSION
) -> list[list[str]]:
    """The `go` calls in the wrapper module: pin the plugin, check its origin, build it."""
    return [
        ["get", "-tool", f"{KUBECTL_OPERATOR_MODULE}@{version}"],
        ["mod", "download", "-json", f"{KUBECTL_OPERATOR_MODULE}@{version}"],
        [
            "build",
            "-trimpath",
            "-ldflags",
            kubectl_operator_ldflags(version),
            "-o",
            str(out_dir / KUBECTL_OPERATOR),
            KUBECTL_OPERATOR_MODULE,
        ],
    ]


def kubectl_operator_inputs(version: str = KUBECTL_OPERATOR_VERSION) -> dict[str, str]:
    """What the cached binary was built from; any change means a rebuild."""
    return {
        "module": KUBECTL_OPERATOR_MODULE,
        "version": version,
        "ldflags": kubectl_operator_ldflags(version),
        "cgo": "0",
        "wrapper_go": WRAPPER_GO,
    }


def kubectl_operator_dir(version: str = KUBECTL_OPERATOR_VERSION) -> Path:
    return cache_root() / "tools" / f"{KUBECTL_OPERATOR}-{version}"


def origin_problem(downloaded: str, commit: str = KUBECTL_OPERATOR_COMMIT) -> str | None:
    """Why `go mod download -json` output contradicts the pinned commit stamp, if it does."""
    try:
        origin = json.loads(downloaded).get("Origin") or {}
    except (ValueError, AttributeError) as exc:
        return f"`go mod download -json` printed no JSON object ({exc})"
    found = origin.get("Hash") if isinstance(origin, dict) else None
    if found is not None and found != commit:
        return (
            f"the module proxy says {KUBECTL_OPERATOR_MODULE} {KUBECTL_OPERATOR_VERSION} is commit "
            f"{found}, not {commit}: update KUBECTL_OPERATOR_COMMIT (and _COMMIT_TIME) in "
            "olm/devcluster/tools.py together with KUBECTL_OPERATOR_VERSION"
        )
    return None


def ensure_kubectl_operator(progress: Progress = QUIET) -> Path:
    """The path of the pinned, version-stamped `kubectl-operator`, building it first if not
    cached. kubectl runs it as `kubectl operator ...` when its folder is on PATH."""
    root = kubectl_operator_dir()

    def build(go: GoRun, out: Path) -> None:
        work = root / "src"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        (work / "go.mod").write_text(kubectl_operator_wrapper_go_mod())
        get, download, compile_ = kubectl_operator_go_args(out)
        go.run(
            get,
            work,
            f"Resolving {KUBECTL_OPERATOR} {KUBECTL_OPERATOR_VERSION} in a wrapper module",
        )
        problem = origin_problem(
            go.run(download, work, f"Checking the origin of {KUBECTL_OPERATOR}")
        )
        if problem is not None:
            raise BuildError(f"Building {KUBECTL_OPERATOR} stopped: {problem}, then retry.")
        go.run(
            compile_,
            work,
            f"Building {KUBECTL_OPERATOR} {KUBECTL_OPERATOR_VERSION} from the Go module proxy "
            f"into {root}",
            " (minutes when cold; later runs reuse it)",
        )

    inputs = kubectl_operator_inputs()
    return ensure_tool(
        KUBECTL_OPERATOR,
        KUBECTL_OPERATOR_VERSION,
        root,
        inputs,
        build,
        progress,
        goflags="-mod=mod -buildvcs=false",
        retry=f"run `make {KUBECTL_OPERATOR}`",
    )


REFERENCE_OLM = "reference-olm"


def _reference_olm(progress: Progress) -> Path:
    """The reference OLM's folder: its commands (olm, catalog, package-server) and CRDs."""
    return ensure_reference_olm(progress).root


# The pinned tools a user can build with one command (`make tools`, `olm dev tools`), in the
# order they are built: each is reused in seconds once its cache is complete.
TOOLS: dict[str, Callable[[Progress], Path]] = {
    "helm": ensure_helm,
    KUBECTL_OPERATOR: ensure_kubectl_operator,
    REFERENCE_OLM: _reference_olm,
}
# The tools run as commands: their folders go on PATH (kubectl finds `kubectl operator` there).
ON_PATH: tuple[str, ...] = ("helm", KUBECTL_OPERATOR)


def ensure_tools(names: Sequence[str], progress: Progress = QUIET) -> dict[str, Path]:
    """Build or reuse each named tool (all of TOOLS when `names` is empty); each one's path."""
    return {name: TOOLS[name](progress) for name in names or TOOLS}


def path_hint(paths: dict[str, Path]) -> str | None:
    """The shell line that puts the built commands on PATH, if any was built."""
    folders = [str(paths[name].parent) for name in ON_PATH if name in paths]
    return f'export PATH="{":".join(folders)}:$PATH"' if folders else None


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m olm.devcluster.tools NAME...` (`make kubectl-operator`): build or reuse each
    named tool and print its path (`olm dev tools` does the same, all tools by default)."""
    parser = argparse.ArgumentParser(
        prog="python -m olm.devcluster.tools",
        description="Build (or reuse) each named pinned tool and print the path of its command.",
        epilog=(
            "Takes minutes per tool cold (the reference OLM about 7), seconds when cached."
            " Writes <cache root>/tools/<name>-<version>/ ($OLM_PY_CACHE, else ~/.cache/olm-py)"
            " and Go's own caches."
        ),
    )
    parser.add_argument(
        "names", nargs="+", choices=list(TOOLS), metavar="NAME", help=", ".join(TOOLS)
    )
    try:
        names: list[str] = parser.parse_args(argv).names
    except SystemExit as exited:  # --help (0) or a usage error (2): a status, as before argparse
        return exited.code if isinstance(exited.code, int) else 2
    try:
        for name in names:
            print(TOOLS[name](Progress()))
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
