"""Webhook/APIService definition checks, and requirement entries (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.csv.definitions import definition_problem
from olm.csv.rbac import RbacSnapshot
from olm.csv.requirements import RequirementInputs, check_requirements
from olm.install.strategy import Strategy


def webhook(**overrides: Any) -> dict[str, Any]:
    base = {
        "generateName": "v.example.com",
        "type": "ValidatingAdmissionWebhook",
        "deploymentName": "op",
        "rules": [
            {"apiGroups": ["example.com"], "resources": ["things"], "operations": ["CREATE"]}
        ],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    return {**base, **overrides}


ALL_ONLY = [
    {"type": "OwnNamespace", "supported": False},
    {"type": "AllNamespaces", "supported": True},
]


def conversion(**overrides: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "type": "ConversionWebhook",
        "generateName": "c.example.com",
        "conversionCRDs": ["things.example.com"],
        "rules": None,
    }
    return webhook(**{**fields, **overrides})


def test_a_conversion_webhook_needs_an_all_namespaces_only_csv() -> None:
    spec = {
        "webhookdefinitions": [conversion()],
        "installModes": [*ALL_ONLY, {"type": "SingleNamespace", "supported": True}],
        "customresourcedefinitions": {"owned": [{"name": "things.example.com"}]},
    }
    problem = definition_problem({"spec": spec}, {"op"})
    assert problem is not None
    assert "must support only AllNamespaces" in problem[1]
    assert problem[1].startswith("spec.webhookdefinitions[0]")


@pytest.mark.parametrize(
    ("webhooks", "fragment"),
    [
        ([webhook()], None),
        ([webhook(), webhook()], "repeated WebhookDescription name"),
        ([webhook(type="Sideways")], "is not one of"),
        ([webhook(deploymentName="ghost")], "names no deployment"),
        ([webhook(rules=[{"apiGroups": ["*"], "resources": ["x"]}])], "all API groups"),
        (
            [webhook(rules=[{"apiGroups": ["operators.coreos.com"], "resources": ["x"]}])],
            "OLM resources",
        ),
        (
            [
                webhook(
                    rules=[
                        {
                            "apiGroups": ["admissionregistration.k8s.io"],
                            "resources": ["validatingwebhookconfigurations"],
                        }
                    ]
                )
            ],
            "admission webhook configurations",
        ),
        ([webhook(generateName="")], "webhookdefinitions[0].generateName is missing"),
        ([webhook(sideEffects=None)], "webhookdefinitions[0].sideEffects is missing"),
        ([webhook(admissionReviewVersions=[])], "admissionReviewVersions is missing"),
        (["text"], "webhookdefinitions[0] must be an object"),
        ([conversion()], None),
        ([conversion(conversionCRDs=[])], "conversionCRDs is empty"),
        (
            [conversion(conversionCRDs=["others.example.com"])],
            "names CRD others.example.com, which this CSV does not own",
        ),
    ],
)
def test_webhook_definitions(webhooks: list[dict[str, Any]], fragment: str | None) -> None:
    spec = {
        "webhookdefinitions": webhooks,
        "installModes": ALL_ONLY,
        "customresourcedefinitions": {"owned": [{"name": "things.example.com"}]},
    }
    problem = definition_problem({"spec": spec}, {"op"})
    if fragment is None:
        assert problem is None
    else:
        # Where OLM has its own words (webhook rules), they are the message; the field and
        # the fix are the Event's detail.
        said = f"{problem[1]}: {getattr(problem, 'detail', '')}" if problem else ""
        assert problem is not None and problem[0] == "InvalidWebhookDescription"
        assert fragment in said


def test_refused_webhook_rules_say_olms_words_and_the_event_names_the_field() -> None:
    rule = {"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}
    spec = {"webhookdefinitions": [webhook(rules=[rule])], "installModes": ALL_ONLY}
    problem = definition_problem({"spec": spec}, {"op"})
    assert problem is not None and problem[1] == "webhook rules cannot include all groups"
    assert "spec.webhookdefinitions[0].rules[0].apiGroups" in getattr(problem, "detail", "")


def test_api_service_must_name_a_deployment() -> None:
    csv = {
        "spec": {
            "apiservicedefinitions": {"owned": [{"name": "things", "deploymentName": "ghost"}]}
        }
    }
    problem = definition_problem(csv, {"op"})
    assert (
        problem is not None and "spec.apiservicedefinitions.owned[0].deploymentName" in problem[1]
    )


def inputs(
    version: str = "v1.34.12", served: frozenset[tuple[str, str, str]] = frozenset()
) -> RequirementInputs:
    return RequirementInputs({}, {}, RbacSnapshot({}, [], {}, []), version, served)


def csv(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "op.v1", "namespace": "ns"}, "spec": spec}


@pytest.mark.parametrize(
    ("wanted", "state", "message"),
    [
        ("1.25.0", "Present", "less than server version"),
        ("1.99.0", "PresentNotSatisfied", "minKubeVersion (1.99.0) > server version"),
        ("1.20", "PresentNotSatisfied", "not X.Y.Z"),
    ],
)
def test_min_kube_version(wanted: str, state: str, message: str) -> None:
    met, entries = check_requirements(csv(minKubeVersion=wanted), Strategy([], []), inputs())
    assert entries[0]["status"] == state and message in entries[0]["message"]
    assert met is (state == "Present")


def test_native_apis() -> None:
    wanted = csv(
        nativeAPIs=[
            {"group": "apps", "version": "v1", "kind": "Deployment"},
            {"group": "x.io", "version": "v1", "kind": "Y"},
        ]
    )
    met, entries = check_requirements(
        wanted, Strategy([], []), inputs(served=frozenset({("apps", "v1", "Deployment")}))
    )
    assert not met
    assert [(e["name"], e["status"]) for e in entries] == [
        ("v1.apps", "Present"),
        ("v1.x.io", "NotPresent"),
    ]


def _apiservice(name: str, available: str | None) -> dict[str, Any]:
    conditions = [] if available is None else [{"type": "Available", "status": available}]
    return {"metadata": {"name": name, "uid": "u-1"}, "status": {"conditions": conditions}}


REQUIRED = {"group": "wardle.example.com", "version": "v1alpha1", "kind": "Fischer"}
WARDLE = ("wardle.example.com", "v1alpha1", "Fischer")


@pytest.mark.parametrize(
    ("served", "apiservice", "state"),
    [
        (frozenset(), None, "NotPresent"),  # nothing serves the kind
        (frozenset({WARDLE}), None, "NotPresent"),  # served, but no such APIService
        (frozenset({WARDLE}), _apiservice("v1alpha1.wardle.example.com", "False"), "NotPresent"),
        (frozenset({WARDLE}), _apiservice("v1alpha1.wardle.example.com", None), "NotPresent"),
        (frozenset({WARDLE}), _apiservice("v1alpha1.wardle.example.com", "True"), "Present"),
    ],
)
def test_a_required_apiservice_must_exist_and_be_available(
    served: frozenset[tuple[str, str, str]], apiservice: dict[str, Any] | None, state: str
) -> None:
    """As OLM: until then the CSV stays Pending with RequirementsNotMet."""
    given = RequirementInputs(
        {},
        {},
        RbacSnapshot({}, [], {}, []),
        "v1.34.12",
        served,
        apiservices={"v1alpha1.wardle.example.com": apiservice} if apiservice else {},
    )
    met, entries = check_requirements(
        csv(apiservicedefinitions={"required": [REQUIRED]}), Strategy([], []), given
    )
    [entry] = entries
    assert (entry["group"], entry["version"], entry["kind"], entry["name"]) == (
        "apiregistration.k8s.io",
        "v1",
        "APIService",
        "v1alpha1.wardle.example.com",
    )
    assert entry["status"] == state and met is (state == "Present")
    assert ("uuid" in entry) is (state == "Present")


def test_an_owned_apiservice_needs_its_deployment_in_the_strategy() -> None:
    from olm.api.views import StrategyDeployment as DeploymentSpecEntry

    owned = [
        {"group": "a.io", "version": "v1", "kind": "A", "deploymentName": "server"},
        {"group": "b.io", "version": "v1", "kind": "B", "deploymentName": "ghost"},
    ]
    strategy = Strategy([DeploymentSpecEntry("server", {}, {})], [])
    met, entries = check_requirements(
        csv(apiservicedefinitions={"owned": owned}), strategy, inputs()
    )
    assert [(e["name"], e["status"]) for e in entries] == [
        ("v1.a.io", "DeploymentFound"),
        ("v1.b.io", "DeploymentNotFound"),
    ]
    assert not met
    met, _ = check_requirements(csv(apiservicedefinitions={"owned": owned[:1]}), strategy, inputs())
    assert met
