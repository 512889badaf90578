"""The kubectl-operator plugin that `ensure_kubectl_operator()` builds is the pinned v0.6.0,
stamped with its tag (not `unknown`), and reused from the cache once built."""

from __future__ import annotations

import subprocess
from pathlib import Path

from olm.devcluster.tools import (
    KUBECTL_OPERATOR_COMMIT,
    KUBECTL_OPERATOR_VERSION,
    ensure_kubectl_operator,
)
from olm.progress import Progress

# Every command, `version` too, loads a kubeconfig first; `version` never dials the server.
KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def test_kubectl_operator_is_pinned_and_stamped_with_its_tag(tmp_path: Path) -> None:
    binary = ensure_kubectl_operator(Progress())
    assert binary.is_file() and binary.name == "kubectl-operator"
    (tmp_path / "kubeconfig").write_text(KUBECONFIG)
    result = subprocess.run(
        [str(binary), "version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "KUBECONFIG": str(tmp_path / "kubeconfig")},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f'GitVersion:"{KUBECTL_OPERATOR_VERSION}"' in result.stdout
    assert f'GitCommit:"{KUBECTL_OPERATOR_COMMIT}"' in result.stdout
    assert ensure_kubectl_operator() == binary  # reused, not rebuilt
