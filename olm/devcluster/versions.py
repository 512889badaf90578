"""Pinned versions of the control-plane binaries and where their cache lives.

Invariant: a cache directory is named after the exact version tuple, so changing any pin
builds into a new directory and never mixes binaries of two version sets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

KUBERNETES_VERSION = "v1.34.12"
# Kubernetes publishes its staging modules as k8s.io/<name> v0.<minor>.<patch>.
KUBERNETES_STAGING_VERSION = "v0.34.12"
ETCD_VERSION = "v3.6.16"
KWOK_VERSION = "v0.8.0"
# operator-registry's opm, for parity tests of olm-py's catalog tooling (cgo: sqlite).
OPM_VERSION = "v1.61.0"

# Every directory under staging/src/k8s.io of the Kubernetes tag. k8s.io/kubernetes's go.mod
# requires them at the fake version v0.0.0 with local replaces, which a dependent module
# ignores; so the wrapper module replaces each with its published tag. A missing entry fails
# with "unknown revision v0.0.0"; an unused one is harmless.
KUBERNETES_STAGING_MODULES: tuple[str, ...] = (
    "api",
    "apiextensions-apiserver",
    "apimachinery",
    "apiserver",
    "cli-runtime",
    "client-go",
    "cloud-provider",
    "cluster-bootstrap",
    "code-generator",
    "component-base",
    "component-helpers",
    "controller-manager",
    "cri-api",
    "cri-client",
    "csi-translation-lib",
    "dynamic-resource-allocation",
    "endpointslice",
    "externaljwt",
    "kms",
    "kube-aggregator",
    "kube-controller-manager",
    "kube-proxy",
    "kube-scheduler",
    "kubectl",
    "kubelet",
    "metrics",
    "mount-utils",
    "pod-security-admission",
    "sample-apiserver",
    "sample-cli-plugin",
    "sample-controller",
)

KUBERNETES_COMMANDS: tuple[str, ...] = (
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kubectl",
)

# kwok v0.8.0 has no built-in stages; these are the ones kwokctl injects, read from the kwok
# module in the Go module cache at build time (never copied into the repo).
KWOK_STAGE_FILES: tuple[str, ...] = (
    "kustomize/stage/node/fast/node-initialize.yaml",
    "kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "kustomize/stage/pod/fast/pod-ready.yaml",
    "kustomize/stage/pod/fast/pod-complete.yaml",
    "kustomize/stage/pod/fast/pod-delete.yaml",
)


@dataclass(frozen=True)
class VersionSet:
    """One pinned set of control-plane versions."""

    kubernetes: str = KUBERNETES_VERSION
    kubernetes_staging: str = KUBERNETES_STAGING_VERSION
    etcd: str = ETCD_VERSION
    kwok: str = KWOK_VERSION
    opm: str = OPM_VERSION

    @property
    def tag(self) -> str:
        return f"k8s-{self.kubernetes}_etcd-{self.etcd}_kwok-{self.kwok}_opm-{self.opm}"


PINNED = VersionSet()


def cache_root() -> Path:
    """The cache for built binaries: $OLM_PY_CACHE, else $XDG_CACHE_HOME/olm-py, else ~/.cache."""
    explicit = os.environ.get("OLM_PY_CACHE")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "olm-py"


def cache_dir(versions: VersionSet = PINNED) -> Path:
    return cache_root() / versions.tag
