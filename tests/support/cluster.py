"""The test cluster as tests use it: `ControlPlane` (kubectl on the session's cluster), a
fresh labelled namespace, and `wait_for`, the state-based wait every cluster step uses.

Invariants: a wait polls a state and is bounded (`STEP_TIMEOUT` for one cluster step); only
a failing wait lasts that long. Namespaces a session creates carry `SESSION_LABEL` with this
process's `SESSION_ID`.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.devcluster.build import Binaries
from olm.devcluster.cluster import DevCluster, default_state_dir

SESSION_LABEL = "olm-py.test/session"
SESSION_ID = uuid.uuid4().hex[:8]
# The bound of a state-based wait for one cluster step (a Deployment rollout, a CSV phase, an
# InstallPlan, a catalog READY, a namespace deletion): a step of seconds may take minutes on a
# loaded 2-core machine running the whole suite. Only a failing wait ever lasts this long.
STEP_TIMEOUT = 240.0


@dataclass
class ControlPlane:
    """What tests need of the running cluster."""

    cluster: DevCluster
    binaries: Binaries | None

    @property
    def kubeconfig(self) -> Path:
        return self.cluster.kubeconfig_path

    @property
    def bin_dir(self) -> Path:
        bin_dir = self.cluster.bin_dir
        assert bin_dir is not None
        return bin_dir

    def env(self) -> dict[str, str]:
        return {**os.environ, **self.cluster.env()}

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.bin_dir / "kubectl"), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env(),
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
            )
        return result

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)


def session_state_root() -> Path:
    """Where test sessions keep the state directories of the clusters they start."""
    return default_state_dir().parent / "pytest"


def fresh_namespace(plane: ControlPlane) -> Iterator[str]:
    """A new namespace of this session (for a fixture to yield from), deleted in the background."""
    name = f"t-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", name)
    plane.kubectl("label", "namespace", name, f"{SESSION_LABEL}={SESSION_ID}")
    yield name
    plane.kubectl("delete", "namespace", name, "--wait=false", check=False)


def wait_for(
    check: Any, timeout: float = 60, interval: float = 0.5, what: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def namespace_report(plane: ControlPlane, namespace: str) -> str:
    """What a person would look at when a story stalls: Subscriptions, InstallPlans, CSVs."""
    lines = []
    for kind in (
        "subscription.operators.coreos.com",
        "installplan.operators.coreos.com",
        "csv",
        "catsrc",
    ):
        for item in plane.get_json(kind, "-n", namespace)["items"]:
            status = item.get("status") or {}
            summary = {
                k: status.get(k)
                for k in (
                    "phase",
                    "reason",
                    "message",
                    "state",
                    "currentCSV",
                    "installedCSV",
                    "conditions",
                    "connectionState",
                )
                if status.get(k)
            }
            lines.append(f"{kind} {item['metadata']['name']}: {json.dumps(summary)[:600]}")
    return "\n".join(lines)
