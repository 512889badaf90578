"""The CSV phase machine's test world: a CSV, its OperatorGroup, a healthy Deployment and the
`World` the decision reads, at a fixed `NOW` (shared by the csv tests and their neighbours)."""

from __future__ import annotations

import copy
import datetime
from typing import Any

from olm.csv.phase import Plan, World
from olm.csv.rbac import RbacSnapshot
from olm.csv.requirements import RequirementInputs

NOW = datetime.datetime(2026, 11, 22, 12, 0, 0, tzinfo=datetime.UTC)
NS = "ns1"


def csv(name: str = "op.v1", phase: str = "", reason: str = "", **spec: Any) -> dict[str, Any]:
    labels = {"app": "op"}
    body: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "annotations": {
                "olm.operatorGroup": "og",
                "olm.operatorNamespace": NS,
                "olm.targetNamespaces": NS,
            },
            "finalizers": ["operators.coreos.com/csv-cleanup"],
        },
        "spec": {
            "displayName": "Op",
            "version": "1.0.0",
            "installModes": [{"type": "OwnNamespace", "supported": True}],
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": "op",
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": labels},
                                "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {"containers": [{"name": "c", "image": "i"}]},
                                },
                            },
                        }
                    ]
                },
            },
            **spec,
        },
        "status": {"phase": phase, "reason": reason, "lastTransitionTime": "2026-11-22T11:59:00Z"}
        if phase
        else {},
    }
    return body


GROUP = {
    "metadata": {"name": "og", "namespace": NS},
    "spec": {"targetNamespaces": [NS]},
    "status": {"namespaces": [NS]},
}


NO_RBAC = RbacSnapshot({}, [], {}, [])


def healthy(deployment: dict[str, Any]) -> dict[str, Any]:
    deployment = copy.deepcopy(deployment)
    deployment["metadata"]["generation"] = 1
    deployment["status"] = {
        "observedGeneration": 1,
        "updatedReplicas": 1,
        "conditions": [{"type": "Available", "status": "True"}],
    }
    return deployment


def world(
    subject: dict[str, Any],
    *,
    others: list[dict[str, Any]] = (),
    groups: list[dict[str, Any]] | None = None,
    deployments: dict[str, dict[str, Any]] | None = None,
    crds: dict[str, Any] | None = None,
    condition: dict[str, Any] | None = None,
    now: datetime.datetime = NOW,
) -> World:  # type: ignore[assignment]
    every = {c["metadata"]["name"]: c for c in [subject, *others]}
    return World(
        csv=subject,
        operator_groups=[GROUP] if groups is None else groups,
        group_targets=[NS],
        csvs=every,
        requirements=RequirementInputs(crds or {}, {}, NO_RBAC, "v1.34.12", frozenset()),
        deployments=deployments or {},
        replaced_condition=condition,
        now=now,
    )


def moved(plan: Plan) -> str:
    assert plan.status is not None, "expected a transition"
    return f"{plan.status['phase']}/{plan.status['reason']}"


def validating(**overrides: Any) -> dict[str, Any]:
    return {
        "generateName": "vthing.example.com",
        "type": "ValidatingAdmissionWebhook",
        "deploymentName": "op",
        "containerPort": 443,
        "targetPort": 9443,
        "rules": [
            {
                "apiGroups": ["example.com"],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["things"],
            }
        ],
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "webhookPath": "/validate",
        **overrides,
    }
