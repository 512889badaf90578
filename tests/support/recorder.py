"""`Recorder`: a background `kubectl get -w` that keeps every state a user could have seen,
for stories that assert the sequence of phases, not only the last one."""

from __future__ import annotations

import json
import subprocess
import threading
from typing import Any

from tests.support.cluster import ControlPlane, wait_for


class Recorder:
    """`kubectl get <kind> -w -o json` in the background: every state a user could see."""

    def __init__(self, plane: ControlPlane, namespace: str, resource: str = "csv") -> None:
        self.process = subprocess.Popen(
            [
                str(plane.bin_dir / "kubectl"),
                "get",
                resource,
                "-n",
                namespace,
                "-w",
                "-o",
                "json",
                "--output-watch-events",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=plane.env(),
            text=True,
        )
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        decoder = json.JSONDecoder()
        buffer = ""
        assert self.process.stdout is not None
        for line in self.process.stdout:
            buffer += line
            while buffer.strip():
                try:
                    event, end = decoder.raw_decode(buffer.lstrip())
                except ValueError:
                    break
                buffer = buffer.lstrip()[end:]
                self.events.append((event["type"], event["object"]))

    def phases(self, name: str) -> list[str]:
        """'Phase/Reason' for each distinct state of `name`, in order, then 'DELETED'."""
        seen: list[str] = []
        for event_type, obj in list(self.events):
            if obj["metadata"]["name"] != name:
                continue
            status = obj.get("status") or {}
            state = (
                "DELETED"
                if event_type == "DELETED"
                else f"{status.get('phase', '')}/{status.get('reason', '')}"
            )
            if state != "/" and (not seen or seen[-1] != state):
                seen.append(state)
        return seen

    def wait_until_watching(self, name: str, timeout: float = 30) -> None:
        """Block until the watch has delivered `name` once, so later changes are all seen."""
        wait_for(
            lambda: any(obj["metadata"]["name"] == name for _, obj in list(self.events)),
            timeout=timeout,
            what=f"the watch to list {name}",
        )

    def close(self) -> None:
        self.process.terminate()
        self.process.wait()
