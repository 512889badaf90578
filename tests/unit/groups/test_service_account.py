"""OperatorGroup spec.serviceAccountName (scoped installs): status.serviceAccountRef follows
the ServiceAccount, and OperatorGroupServiceAccount says when it is missing."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from olm.groups.decide import decide
from tests.unit.groups.world import STAMP, group, snapshot

SA = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "metadata": {"name": "installer", "namespace": "own", "uid": "u-1"},
}
REF = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "namespace": "own",
    "name": "installer",
    "uid": "u-1",
}
SYNCED = {"namespaces": ["own"], "lastUpdated": STAMP}


@pytest.mark.parametrize(
    ("spec", "status", "account", "ref", "condition"),
    [
        # named and present: the ref is written, no condition
        ({"serviceAccountName": "installer"}, SYNCED, SA, REF, None),
        # named, missing: the condition, no ref
        ({"serviceAccountName": "installer"}, SYNCED, None, None, "ServiceAccountNotFound"),
        # named, gone after it was synced: the ref is cleared
        (
            {"serviceAccountName": "installer"},
            {**SYNCED, "serviceAccountRef": REF},
            None,
            None,
            "ServiceAccountNotFound",
        ),
        # no longer named: the ref is cleared
        ({}, {**SYNCED, "serviceAccountRef": REF}, None, None, None),
    ],
)
def test_service_account_ref_and_condition(
    spec: dict[str, Any],
    status: dict[str, Any],
    account: dict[str, Any] | None,
    ref: dict[str, Any] | None,
    condition: str | None,
) -> None:
    snap = replace(snapshot(group(spec, status)), service_account=account)
    plan = decide(snap)
    assert plan.status is not None
    if ref is not None or status.get("serviceAccountRef"):
        assert plan.status["serviceAccountRef"] == ref
    conditions = plan.status.get("conditions") or []
    found = [c for c in conditions if c["type"] == "OperatorGroupServiceAccount"]
    if condition:
        assert [c["reason"] for c in found] == [condition]
        assert found[0]["message"].startswith("ServiceAccount installer not found")
        assert "kubectl create serviceaccount installer -n own" in found[0]["message"]
    else:
        assert not found
    # Written back, nothing more to do.
    after = group(spec, {k: v for k, v in {**status, **plan.status}.items() if v is not None})
    again = decide(replace(snapshot(after), service_account=account))
    assert again.status is None
