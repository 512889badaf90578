"""Completeness: the jobs olm/api's helpers (and olm/waiting.py's) do are done there and
nowhere else in olm/.

Each check lists the modules that may still do the job by hand. Some of them are waiting to be
switched (issue 27: files other work was changing at the time); the lists may only shrink.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

OLM = Path(__file__).resolve().parents[3] / "olm"

CHECKS = {
    # metav1.Time written or read by hand (olm.api.conditions.timestamp / parse_timestamp).
    "time format": (r"%Y-%m-%dT%H:%M:%SZ", {"api/conditions.py"}),
    # Other RFC 3339 times read by hand (olm.api.conditions.parse_time); operator/status.py
    # reads them as OLM writes them back (no `Z` rewrite: "2026-01-02Z" is not a time there).
    "lenient time parse": (r"fromisoformat\(", {"api/conditions.py", "operator/status.py"}),
    # The controllers' clock (olm.api.conditions.utc_now).
    "utc clock": (r"datetime\.now\((datetime\.)?UTC\)", {"api/conditions.py"}),
    # A condition list written by hand (olm.api.conditions.set_condition); subscription/status.py
    # and installplan/status.py only bind their API type's style.
    "set condition": (
        r"def _?set_condition\(",
        {"api/conditions.py", "subscription/status.py", "installplan/status.py"},
    ),
    # Reading metadata by hand in a helper of its own (olm.api.body).
    "metadata accessor": (
        r"return \w+\.get\(\"metadata\"\) or \{\}",
        {"api/body.py"},
    ),
    # Metadata read by hand (olm.api.body).
    "metadata read": (r'\.get\("metadata"\) or \{\}', {"api/body.py"}),
    # A condition looked up by hand (olm.api.conditions.find_condition).
    "condition lookup": (
        r'next\(\s*\(\w+ for \w+ in [^)]* if \w+\.get\("type"\) ==',
        {"api/conditions.py"},
    ),
    # Go's base62 digits by hand (olm.api.gohash.base62).
    "base62": (r"divmod\(\w+, 62\)", {"api/gohash.py"}),
    # A wait loop timed by hand (olm.waiting.attempts). The queue's `get` waits on a condition
    # variable, not by polling; the dev cluster's starts keep one deadline across several waits.
    "wait deadline": (
        r"deadline = .*(monotonic|clock)\(\) \+",
        {
            "waiting.py",
            "controllers/queue.py",
            "devcluster/cluster.py",
            "devcluster/reference_cluster.py",
        },
    ),
    # An exponential backoff formula (olm.api.backoff.exponential_backoff).
    "backoff formula": (
        r"\*\s*\(?2(\.0)?\s*\*\*\s*\(?[a-z_]",
        {
            "api/backoff.py",
        },
    ),
}


@pytest.mark.parametrize("job", sorted(CHECKS))
def test_only_the_helper_does_the_job(job: str) -> None:
    pattern, allowed = CHECKS[job]
    found = {
        str(path.relative_to(OLM))
        for path in OLM.rglob("*.py")
        if re.search(pattern, path.read_text(encoding="utf-8"))
    }
    assert found <= allowed, f"{job}: use the olm.api helper in {sorted(found - allowed)}"
