"""The soak's observer: `benchmarks.watching.Observer` that survives anything a watch stream
throws (a fault may cut a `kubectl get -w` mid-line) and counts its restarts and failures, so
the report says how complete the recorded history is; `diagnose` for a namespace with a
violation."""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import Any

from benchmarks.fault_stories import namespace_report
from benchmarks.watching import Kube, KubectlError, Observer


class SoakObserver(Observer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.failures: list[tuple[float, str, str]] = []  # (monotonic, kind, error)
        self.restarts: Counter[str] = Counter()

    def _follow(self, kind: str) -> None:
        while not self._closed.is_set():
            try:
                super()._follow(kind)
            except Exception as exc:  # a watch must never stop for good
                self.failures.append((time.monotonic(), kind, repr(exc)[:300]))
                time.sleep(1.0)
            self.restarts[kind] += 1


def diagnose(kube: Kube, observer: Observer, namespace: str, origin: float) -> dict[str, Any]:
    """For a namespace with a violation: what the cluster holds now (kubectl, not the watch)
    and the last states the watches recorded, one line each."""
    lines = []
    for seen in observer.history(namespace)[-60:]:
        status = seen.obj.get("status") or {}
        state = status.get("phase") or status.get("state") or ""
        lines.append(f"{seen.at - origin:.1f} {seen.kind} {seen.type} {seen.name} {state}")
    pods = []
    with contextlib.suppress(KubectlError, ValueError):
        for pod in kube.get_json("pods", "-n", namespace)["items"]:
            conditions = {
                c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or []
            }
            pods.append(
                f"{pod['metadata']['name']} {pod.get('status', {}).get('phase')} "
                f"Ready={conditions.get('Ready')} node={pod['spec'].get('nodeName')}"
            )
    return {"cluster_now": namespace_report(kube, namespace), "pods": pods, "recorded": lines}
