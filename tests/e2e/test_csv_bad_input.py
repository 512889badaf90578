"""Bad input gets OLM's phase and reason, a message that names the problem and the fix, and
an Event, while other CSVs carry on. Every case lives in its own namespace; all are applied
together, so they also show that one broken CSV does not hold up the others.

Explained is not enough: the module ends by checking that every case then stays put (no
CSV or Deployment written again for longer than olm-py's install retry), and that `olm run`
logged no Python traceback while the module ran.
"""

from __future__ import annotations

import copy
import json
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import (
    apply,
    minimal_csv,
    operator_group,
    phase,
    wait_phase,
    warning_events,
    with_deployment_spec,
)

ANNOTATION_LIMIT = 262144
# Longer than olm-py's retry of a failed install (30 s): a retry that wrote would show.
QUIET_SECONDS = 32
CYCLE = "spec.replaces forms a cycle"


def apply_together(plane: ControlPlane, namespace: str, objs: list[dict[str, Any]]) -> None:
    """One `kubectl create` of a List: the objects are created in order, back to back."""
    listing = {"apiVersion": "v1", "kind": "List", "items": objs}
    plane.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(listing))


@dataclass
class Case:
    name: str
    csv: dict[str, Any]
    phase: str
    message_has: list[str]
    groups: list[list[str] | None] = field(default_factory=lambda: [None])
    warning: str | None = None
    # More CSVs applied in the same namespace (before `csv`), and what becomes of them:
    # "Phase/Reason" and message fragments, or "absent" once OLM deleted it.
    others: list[dict[str, Any]] = field(default_factory=list)
    others_end: dict[str, tuple[str, list[str]]] = field(default_factory=dict)
    # `others` and `csv` in one `kubectl create` of a List, in that order: they exist within
    # milliseconds of each other. Otherwise each is its own kubectl call, and olm-py may act
    # on the first before the next one exists.
    together: bool = False


def sharing_deployment(csv: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    """`csv` installing exactly the Deployments of `owner` (same names, same selector)."""
    csv = copy.deepcopy(csv)
    csv["spec"]["install"] = copy.deepcopy(owner["spec"]["install"])
    return csv


BASE = minimal_csv("base")
# Three CSVs whose spec.replaces form a ring: ring-a -> ring-b -> ring-c -> ring-a.
RING = {
    "ring-a": minimal_csv("ring-a", replaces="ring-b"),
    "ring-b": minimal_csv("ring-b", replaces="ring-c"),
    "ring-c": minimal_csv("ring-c", replaces="ring-a"),
}


def big_annotations() -> dict[str, str]:
    # Just below the API server's limit, leaving less room than olm-py's own annotations need.
    return {"example.com/payload": "x" * (ANNOTATION_LIMIT - 40)}


CASES = [
    Case(
        "unknown-strategy",
        minimal_csv("bad-strategy", install={"strategy": "helm", "spec": {}}),
        "Failed/InvalidInstallStrategy",
        ["spec.install.strategy", "'helm'", "deployment"],
    ),
    Case(
        "deployment-spec-type",
        with_deployment_spec(minimal_csv("bad-replicas"), replicas="two"),
        "Failed/InvalidInstallStrategy",
        ["deployments[0].spec.replicas", "non-negative integer"],
    ),
    Case(
        "deployment-spec-semantics",
        with_deployment_spec(
            minimal_csv("bad-selector"), selector={"matchLabels": {"app": "other"}}
        ),
        "Failed/InstallComponentFailed",
        ["install strategy failed", "selector"],
    ),
    Case(
        "replaces-itself",
        minimal_csv("self-replacing", replaces="self-replacing"),
        "Succeeded/InstallSucceeded",
        [],
        warning="spec.replaces names this CSV itself",
    ),
    Case(
        "misplaced-skiprange",
        minimal_csv("misplaced", skipRange="<1.0.0"),
        "Succeeded/InstallSucceeded",
        [],
        warning="olm.skipRange",
    ),
    Case(
        "no-operator-group",
        minimal_csv("lonely"),
        "Failed/NoOperatorGroup",
        ["no operatorgroups"],
        groups=[],
    ),
    Case(
        "two-operator-groups",
        minimal_csv("crowded"),
        "Failed/TooManyOperatorGroups",
        ["multiple operatorgroups", "og-0", "og-1", "delete all but one"],
        groups=[None, None],
    ),
    Case(
        "unsupported-install-mode",
        minimal_csv("own-only"),
        "Failed/UnsupportedOperatorGroup",
        ["AllNamespaces InstallModeType not supported"],
        groups=[[]],
    ),
    Case(
        "annotations-near-limit",
        {**minimal_csv("heavy"), "metadata": {"name": "heavy", "annotations": big_annotations()}},
        "Failed/InstallComponentFailed",
        ["metadata.annotations", "Make metadata.annotations smaller"],
    ),
    Case(
        "no-install-spec",
        minimal_csv("no-install-spec", install={"strategy": "deployment"}),
        "Failed/InvalidInstallStrategy",
        ["spec.install.spec is missing", "spec.install.spec.deployments"],
    ),
    Case(
        "no-deployments-on-purpose",
        minimal_csv(
            "installs-nothing", install={"strategy": "deployment", "spec": {"deployments": []}}
        ),
        "Succeeded/InstallSucceeded",
        [],
    ),
    Case(
        "version-not-semver",
        minimal_csv("bad-version", version="not-a-semver"),
        "Pending/RequirementsNotMet",
        ["spec.version 'not-a-semver'", "MAJOR.MINOR.PATCH"],
    ),
    Case(
        "container-port-out-of-range",
        with_deployment_spec(
            minimal_csv("port-70000"),
            template={
                "metadata": {"labels": {"app": "port-70000"}},
                "spec": {
                    "containers": [
                        {
                            "name": "manager",
                            "image": "registry.invalid/tiny:1",
                            "ports": [{"containerPort": 70000}],
                        }
                    ]
                },
            },
        ),
        "Failed/InstallComponentFailed",
        ["install strategy failed", "containerPort"],
    ),
    Case(
        "container-not-an-object",
        with_deployment_spec(
            minimal_csv("junk-container"),
            template={
                "metadata": {"labels": {"app": "junk-container"}},
                "spec": {"containers": ["manager"]},
            },
        ),
        "Failed/InvalidInstallStrategy",
        ["spec.install.spec.deployments[0].spec.template.spec.containers[0] must be an object"],
    ),
    # Two CSVs can only ever be a cycle: cycle-b cannot be replaced (and deleted) by cycle-a
    # before cycle-a is seen to close the cycle, so one kubectl call after the other is enough.
    Case(
        "replace-cycle-of-two",
        minimal_csv("cycle-a", replaces="cycle-b"),
        "Failed/OwnerConflict",
        [CYCLE, "cycle-a replaces cycle-b, cycle-b replaces cycle-a", "Fix spec.replaces"],
        others=[minimal_csv("cycle-b", replaces="cycle-a")],
        others_end={"cycle-b": ("Failed/OwnerConflict", [CYCLE])},
    ),
    Case(
        "replace-cycle-of-three",
        RING["ring-a"],
        "Failed/OwnerConflict",
        [CYCLE, "ring-a replaces ring-b, ring-b replaces ring-c, ring-c replaces ring-a"],
        # Applied one by one, ring-b would upgrade ring-c (and have it deleted) before ring-a
        # closed the ring: an ordinary upgrade chain, not a cycle (test_replace_ring_orders).
        # The newest of the first two, ring-b, goes last of them: it would have to install
        # completely within the List before ring-c could go.
        others=[RING["ring-c"], RING["ring-b"]],
        others_end={
            "ring-b": ("Failed/OwnerConflict", [CYCLE]),
            "ring-c": ("Failed/OwnerConflict", [CYCLE]),
        },
        together=True,
    ),
    Case(
        "two-replace-the-same-one",
        sharing_deployment(minimal_csv("upgrade-2", replaces="base"), BASE),
        "Failed/OwnerConflict",
        [
            "spec.replaces names base, which ClusterServiceVersion upgrade-1 already replaces",
            "Delete upgrade-2, or set its spec.replaces to upgrade-1",
        ],
        others=[BASE, sharing_deployment(minimal_csv("upgrade-1", replaces="base"), BASE)],
        others_end={
            "upgrade-1": ("Succeeded/InstallSucceeded", []),
            "base": ("absent", []),  # replaced by upgrade-1, and deleted as OLM does
        },
    ),
    Case("healthy-neighbour", minimal_csv("fine"), "Succeeded/InstallSucceeded", []),
]


@pytest.fixture(scope="module")
def log_start(olm_operator: OlmOperator) -> int:
    """Where this module's part of the `olm run` log begins."""
    return olm_operator.log_path.stat().st_size if olm_operator.log_path.exists() else 0


@pytest.fixture(scope="module")
def cases(
    control_plane: ControlPlane, olm_operator: OlmOperator, log_start: int
) -> Iterator[dict[str, tuple[str, Case]]]:
    placed = {}
    for case in CASES:
        namespace = f"bad-{case.name}-{uuid.uuid4().hex[:4]}"[:63]
        control_plane.kubectl("create", "namespace", namespace)
        for index, targets in enumerate(case.groups):
            name = "og" if len(case.groups) == 1 else f"og-{index}"
            operator_group(control_plane, namespace, name, targets)
        if case.together:
            apply_together(control_plane, namespace, [*case.others, case.csv])
        else:
            for other in case.others:
                apply(control_plane, namespace, other)
            apply(control_plane, namespace, case.csv)
        placed[case.name] = (namespace, case)
    yield placed
    for namespace, _ in placed.values():
        control_plane.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


@pytest.mark.parametrize("case_name", [c.name for c in CASES])
def test_bad_input_is_explained(
    control_plane: ControlPlane, cases: dict[str, tuple[str, Case]], case_name: str
) -> None:
    namespace, case = cases[case_name]
    name = case.csv["metadata"]["name"]
    csv = wait_phase(control_plane, namespace, name, case.phase)
    for fragment in case.message_has:
        assert fragment in csv["status"]["message"], csv["status"]["message"]
    if case.phase.startswith("Failed/"):
        reason = case.phase.split("/")[1]
        assert any(r == reason for r, _ in warning_events(control_plane, namespace, name)), (
            "a Warning event per failure"
        )
    if case.warning:
        warnings = warning_events(control_plane, namespace, name)
        assert any(case.warning in message for _, message in warnings), warnings
    for other, (end, fragments) in case.others_end.items():
        found = wait_phase(control_plane, namespace, other, end) if end != "absent" else None
        if found is None:
            wait_for(
                lambda other=other: phase(control_plane, namespace, other) == "absent",
                what=f"{other} deleted",
            )
        for fragment in fragments:
            assert found is not None and fragment in found["status"]["message"]


def test_two_replacers_leave_the_deployment_to_the_first(
    control_plane: ControlPlane, cases: dict[str, tuple[str, Case]]
) -> None:
    namespace, _case = cases["two-replace-the-same-one"]
    wait_phase(control_plane, namespace, "upgrade-1", "Succeeded/InstallSucceeded")
    deployment = control_plane.get_json("deployment", "base-controller", "-n", namespace)
    assert deployment["metadata"]["labels"]["olm.owner"] == "upgrade-1"
    assert [o["name"] for o in deployment["metadata"]["ownerReferences"]] == ["upgrade-1"]


def test_a_ring_applied_one_at_a_time_is_an_upgrade_chain(
    control_plane: ControlPlane, olm_operator: OlmOperator, log_start: int, namespace: str
) -> None:
    """The ring's CSVs applied one by one, each settled first, never exist all at once:
    ring-c arrives already replaced by the installed ring-b and is deleted, then ring-a
    upgrades ring-b. No cycle ever forms, so none is reported (the same as OLM v0.38)."""
    operator_group(control_plane, namespace)
    apply(control_plane, namespace, RING["ring-b"])
    wait_phase(control_plane, namespace, "ring-b", "Succeeded/InstallSucceeded")
    apply(control_plane, namespace, RING["ring-c"])
    wait_for(lambda: phase(control_plane, namespace, "ring-c") == "absent", what="ring-c deleted")
    assert phase(control_plane, namespace, "ring-b") == "Succeeded/InstallSucceeded"
    apply(control_plane, namespace, RING["ring-a"])
    wait_phase(control_plane, namespace, "ring-a", "Succeeded/InstallSucceeded")
    wait_for(lambda: phase(control_plane, namespace, "ring-b") == "absent", what="ring-b deleted")
    assert phase(control_plane, namespace, "ring-a") == "Succeeded/InstallSucceeded"


def test_a_ring_that_closes_on_an_installed_csv_fails_whole(
    control_plane: ControlPlane, olm_operator: OlmOperator, log_start: int, namespace: str
) -> None:
    """ring-b installed; then ring-a (an upgrade of ring-b) and ring-c (closing the ring)
    together. All three fail with the cycle named, the installed ring-b too, and its
    Deployment stays: nothing is deleted while the ring stands."""
    operator_group(control_plane, namespace)
    apply(control_plane, namespace, RING["ring-b"])
    wait_phase(control_plane, namespace, "ring-b", "Succeeded/InstallSucceeded")
    before = control_plane.get_json("deployment", "ring-b-controller", "-n", namespace)
    apply_together(control_plane, namespace, [RING["ring-a"], RING["ring-c"]])
    for name in ("ring-a", "ring-b", "ring-c"):
        csv = wait_phase(control_plane, namespace, name, "Failed/OwnerConflict")
        assert CYCLE in csv["status"]["message"], csv["status"]["message"]
    after = control_plane.get_json("deployment", "ring-b-controller", "-n", namespace)
    assert after["metadata"]["uid"] == before["metadata"]["uid"]


@pytest.mark.parametrize(
    ("missing", "field_path"), [("displayName", "spec.displayName"), ("install", "spec.install")]
)
def test_required_fields_are_refused_by_the_api_server(
    control_plane: ControlPlane, namespace: str, missing: str, field_path: str
) -> None:
    csv = minimal_csv("incomplete")
    del csv["spec"][missing]
    result = control_plane.kubectl(
        "create", "-n", namespace, "-f", "-", stdin=json.dumps(csv), check=False
    )
    assert result.returncode != 0
    assert f"{field_path}: Required value" in result.stderr


def test_a_namespace_that_gets_its_operator_group_recovers(
    control_plane: ControlPlane, olm_operator: OlmOperator, log_start: int, namespace: str
) -> None:
    apply(control_plane, namespace, minimal_csv("lonely"))
    wait_phase(control_plane, namespace, "lonely", "Failed/NoOperatorGroup")
    operator_group(control_plane, namespace)
    wait_phase(control_plane, namespace, "lonely", "Succeeded/InstallSucceeded")


def test_unrelated_csvs_do_not_fight_over_one_deployment(
    control_plane: ControlPlane, olm_operator: OlmOperator, log_start: int, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    first = minimal_csv("first")
    apply(control_plane, namespace, first)
    wait_phase(control_plane, namespace, "first", "Succeeded/InstallSucceeded")
    apply(control_plane, namespace, sharing_deployment(minimal_csv("second"), first))
    csv = wait_phase(control_plane, namespace, "second", "Failed/OwnerConflict")
    message = csv["status"]["message"]
    assert "Deployment first-controller" in message, message
    assert "belongs to ClusterServiceVersion first" in message, message
    assert phase(control_plane, namespace, "first") == "Succeeded/InstallSucceeded"
    deployment = control_plane.get_json("deployment", "first-controller", "-n", namespace)
    assert deployment["metadata"]["labels"]["olm.owner"] == "first"


def written_state(plane: ControlPlane, namespaces: list[str]) -> dict[str, Any]:
    """What a write by olm-py would change: each CSV's resourceVersion, and each Deployment's
    generation and labels (its status belongs to the controller-manager)."""
    state: dict[str, Any] = {}
    for namespace in namespaces:
        for csv in plane.get_json("csv", "-n", namespace)["items"]:
            state[f"{namespace}/csv/{csv['metadata']['name']}"] = csv["metadata"]["resourceVersion"]
        for deployment in plane.get_json("deployment", "-n", namespace)["items"]:
            meta = deployment["metadata"]
            state[f"{namespace}/deployment/{meta['name']}"] = (
                meta.get("generation"),
                meta.get("labels"),
            )
    return state


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_explained_states_stay_put(
    control_plane: ControlPlane, olm_operator: OlmOperator, cases: dict[str, tuple[str, Case]]
) -> None:
    """No write loop: once explained, nothing is written again, not even by a retry. And no
    busy loop: two CSVs that replace each other used to wake each other forever, burning a
    whole core without writing anything. Idle, `olm run` uses a few percent of one; the
    bound is half of one, far from both."""
    for namespace, case in cases.values():
        wait_phase(control_plane, namespace, case.csv["metadata"]["name"], case.phase)
    namespaces = [namespace for namespace, _ in cases.values()]
    assert olm_operator.process is not None
    before = written_state(control_plane, namespaces)
    cpu_before = cpu_seconds(olm_operator.process.pid)
    time.sleep(QUIET_SECONDS)
    busy = cpu_seconds(olm_operator.process.pid) - cpu_before
    after = written_state(control_plane, namespaces)
    changed = {k: (before.get(k), after.get(k)) for k in before.keys() | after.keys()}
    assert {k: v for k, v in changed.items() if v[0] != v[1]} == {}
    assert busy < QUIET_SECONDS / 2, f"olm run used {busy:.1f} s of CPU in {QUIET_SECONDS} s"


def test_olm_run_logged_no_traceback(olm_operator: OlmOperator, log_start: int) -> None:
    """Last in the module: bad input is explained on status, never as a Python traceback."""
    with olm_operator.log_path.open("rb") as log:
        log.seek(log_start)
        text = log.read().decode(errors="replace")
    assert "Traceback" not in text, text[max(0, text.index("Traceback") - 2000) :][:6000]
