"""The registry pod OLM runs for a ConfigMap catalog, made with olm-py's image: its spec
(grpcPodConfig included), its access, and when it is rolled, kept or made again."""

from __future__ import annotations

import copy
from typing import Any

from olm.catalogsource.registrypod import (
    pod_actions,
    registry_access,
    registry_pod,
)
from tests.unit.catalogsource.world import source

IMAGE = "registry.example/olm-py:1.0"


def configmap_source(version: str = "7", **spec: Any) -> dict[str, Any]:
    src = source(sourceType="configmap", configMap="cm", **spec)
    src["metadata"]["uid"] = "u1"
    src["status"] = {"configMapReference": {"name": "cm", "resourceVersion": version}}
    return src


def test_the_pod_serves_the_configmap_with_olm_pys_image_as_olm_labels_it() -> None:
    pod = registry_pod(configmap_source(), IMAGE)
    assert pod is not None
    meta = pod["metadata"]
    assert meta["generateName"] == "src-"
    assert meta["labels"]["olm.catalogSource"] == "src"
    assert meta["labels"]["olm.configMapResourceVersion"] == "7"
    assert meta["labels"]["olm.managed"] == "true"
    assert meta["ownerReferences"][0]["controller"] is True
    assert meta["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "true"
    container = pod["spec"]["containers"][0]
    assert container["image"] == IMAGE
    assert container["args"][:5] == ["configmap-server", "-c", "cm", "-n", "team"]
    assert container["ports"] == [{"name": "grpc", "containerPort": 50051}]
    assert pod["spec"]["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["spec"]["serviceAccountName"] == "src-configmap-server"


def test_grpc_pod_config_replaces_the_defaults() -> None:
    tolerations = [{"key": "k", "operator": "Exists", "effect": "NoExecute"}]
    config = {
        "nodeSelector": {"kubernetes.io/os": "linux", "some": "tag"},
        "priorityClassName": "",
        "tolerations": tolerations,
        "securityContextConfig": "restricted",
    }
    pod = registry_pod(configmap_source(grpcPodConfig=config), IMAGE)
    assert pod is not None
    spec = pod["spec"]
    assert spec["nodeSelector"] == config["nodeSelector"]
    assert spec["priorityClassName"] == ""
    assert spec["tolerations"] == tolerations
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}


def test_no_pod_for_an_address_or_image_catalog() -> None:
    assert registry_pod(source(sourceType="grpc", address="a:1"), IMAGE) is None
    assert registry_pod(source(sourceType="grpc", image="x"), IMAGE) is None
    assert registry_access(source(sourceType="grpc", image="x")) == []


def test_the_pods_account_may_read_its_configmap_only() -> None:
    account, role, binding = registry_access(configmap_source())
    assert account["metadata"]["name"] == "src-configmap-server"
    assert role["metadata"]["name"] == "src-configmap-reader"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"], "resourceNames": ["cm"]}
    ]
    assert binding["metadata"]["name"] == "src-server-configmap-reader"
    assert binding["subjects"][0]["name"] == "src-configmap-server"


def live(pod: dict[str, Any], name: str) -> dict[str, Any]:
    found = copy.deepcopy(pod)
    found["metadata"]["name"] = name
    return found


def test_a_missing_pod_is_made_a_current_one_kept_and_a_new_configmap_rolls_it() -> None:
    wanted = registry_pod(configmap_source("7"), IMAGE)
    assert wanted is not None
    assert pod_actions(wanted, []).create == wanted
    current = live(wanted, "src-a")
    assert pod_actions(wanted, [current]).create is None
    assert pod_actions(wanted, [current, live(wanted, "src-b")]).delete == ["src-b"]
    newer = registry_pod(configmap_source("8"), IMAGE)
    actions = pod_actions(newer, [current])
    assert actions.create == newer and actions.delete == ["src-a"]
    assert pod_actions(None, [current]).delete == ["src-a"]
