"""`olm explain`'s output: text for people, JSON (`-o json`) for tools.

Text: a healthy object is one line (`healthy: ...`). Otherwise one line per link, the first
being the object asked about and each next one prefixed `->`, as `Kind name [state]: what it
says` (the namespace is shown when it differs from the one asked about); then `cause:`, then one
`fix:` line per fix (`what: command`), then `note:` lines.

JSON: {"kind", "name", "namespace", "verdict", "healthy", "chain": [{"kind", "name",
"namespace", "state", "says"}], "cause", "fixes": [{"what", "command"}], "notes"} (docs/explain.md).

Invariant: pure; the JSON keys above are a contract with tools: add, never rename.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from olm.explain.model import Explanation, Link, Verdict

ARROW = "->"


def _link(link: Link, namespace: str) -> str:
    where = (
        f" (namespace {link.namespace})" if link.namespace and link.namespace != namespace else ""
    )
    says = f": {link.says}" if link.says else ""
    return f"{link.kind} {link.name}{where} [{link.state}]{says}"


def lines(explanation: Explanation, namespace: str) -> list[str]:
    if explanation.verdict is Verdict.HEALTHY:
        return [f"healthy: {explanation.cause}", *(f"note: {n}" for n in explanation.notes)]
    out = []
    for index, link in enumerate(explanation.links):
        out.append(("" if index == 0 else f"{ARROW} ") + _link(link, namespace))
    label = "cause" if explanation.verdict is Verdict.PROBLEM else "in progress"
    out.append(f"{label}: {explanation.cause}")
    for fix in explanation.fixes:
        out.append(f"fix: {fix.what}" + (f": {fix.command}" if fix.command else ""))
    out.extend(f"note: {n}" for n in explanation.notes)
    return out


def as_json(explanation: Explanation) -> dict[str, Any]:
    first = explanation.links[0]
    return {
        "kind": first.kind,
        "name": first.name,
        "namespace": first.namespace,
        "verdict": explanation.verdict.value,
        "healthy": explanation.healthy,
        "chain": [dataclasses.asdict(link) for link in explanation.links],
        "cause": explanation.cause,
        "fixes": [dataclasses.asdict(fix) for fix in explanation.fixes],
        "notes": list(explanation.notes),
    }


def text_json(explanation: Explanation) -> str:
    return json.dumps(as_json(explanation), indent=2)
