"""Operators the stories build by hand: the Widget operator whose provided API conflicts
across OperatorGroups, and a ValidatingAdmissionPolicy an install plan may carry."""

from __future__ import annotations

from typing import Any

from tests.support.cluster import ControlPlane
from tests.support.stories import minimal_csv

MODES = [
    {"type": "OwnNamespace", "supported": True},
    {"type": "SingleNamespace", "supported": True},
    {"type": "MultiNamespace", "supported": True},
    {"type": "AllNamespaces", "supported": False},
]
API = "Widget.v1.conflict.example.com"


def widget_operator(name: str) -> dict[str, Any]:
    return minimal_csv(
        name,
        installModes=MODES,
        customresourcedefinitions={
            "owned": [{"name": "widgets.conflict.example.com", "version": "v1", "kind": "Widget"}]
        },
    )


def provided(plane: ControlPlane, namespace: str) -> str:
    group = plane.get_json("operatorgroup", "og", "-n", namespace)
    return str((group["metadata"].get("annotations") or {}).get("olm.providedAPIs", ""))


def admission_policy(name: str) -> dict[str, Any]:
    """Inert without a binding: it never judges a request."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["cache.example.com"],
                        "apiVersions": ["*"],
                        "operations": ["CREATE"],
                        "resources": ["memcacheds"],
                    }
                ]
            },
            "validations": [{"expression": "object.spec.size <= 10"}],
        },
    }
