"""A bundle's cluster-scoped objects (a ClusterRole of its own, a PriorityClass) are planned
without a namespace and looked up without one, so a later version's plan finds the object the
earlier one made and updates it (found by the corpus parity run: gitops-primer's upgrade plan
created its metrics-reader ClusterRole again and again, 409 each time)."""

from __future__ import annotations

from olm.installplan.stepref import step_ref
from olm.installplan.steps import plan_bundle
from tests.support.stories import minimal_csv

CLUSTER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "metrics-reader", "namespace": "stray"},
    "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
}
CONFIG_MAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}}
PRIORITY = {
    "apiVersion": "scheduling.k8s.io/v1",
    "kind": "PriorityClass",
    "metadata": {"name": "high"},
    "value": 1000,
}


def manifests(*objects: dict[str, object]) -> dict[str, dict[str, object]]:
    steps = plan_bundle([minimal_csv("op.v1"), *objects], "ns", ("corpus", "olm"))
    return {s.manifest["kind"]: s.manifest for s in steps}


def test_cluster_scoped_bundle_objects_name_no_namespace() -> None:
    found = manifests(CLUSTER_ROLE, PRIORITY, CONFIG_MAP)
    assert "namespace" not in found["ClusterRole"]["metadata"]
    assert "namespace" not in found["PriorityClass"]["metadata"]
    assert found["ConfigMap"]["metadata"]["namespace"] == "ns"


def test_a_cluster_scoped_step_is_looked_up_without_its_stray_namespace() -> None:
    assert step_ref(CLUSTER_ROLE) == (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "",
        "metrics-reader",
    )
    assert step_ref({**CONFIG_MAP, "metadata": {"name": "c", "namespace": "ns"}})[2] == "ns"
