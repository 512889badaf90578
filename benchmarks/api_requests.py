"""API economy: the requests each side makes, counted from the local API server's audit log.

The kube-apiserver is started with an audit policy that records every request at the
`Metadata` level (no bodies) once it completes; each entry names the caller's user agent.
olm-py's requests carry `olm-py/<version>` (its API client) and `kopf/<version>` (its
watches); the real OLM's carry its binaries' names (`olm`, `catalog`, `package-server`).
`summarize` counts the entries between two moments by agent, verb and resource, so a story's
requests are the difference the story made. Nothing here starts a cluster by itself.

Invariants: reading the log never changes it; entries outside [since, until) do not count;
an agent's version is not part of its name (`olm-py/0.1 (linux)` counts as `olm-py`).
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
"""
# The agents of each side (the first word of a user agent, before its "/").
SIDES = {
    "olm-py": ("olm-py", "kopf"),
    "reference": ("olm", "catalog", "package-server"),
}


def now() -> datetime:
    return datetime.now(UTC)


def audit_args(log: Path) -> list[str]:
    """kube-apiserver flags that write the audit log to `log` (its policy beside it)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    policy = log.parent / "policy.yaml"
    policy.write_text(POLICY)
    return [
        f"--audit-policy-file={policy}",
        f"--audit-log-path={log}",
        "--audit-log-format=json",
        "--audit-log-maxsize=0",
    ]


def agent(user_agent: str) -> str:
    """`olm-py/0.1.0 (linux/amd64) ...` -> `olm-py`."""
    return user_agent.split("/", 1)[0].split(" ", 1)[0] or "?"


def _when(entry: dict[str, Any]) -> datetime | None:
    stamp = entry.get("requestReceivedTimestamp")
    if not stamp:
        return None
    return datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))


def _resource(entry: dict[str, Any]) -> str:
    ref = entry.get("objectRef") or {}
    resource = str(ref.get("resource") or entry.get("requestURI", "?").split("?")[0])
    sub = ref.get("subresource")
    return f"{resource}/{sub}" if sub else resource


def count(lines: list[str], since: datetime, until: datetime) -> Counter[tuple[str, str, str]]:
    """Completed requests in [since, until) by (agent, verb, resource)."""
    counted: Counter[tuple[str, str, str]] = Counter()
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a line the server was writing as we read
        if entry.get("stage") not in ("ResponseComplete", "Panic"):
            continue
        when = _when(entry)
        if when is None or not since <= when < until:
            continue
        counted[
            (agent(str(entry.get("userAgent") or "")), str(entry.get("verb")), _resource(entry))
        ] += 1
    return counted


def by_side(counted: Counter[tuple[str, str, str]]) -> dict[str, int]:
    """Requests per side (agents not of a side, e.g. kubectl or the control plane, left out)."""
    totals = dict.fromkeys(SIDES, 0)
    for (name, _, _), n in counted.items():
        for side, agents in SIDES.items():
            if name in agents:
                totals[side] += n
    return totals


def summarize(log: Path, since: datetime, until: datetime) -> dict[str, Any]:
    """The requests between `since` and `until`: per side, and per agent/verb/resource."""
    lines = log.read_text().splitlines() if log.exists() else []
    counted = count(lines, since, until)
    return {
        "seconds": round((until - since).total_seconds(), 1),
        "by_side": by_side(counted),
        "by_request": {
            f"{name} {verb} {resource}": n
            for (name, verb, resource), n in sorted(counted.items(), key=lambda kv: -kv[1])
        },
    }
