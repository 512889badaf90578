"""The Helm that `ensure_helm()` builds is the pinned version and renders for the local
cluster's Kubernetes version (the `-X` stamps), not Helm's default v1.20.0."""

from __future__ import annotations

import subprocess
from pathlib import Path

from olm.devcluster.tools import HELM_VERSION, ensure_helm, kube_major_minor
from olm.progress import Progress


def helm(binary: Path, home: Path, *args: str) -> str:
    env = {
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [str(binary), *args], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, f"helm {' '.join(args)}:\n{result.stdout}{result.stderr}"
    return result.stdout


def test_helm_is_pinned_and_stamped_with_the_cluster_version(tmp_path: Path) -> None:
    binary = ensure_helm(Progress())
    assert binary.is_file()
    assert helm(binary, tmp_path, "version", "--template", "{{.Version}}") == HELM_VERSION

    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: probe\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\n"
        'data:\n  kube: "{{ .Capabilities.KubeVersion.Version }}"\n'
    )
    major, minor = kube_major_minor()
    assert f'kube: "v{major}.{minor}.0"' in helm(binary, tmp_path, "template", str(chart))
    assert ensure_helm() == binary  # reused, not rebuilt
