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
    }
    return {**base, **overrides}


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
    ],
)
def test_webhook_definitions(webhooks: list[dict[str, Any]], fragment: str | None) -> None:
    problem = definition_problem({"spec": {"webhookdefinitions": webhooks}}, {"op"})
    if fragment is None:
        assert problem is None
    else:
        assert (
            problem is not None
            and problem[0] == "InvalidWebhookDescription"
            and fragment in problem[1]
        )


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
