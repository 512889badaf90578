"""Owned APIServices as OLM v0 installs them, on plain data: the certificate objects shared with
webhooks, the APIService itself, adoption, availability and the CSV phases around them."""

from __future__ import annotations

import base64
import copy
import datetime
from typing import Any

import pytest

from olm.csv.definitions import definition_problem
from olm.csv.phase import Plan, World, decide
from olm.csv.requirements import RequirementInputs
from olm.install.apiservices import adoption_problem, resource_issue, unavailable
from olm.install.certresources import WebhookWorld
from olm.install.certs import CertSettings
from tests.unit.csv.world import GROUP, NO_RBAC, NOW, NS, csv, healthy

SHORT = CertSettings(datetime.timedelta(hours=2), datetime.timedelta(minutes=30))
UID_GROUP = {**GROUP, "metadata": {**GROUP["metadata"], "uid": "og-uid"}}
NAME = "v1alpha1.echo.example.com"


def owned(**overrides: Any) -> dict[str, Any]:
    return {
        "group": "echo.example.com",
        "version": "v1alpha1",
        "kind": "Echo",
        "name": "echoes",
        "deploymentName": "op",
        "containerPort": 8443,
        **overrides,
    }


def api_csv(*descs: dict[str, Any], name: str = "op.v1", phase: str = "", reason: str = "") -> Any:
    return csv(
        name=name,
        phase=phase,
        reason=reason,
        apiservicedefinitions={"owned": list(descs or [owned()])},
    )


def api_world(
    subject: dict[str, Any],
    *,
    apiservices: dict[str, dict[str, Any] | None] | None = None,
    secrets: dict[str, dict[str, Any] | None] | None = None,
    deployments: dict[str, dict[str, Any]] | None = None,
    others: list[dict[str, Any]] = (),  # type: ignore[assignment]
    now: datetime.datetime = NOW,
) -> World:
    return World(
        csv=subject,
        operator_groups=[UID_GROUP],
        group_targets=[NS],
        csvs={c["metadata"]["name"]: c for c in [subject, *others]},
        requirements=RequirementInputs({}, {}, NO_RBAC, "v1.34.12", frozenset()),
        deployments=deployments or {},
        replaced_condition=None,
        now=now,
        webhooks=WebhookWorld(secrets or {}, [], SHORT, apiservices or {}),
    )


def moved(plan: Plan) -> str:
    assert plan.status is not None, "expected a transition"
    return f"{plan.status['phase']}/{plan.status['reason']}"


def with_available(apiservice: dict[str, Any], status: str = "True") -> dict[str, Any]:
    apiservice = copy.deepcopy(apiservice)
    apiservice["status"] = {
        "conditions": [
            {"type": "Available", "status": status, "reason": "Passed" if status else "Failing"}
        ]
    }
    return apiservice


def installed(subject: dict[str, Any], available: str = "True") -> tuple[Plan, World]:
    """InstallReady -> Installing: the plan, and the world as it is after executing it."""
    ready = copy.deepcopy(subject)
    ready["status"] = {"phase": "InstallReady", "reason": "AllRequirementsMet"}
    plan = decide(api_world(ready))
    assert moved(plan) == "Installing/InstallSucceeded"
    secrets = {o["metadata"]["name"]: o for o in plan.resources if o["kind"] == "Secret"}
    apiservices: dict[str, dict[str, Any] | None] = {
        o["metadata"]["name"]: with_available(o, available)
        for o in plan.resources
        if o["kind"] == "APIService"
    }
    after = copy.deepcopy(subject)
    after["status"] = plan.status
    world = api_world(
        after,
        apiservices=apiservices,
        secrets=secrets,
        deployments={d["metadata"]["name"]: healthy(d) for d in plan.apply},
    )
    return plan, world


def test_install_renders_the_certificate_objects_and_the_apiservice() -> None:
    plan, _ = installed(api_csv())
    kinds = [(o["kind"], o["metadata"]["name"]) for o in plan.resources]
    assert kinds == [
        ("Service", "op-service"),
        ("Secret", "op-service-cert"),
        ("Role", "op-service-cert"),
        ("RoleBinding", "op-service-cert"),
        ("ClusterRoleBinding", "op-service-system:auth-delegator"),
        ("RoleBinding", "op-service-auth-reader"),
        ("APIService", NAME),
    ]
    service = plan.resources[0]
    assert service["spec"]["ports"] == [{"name": "8443", "port": 8443, "targetPort": 8443}]
    apiservice = plan.resources[-1]
    assert apiservice["apiVersion"] == "apiregistration.k8s.io/v1"
    assert apiservice["metadata"]["labels"] == {
        "olm.managed": "true",
        "olm.owner": "op.v1",
        "olm.owner.namespace": NS,
        "olm.owner.kind": "ClusterServiceVersion",
    }
    # OLM labels every certificate object olm.managed=true (its caches see only those)
    assert all(o["metadata"]["labels"]["olm.managed"] == "true" for o in plan.resources)
    secret = plan.resources[1]
    spec = apiservice["spec"]
    assert spec["caBundle"] == secret["data"]["olmCAKey"]
    assert spec["service"] == {"namespace": NS, "name": "op-service", "port": 8443}
    assert (spec["group"], spec["version"]) == ("echo.example.com", "v1alpha1")
    assert (spec["groupPriorityMinimum"], spec["versionPriority"]) == (2000, 15)
    [deployment] = plan.apply
    volumes = {v["name"] for v in deployment["spec"]["template"]["spec"]["volumes"]}
    assert {"apiservice-cert", "webhook-cert"} <= volumes


def test_the_default_port_is_443() -> None:
    desc = owned()
    del desc["containerPort"]
    plan, _ = installed(api_csv(desc))
    assert plan.resources[-1]["spec"]["service"]["port"] == 443


@pytest.mark.parametrize(
    ("available", "expected"),
    [
        ("True", "Succeeded/InstallSucceeded"),
        ("False", "Installing/InstallWaiting"),
    ],
)
def test_the_csv_succeeds_only_when_the_apiservice_is_available(
    available: str, expected: str
) -> None:
    _, after = installed(api_csv(), available)
    plan = decide(after)
    assert moved(plan) == expected
    if available != "True":
        assert plan.status is not None
        assert (
            f"APIServices not installed: APIService {NAME} is not Available"
            in (plan.status["message"])
        )


def succeeded(available: str = "True") -> World:
    _, after = installed(api_csv(), available)
    done = copy.deepcopy(after.csv)
    done["status"] = {**(after.csv.get("status") or {}), **(decide(after).status or {})}
    return World(**{**after.__dict__, "csv": done})


def test_a_succeeded_csv_with_everything_in_place_writes_nothing() -> None:
    plan = decide(succeeded())
    assert plan.status is None and plan.resources == [] and plan.apply == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("gone", "Failed/APIServiceResourceIssue"),
        ("ca", "Failed/APIServiceResourceIssue"),
        ("unavailable", "Failed/ComponentUnhealthy"),
    ],
)
def test_a_succeeded_csv_notices_its_apiservice(change: str, expected: str) -> None:
    world = succeeded()
    assert world.webhooks is not None
    current = world.webhooks.apiservices[NAME]
    assert current is not None
    changed: dict[str, Any] | None = copy.deepcopy(current)
    if change == "gone":
        changed = None
    elif change == "ca":
        assert changed is not None
        changed["spec"]["caBundle"] = base64.b64encode(b"other").decode()
    else:
        changed = with_available(current, "False")
    hooks = WebhookWorld(world.webhooks.secrets, [], SHORT, {NAME: changed})
    plan = decide(World(**{**world.__dict__, "webhooks": hooks}))
    assert moved(plan) == expected


def test_a_failed_csv_with_a_broken_apiservice_reinstalls() -> None:
    world = succeeded()
    assert world.webhooks is not None
    failed = copy.deepcopy(world.csv)
    failed["status"] = {**failed["status"], "phase": "Failed", "reason": "APIServiceResourceIssue"}
    hooks = WebhookWorld(world.webhooks.secrets, [], SHORT, {NAME: None})
    plan = decide(World(**{**world.__dict__, "csv": failed, "webhooks": hooks}))
    assert moved(plan) == "Pending/APIServiceResourcesNeedReinstall"
    assert plan.status is not None and f"APIService {NAME} not found" in plan.status["message"]


def test_certificates_in_the_rotation_window_are_rotated() -> None:
    world = succeeded()
    later = NOW + datetime.timedelta(hours=1, minutes=31)
    plan = decide(World(**{**world.__dict__, "now": later}))
    assert moved(plan) == "Pending/NeedsCertRotation"


def labelled(owner: str | None, namespace: str = NS) -> dict[str, Any]:
    labels = (
        {}
        if owner is None
        else {
            "olm.owner": owner,
            "olm.owner.namespace": namespace,
            "olm.owner.kind": "ClusterServiceVersion",
        }
    )
    return {"metadata": {"name": NAME, "labels": labels}}


@pytest.mark.parametrize(
    ("existing", "other_phase", "adoptable"),
    [
        (None, None, True),  # nothing there: created
        (labelled("op.v1"), None, True),  # its own
        (labelled("op.v0"), None, True),  # the CSV it replaces
        (labelled("rival.v1"), "Replacing", True),  # an owner on its way out
        (labelled("rival.v1"), "Deleting", True),
        (labelled("gone.v1"), None, True),  # an orphan (OLM deletes it, then creates)
        (labelled("rival.v1"), "Succeeded", False),
        (labelled("rival.v1", "elsewhere"), None, False),
        (labelled(None), None, False),  # not OLM's
    ],
)
def test_an_existing_apiservice_is_adopted_only_as_olm_does(
    existing: dict[str, Any] | None, other_phase: str | None, adoptable: bool
) -> None:
    subject = api_csv()
    subject["spec"]["replaces"] = "op.v0"
    csvs = {"op.v1": subject}
    if other_phase is not None:
        csvs["rival.v1"] = csv(name="rival.v1", phase=other_phase)
    problem = adoption_problem(subject, {NAME: existing}, csvs)
    assert (problem is None) == adoptable
    if problem is not None:
        assert problem.startswith(f"unable to adopt APIService {NAME}")


def test_a_pending_csv_whose_apiservice_belongs_to_another_fails_with_owner_conflict() -> None:
    subject = api_csv(phase="Pending", reason="RequirementsUnknown")
    rival = csv(name="rival.v1", phase="Succeeded")
    plan = decide(api_world(subject, apiservices={NAME: labelled("rival.v1")}, others=[rival]))
    assert moved(plan) == "Failed/OwnerConflict"


@pytest.mark.parametrize(
    ("desc", "field"),
    [
        (owned(group=""), "group"),
        (owned(version=None), "version"),
        (owned(containerPort=70000), "containerPort"),
        (owned(deploymentName="ghost"), "deploymentName"),
    ],
)
def test_an_invalid_owned_apiservice_names_the_field(desc: dict[str, Any], field: str) -> None:
    problem = definition_problem(api_csv(desc), {"op"})
    assert problem is not None
    assert problem[0] == "APIServiceInstallFailed"
    assert f"spec.apiservicedefinitions.owned[0].{field}" in problem[1]


def test_availability_and_resources_are_checked_per_apiservice() -> None:
    subject = api_csv()
    assert resource_issue(subject, {}, {}) == f"APIService {NAME} not found"
    assert unavailable(subject, {NAME: {"status": {}}}) == f"APIService {NAME} is not Available"
