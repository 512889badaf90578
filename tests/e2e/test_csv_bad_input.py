"""Bad input gets OLM's phase and reason, a message that names the problem and the fix, and
an Event, while other CSVs carry on. Every case lives in its own namespace; all are applied
together, so they also show that one broken CSV does not hold up the others."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.conftest import ControlPlane, OlmOperator
from tests.e2e.stories import (
    apply,
    minimal_csv,
    operator_group,
    wait_phase,
    warning_events,
    with_deployment_spec,
)

ANNOTATION_LIMIT = 262144


@dataclass
class Case:
    name: str
    csv: dict[str, Any]
    phase: str
    message_has: list[str]
    groups: list[list[str] | None] = field(default_factory=lambda: [None])
    warning: str | None = None


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
    Case("healthy-neighbour", minimal_csv("fine"), "Succeeded/InstallSucceeded", []),
]


@pytest.fixture(scope="module")
def cases(
    control_plane: ControlPlane, olm_operator: OlmOperator
) -> Iterator[dict[str, tuple[str, Case]]]:
    placed = {}
    for case in CASES:
        namespace = f"bad-{case.name}-{uuid.uuid4().hex[:4]}"[:63]
        control_plane.kubectl("create", "namespace", namespace)
        for index, targets in enumerate(case.groups):
            name = "og" if len(case.groups) == 1 else f"og-{index}"
            operator_group(control_plane, namespace, name, targets)
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
    control_plane: ControlPlane, cases: dict[str, tuple[str, Case]]
) -> None:
    namespace, _case = cases["no-operator-group"]
    wait_phase(control_plane, namespace, "lonely", "Failed/NoOperatorGroup")
    operator_group(control_plane, namespace)
    wait_phase(control_plane, namespace, "lonely", "Succeeded/InstallSucceeded")
