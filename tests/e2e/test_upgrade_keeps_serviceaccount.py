"""An upgrade never loses the operator's ServiceAccount (issue 16).

The story, repeated N times, each time in a fresh namespace: an admin subscribes to
memcached-operator from the samples catalog (`olm/samples`), Automatic approval, starting at
0.0.1. OLM installs 0.0.1, then upgrades it to 0.0.2 along `replaces`, and deletes 0.0.1.
Every run must end with the operator's ServiceAccount still there, 0.0.2 Succeeded, and the
account's ownerReferences naming the live 0.0.2 CSV (so the garbage collector keeps it).

The bug this guards against appeared in 2 of 33 runs: a late re-run of 0.0.1's
InstallPlan left 0.0.1 as the account's only owner, and the garbage collector deleted the
account with 0.0.1. N is 50 with `OLM_PY_LONG=1` (the issue's acceptance run, several
minutes) and 5 otherwise, so `make test` stays fast.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

from tests.support.cluster import (
    SESSION_ID,
    SESSION_LABEL,
    STEP_TIMEOUT,
    ControlPlane,
    namespace_report,
    wait_for,
)
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import NEW, OLD, subscribe

RUNS = 50 if os.environ.get("OLM_PY_LONG") == "1" else 5
ACCOUNT = "memcached-operator"


def account_owners(plane: ControlPlane, namespace: str) -> list[dict[str, Any]] | None:
    """The ServiceAccount's ownerReferences, or None when the account does not exist."""
    found = plane.kubectl(
        "get", "serviceaccount", ACCOUNT, "-n", namespace, "-o", "json", check=False
    )
    if found.returncode != 0:
        return None
    owners: list[dict[str, Any]] = json.loads(found.stdout)["metadata"].get("ownerReferences") or []
    return owners


def upgrade_story(plane: ControlPlane, namespace: str) -> str | None:
    """One subscription upgrade; None when it ended as it should, else what went wrong."""
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", startingCSV=OLD)
    try:
        wait_for(
            lambda: (
                phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded"
                and phase(plane, namespace, OLD) == "absent"
            ),
            timeout=STEP_TIMEOUT,
            what=f"{NEW} Succeeded and {OLD} gone",
        )
    except AssertionError as exc:
        return f"{exc}\nServiceAccount owners: {account_owners(plane, namespace)}"
    live_uid = plane.get_json("csv", NEW, "-n", namespace)["metadata"]["uid"]

    def owned_by_live_csv() -> bool:
        owners = account_owners(plane, namespace)
        csvs = [o for o in owners or [] if o.get("kind") == "ClusterServiceVersion"]
        # The garbage collector drops the reference to the deleted 0.0.1 in its own time.
        return owners is not None and [o["uid"] for o in csvs] == [live_uid]

    try:
        wait_for(owned_by_live_csv, timeout=60, what="the account owned by the live CSV only")
    except AssertionError:
        return (
            f"ServiceAccount owners {account_owners(plane, namespace)} do not name only the live "
            f"CSV {NEW} ({live_uid})"
        )
    if phase(plane, namespace, NEW) != "Succeeded/InstallSucceeded":
        return f"{NEW} left Succeeded: {phase(plane, namespace, NEW)}"
    return None


def test_consecutive_subscription_upgrades_keep_the_service_account(
    control_plane: ControlPlane, olm_operator: OlmOperator
) -> None:
    plane = control_plane
    failures: list[str] = []
    for run in range(RUNS):
        namespace = f"t-sa-{uuid.uuid4().hex[:6]}-{run}"
        plane.kubectl("create", "namespace", namespace)
        plane.kubectl("label", "namespace", namespace, f"{SESSION_LABEL}={SESSION_ID}")
        try:
            problem = upgrade_story(plane, namespace)
            if problem is not None:
                failures.append(
                    f"run {run + 1} ({namespace}): {problem}\n{namespace_report(plane, namespace)}"
                )
        finally:
            plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
    assert not failures, (
        f"{len(failures)} of {RUNS} upgrades lost their ServiceAccount:\n" + "\n\n".join(failures)
    )
