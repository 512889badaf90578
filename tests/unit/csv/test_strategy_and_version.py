"""Issue 15's other two findings: a deployment strategy without `spec.install.spec`, and a
`spec.version` that is not a version. Each is explained on status, naming the field and the
fix (docs/differences.md says how this compares with OLM v0)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.phase import decide
from olm.csv.requirements import RequirementInputs, check_requirements
from olm.install.strategy import InvalidStrategy, parse_strategy
from tests.unit.csv.world import NO_RBAC, csv, moved, world

INPUTS = RequirementInputs({}, {}, NO_RBAC, "v1.34.12", frozenset())


def with_install(install: Any) -> dict[str, Any]:
    return csv(phase="Pending", reason="RequirementsUnknown", install=install)


@pytest.mark.parametrize(
    ("install", "problem"),
    [
        ({"strategy": "deployment"}, "spec.install.spec is missing"),
        ({"strategy": "deployment", "spec": None}, "spec.install.spec is missing"),
        ({"strategy": "deployment", "spec": []}, "spec.install.spec must be an object"),
        (
            {"strategy": "deployment", "spec": {"deployments": {"name": "op"}}},
            "spec.install.spec.deployments must be a list",
        ),
        (
            {"strategy": "deployment", "spec": {"permissions": "all"}},
            "spec.install.spec.permissions must be a list",
        ),
        (
            {
                "strategy": "deployment",
                "spec": {"clusterPermissions": [{"serviceAccountName": "sa", "rules": "*"}]},
            },
            "spec.install.spec.clusterPermissions[0].rules must be a list",
        ),
        (
            {
                "strategy": "deployment",
                "spec": {"deployments": [{"name": "op", "label": "x", "spec": {"template": {}}}]},
            },
            "spec.install.spec.deployments[0].label must be an object",
        ),
    ],
)
def test_an_unusable_strategy_fails_naming_the_field(install: Any, problem: str) -> None:
    subject = with_install(install)
    with pytest.raises(InvalidStrategy, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parse_strategy(subject)
    plan = decide(world(subject))
    assert moved(plan) == "Failed/InvalidInstallStrategy"
    assert problem in plan.status["message"]  # type: ignore[index]


def test_the_missing_spec_message_says_how_to_install_nothing_on_purpose() -> None:
    with pytest.raises(InvalidStrategy) as raised:
        parse_strategy(with_install({"strategy": "deployment"}))
    assert "spec.install.spec.deployments: []" in str(raised.value)


@pytest.mark.parametrize("spec", [{}, {"deployments": []}, {"deployments": [], "permissions": []}])
def test_an_explicitly_empty_strategy_installs_nothing_as_in_olm(spec: dict[str, Any]) -> None:
    subject = with_install({"strategy": "deployment", "spec": spec})
    strategy = parse_strategy(subject)
    assert strategy.deployments == [] and strategy.permissions == []
    assert moved(decide(world(subject))) == "InstallReady/AllRequirementsMet"


@pytest.mark.parametrize(
    ("version", "valid"),
    [
        (None, True),  # OLM reads a missing version as 0.0.0
        ("1.0.0", True),
        ("1.0.0-alpha.1+build.7", True),
        ("v1.0.0", True),  # blang ParseTolerant, as OLM decodes spec.version
        ("1.0", True),
        ("01.2.3", True),
        (" 1.2.3 ", True),
        ("not-a-semver", False),
        ("", False),
        ("1.2.3.4", False),
        ("1.0-beta", False),  # a short version cannot carry a pre-release
        ("latest", False),
    ],
)
def test_spec_version_is_read_as_olm_reads_it(version: str | None, valid: bool) -> None:
    spec = {} if version is None else {"version": version}
    subject = csv(phase="Pending", reason="RequirementsUnknown", **spec)
    if version is None:
        del subject["spec"]["version"]
    met, entries = check_requirements(subject, parse_strategy(subject), INPUTS)
    assert met is valid
    if valid:
        assert entries == []
        assert moved(decide(world(subject))) == "InstallReady/AllRequirementsMet"
        return
    (entry,) = entries
    assert entry["kind"] == "ClusterServiceVersion" and entry["name"] == "op.v1"
    assert entry["status"] == "PresentNotSatisfied"
    plan = decide(world(subject))
    assert moved(plan) == "Pending/RequirementsNotMet"
    message = plan.status["message"]  # type: ignore[index]
    assert f"spec.version {version!r}" in message and "MAJOR.MINOR.PATCH" in message


def test_a_succeeded_csv_whose_version_is_broken_fails_and_recovers_when_fixed() -> None:
    broken = csv(phase="Succeeded", reason="InstallSucceeded", version="one")
    plan = decide(world(broken))
    assert moved(plan) == "Failed/RequirementsNotMet"
    fixed = csv(phase="Failed", reason="RequirementsNotMet", version="1.0.1")
    assert moved(decide(world(fixed))) != "Failed/RequirementsNotMet"
