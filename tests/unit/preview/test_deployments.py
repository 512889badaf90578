"""Deployment changes between two install strategies: images, env, resources, containers."""

from __future__ import annotations

import copy
from typing import Any

from olm.api.preview import Change
from olm.preview.deployments import FieldChange, deployment_changes


def csv(
    name: str, *deployments: tuple[str, list[dict[str, Any]]], account: str = "op"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": d,
                            "spec": {
                                "replicas": 1,
                                "template": {
                                    "spec": {"serviceAccountName": account, "containers": c}
                                },
                            },
                        }
                        for d, c in deployments
                    ]
                },
            }
        },
    }


MANAGER = {
    "name": "manager",
    "image": "example.com/op:1",
    "env": [
        {"name": "MODE", "value": "fast"},
        {"name": "WATCH", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    ],
    "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "64Mi"}},
}


def test_the_same_strategy_changes_nothing() -> None:
    old = csv("v1", ("op", [MANAGER]))
    assert deployment_changes(copy.deepcopy(old), old) == []


def test_image_env_and_resources_changes_are_listed() -> None:
    changed = copy.deepcopy(MANAGER)
    changed["image"] = "example.com/op:2"
    changed["env"] = [{"name": "MODE", "value": "safe"}, {"name": "DEBUG", "value": "1"}]
    changed["resources"] = {"requests": {"cpu": "200m"}}
    (change,) = deployment_changes(csv("v2", ("op", [changed])), csv("v1", ("op", [MANAGER])))
    assert (change.csv, change.name, change.change) == ("v2", "op", Change.CHANGED)
    (container,) = change.containers
    assert container.change is Change.CHANGED
    assert container.fields == (
        FieldChange("image", "example.com/op:1", "example.com/op:2"),
        FieldChange("env.DEBUG", "", "1"),
        FieldChange("env.MODE", "fast", "safe"),
        FieldChange("env.WATCH", 'from {"fieldRef":{"fieldPath":"metadata.namespace"}}', ""),
        FieldChange("resources.limits.memory", "64Mi", ""),
        FieldChange("resources.requests.cpu", "100m", "200m"),
    )
    assert change.images == (("manager", "example.com/op:1", "example.com/op:2"),)


def test_containers_and_deployments_added_and_removed() -> None:
    sidecar = {"name": "proxy", "image": "example.com/proxy:1"}
    new = csv("v2", ("op", [sidecar]), ("webhook", [MANAGER]), account="op2")
    changes = deployment_changes(new, csv("v1", ("op", [MANAGER]), ("old", [MANAGER])))
    assert [(c.name, c.change) for c in changes] == [
        ("op", Change.CHANGED),
        ("webhook", Change.ADDED),
        ("old", Change.REMOVED),
    ]
    op = changes[0]
    assert op.fields == (FieldChange("serviceAccountName", "op", "op2"),)
    assert [(c.name, c.change) for c in op.containers] == [
        ("manager", Change.REMOVED),
        ("proxy", Change.ADDED),
    ]
    assert op.containers[1].fields == (FieldChange("image", "", "example.com/proxy:1"),)


def test_a_fresh_install_adds_every_deployment() -> None:
    (added,) = deployment_changes(csv("v1", ("op", [MANAGER])), None)
    assert added.change is Change.ADDED and added.images == (("manager", "", "example.com/op:1"),)
