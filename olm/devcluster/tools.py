"""Developer tools built from the Go module proxy into a cache of their own: Helm.

Invariants:
- Helm lives in `<cache root>/tools/helm-<version>/`, apart from the control-plane cache, so
  pinning or rebuilding Helm never touches the (long) Kubernetes build.
- The tool is complete only when `manifest.json` exists, records the exact build inputs (the
  version and the `-X` stamps) and the binary has the recorded size and SHA-256. The manifest
  is written last, so an interrupted build is never mistaken for a complete one.
- A complete cache is reused without invoking Go at all.
- Every failure raises `BuildError` naming what failed and what to do next.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import tempfile
from pathlib import Path

from olm.devcluster.build import BuildError, find_go
from olm.devcluster.progress import QUIET, Progress
from olm.devcluster.versions import KUBERNETES_VERSION, cache_root

HELM_VERSION = "v3.22.0"
HELM_MODULE = "helm.sh/helm/v3"
MANIFEST = "manifest.json"


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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def tool_problems(root: Path, name: str, inputs: dict[str, str]) -> list[str]:
    """Why the tool cache at `root` is not usable; an empty list means it is complete."""
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        return [f"{manifest_path} is missing (the build was never completed)"]
    try:
        manifest = json.loads(manifest_path.read_text())
        record = manifest["files"][name]
        recorded_inputs = manifest["inputs"]
        if not isinstance(record, dict) or not isinstance(recorded_inputs, dict):
            raise TypeError("files or inputs is not a mapping")
    except (ValueError, KeyError, TypeError) as exc:
        return [f"{manifest_path} is unreadable ({exc})"]
    if recorded_inputs != inputs:
        return [f"{root / name} was built from other inputs ({recorded_inputs}, want {inputs})"]
    path = root / name
    if not path.is_file():
        return [f"{path} is missing"]
    if path.stat().st_size != record.get("size"):
        return [f"{path} has the wrong size (corrupt or truncated)"]
    if _sha256(path) != record.get("sha256"):
        return [f"{path} has the wrong checksum (corrupt)"]
    return []


def _write_manifest(root: Path, name: str, inputs: dict[str, str]) -> None:
    path = root / name
    manifest = {
        "inputs": inputs,
        "files": {name: {"size": path.stat().st_size, "sha256": _sha256(path)}},
    }
    temporary = root / (MANIFEST + ".tmp")
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True))
    temporary.replace(root / MANIFEST)


def _find_go() -> str:
    return find_go("Helm")


def ensure_helm(progress: Progress = QUIET) -> Path:
    """The path of the pinned, version-stamped `helm`, building it first if not cached."""
    root = helm_dir()
    binary = root / "helm"
    inputs = helm_inputs()
    problems = tool_problems(root, "helm", inputs)
    if not problems:
        progress.say(f"Using cached helm {HELM_VERSION} at {binary}")
        return binary
    if (root / MANIFEST).exists():
        progress.say("The helm cache is incomplete or stale, rebuilding: " + "; ".join(problems))
        (root / MANIFEST).unlink()
    go = _find_go()
    root.mkdir(parents=True, exist_ok=True)
    log_path = root / "build.log"
    # The checksum database does not answer for every module the proxy serves here; the
    # version is pinned and the proxy is the trust anchor (as in build.py).
    env = dict(
        os.environ,
        CGO_ENABLED="0",
        GOTOOLCHAIN="local",
        GOSUMDB=os.environ.get("OLM_PY_GOSUMDB", "off"),
        GOFLAGS="-buildvcs=false",
    )
    args = helm_install_args()
    with tempfile.TemporaryDirectory(prefix="gobin-", dir=root) as gobin:
        env["GOBIN"] = gobin
        what = (
            f"Building helm {HELM_VERSION} from the Go module proxy into {root} "
            "(minutes when cold: about 3 on 2 idle cores, more under load; later runs reuse it)"
        )
        with log_path.open("w") as log, progress.heartbeat(what):
            log.write(f"$ go {' '.join(args)}\n")
            log.flush()
            result = subprocess.run(
                [go, *args], cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT
            )
        if result.returncode != 0:
            tail = log_path.read_text(errors="replace").splitlines()[-15:]
            raise BuildError(
                f"Building helm {HELM_VERSION} failed (go exit {result.returncode}). Check "
                "access to the Go module proxy (GOPROXY) or the compiler errors in the log "
                f"{log_path}. Last lines:\n  " + "\n  ".join(tail) + "\nFix the cause and retry."
            )
        built = Path(gobin) / "helm"
        if not built.is_file():
            raise BuildError(f"go install reported success but {built} is missing; see {log_path}.")
        built.replace(binary)
    _write_manifest(root, "helm", inputs)
    remaining = tool_problems(root, "helm", inputs)
    if remaining:
        raise BuildError(
            "The helm build finished but its cache is unusable: " + "; ".join(remaining)
        )
    progress.say(f"helm {HELM_VERSION} is ready at {binary}")
    return binary
