"""`olm install` / `olm uninstall` decisions (olm.deploy.plan) on plain dicts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import olm
from olm.deploy.install import crd_objects, rendered_objects
from olm.deploy.plan import (
    IMAGE_PLACEHOLDER,
    NO_IMAGE,
    availability,
    choose_image,
    deployed_image,
    describe,
    documents,
    kept,
    leader_elected,
    leader_of,
    plan_uninstall,
    with_image,
)

KEEP = {"helm.sh/resource-policy": "keep"}


def obj(api_version: str, kind: str, name: str, namespace: str = "", **meta: Any) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, **meta}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


RENDERED = [
    obj("v1", "Namespace", "olm", annotations=KEEP),
    obj("v1", "ServiceAccount", "olm-py", "olm"),
    obj("rbac.authorization.k8s.io/v1", "ClusterRole", "olm-py"),
    obj("apps/v1", "Deployment", "olm-py", "olm"),
    obj("operators.coreos.com/v1", "OLMConfig", "cluster", annotations=KEEP),
    obj(
        "operators.coreos.com/v1",
        "OperatorGroup",
        "global-operators",
        "operators",
        annotations=KEEP,
    ),
]
CRDS = [
    {
        "metadata": {"name": "olmconfigs.operators.coreos.com"},
        "spec": {"group": "operators.coreos.com"},
    },
    {
        "metadata": {"name": "subscriptions.operators.coreos.com"},
        "spec": {"group": "operators.coreos.com"},
    },
]


def names(objects: list[dict[str, Any]]) -> list[str]:
    return [describe(o) for o in objects]


@pytest.mark.parametrize(
    ("delete_crds", "force", "remaining", "deleted", "crds", "refused"),
    [
        # The default: olm-py's own objects, newest first; namespaces, kept objects, CRDs stay.
        (
            False,
            False,
            {},
            ["Deployment olm/olm-py", "ClusterRole olm-py", "ServiceAccount olm/olm-py"],
            [],
            False,
        ),
        # --delete-crds with no users' objects: the CRDs, and the OLM objects install made.
        (
            True,
            False,
            {"subscriptions.operators.coreos.com": 0},
            [
                "OperatorGroup operators/global-operators",
                "OLMConfig cluster",
                "Deployment olm/olm-py",
                "ClusterRole olm-py",
                "ServiceAccount olm/olm-py",
            ],
            ["olmconfigs.operators.coreos.com", "subscriptions.operators.coreos.com"],
            False,
        ),
        # Users' objects exist: refused, nothing deleted.
        (True, False, {"subscriptions.operators.coreos.com": 3}, [], [], True),
        # ... unless forced.
        (
            True,
            True,
            {"subscriptions.operators.coreos.com": 3},
            [
                "OperatorGroup operators/global-operators",
                "OLMConfig cluster",
                "Deployment olm/olm-py",
                "ClusterRole olm-py",
                "ServiceAccount olm/olm-py",
            ],
            ["olmconfigs.operators.coreos.com", "subscriptions.operators.coreos.com"],
            False,
        ),
    ],
)
def test_plan_uninstall(
    delete_crds: bool,
    force: bool,
    remaining: dict[str, int],
    deleted: list[str],
    crds: list[str],
    refused: bool,
) -> None:
    plan = plan_uninstall(RENDERED, CRDS, remaining, delete_crds=delete_crds, force=force)
    assert names(plan.delete) == deleted
    assert plan.crds == crds
    assert bool(plan.refusal) is refused
    assert "Namespace olm" in names(plan.keep)  # never a namespace
    if refused:
        assert "subscriptions.operators.coreos.com (3)" in plan.refusal
        assert "--force" in plan.refusal


def deployment(generation: int = 1, observed: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": 2},
        "status": {"observedGeneration": observed, **status},
    }


AVAILABLE = [{"type": "Available", "status": "True"}]


@pytest.mark.parametrize(
    ("given", "ready", "message"),
    [
        (None, False, "not found"),
        (deployment(2, 1), False, "waiting for the deployment controller"),
        (deployment(), False, "0/2 ready, 0/2 updated"),
        (
            deployment(updatedReplicas=2, readyReplicas=1, conditions=AVAILABLE),
            False,
            "1/2 ready, 2/2 updated",
        ),
        (deployment(updatedReplicas=2, readyReplicas=2), False, "2/2 ready, 2/2 updated"),
        (
            deployment(updatedReplicas=2, readyReplicas=2, conditions=AVAILABLE),
            True,
            "2/2 ready, 2/2 updated",
        ),
    ],
)
def test_availability(given: dict[str, Any] | None, ready: bool, message: str) -> None:
    state = availability(given)
    assert (state.ready, state.message) == (ready, message)


NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)


def lease(holder: str, renewed_ago: float, duration: int = 15) -> dict[str, Any]:
    renew = (NOW - timedelta(seconds=renewed_ago)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {
        "spec": {"holderIdentity": holder, "renewTime": renew, "leaseDurationSeconds": duration}
    }


@pytest.mark.parametrize(
    ("leases", "pods", "leader"),
    [
        ([], ["a", "b"], ""),
        ([lease("a", 3)], ["a", "b"], "a"),
        ([lease("a", 30)], ["a", "b"], ""),  # expired
        ([lease("old-pod", 3)], ["a", "b"], ""),  # a pod of an earlier install
        ([{"spec": {}}], ["a"], ""),
    ],
)
def test_leader_of(leases: list[dict[str, Any]], pods: list[str], leader: str) -> None:
    assert leader_of(leases, pods, NOW) == leader


def test_the_shipped_rendering() -> None:
    objects = rendered_objects()
    assert leader_elected(objects)
    assert [o["kind"] for o in objects][:2] == ["Namespace", "Namespace"]
    assert {o["kind"] for o in objects if kept(o)} == {"Namespace", "OperatorGroup", "OLMConfig"}
    assert len(crd_objects()) == 8
    replaced = with_image(objects, "localhost/olm-py:dev")
    images = [
        c["image"]
        for o in replaced
        if o["kind"] == "Deployment"
        for c in o["spec"]["template"]["spec"]["containers"]
    ]
    assert images == ["localhost/olm-py:dev"]
    assert with_image(objects, None) is objects
    assert objects != replaced  # the original is untouched
    # The chart has no default image: the rendering carries the placeholder, never applied.
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    assert deployed_image(deployment) == f"{IMAGE_PLACEHOLDER}:{olm.__version__}"


def deployment_running(image: str) -> dict[str, Any]:
    containers = [{"name": "sidecar", "image": "other:1"}, {"name": "olm-py", "image": image}]
    return {"kind": "Deployment", "spec": {"template": {"spec": {"containers": containers}}}}


@pytest.mark.parametrize(
    ("requested", "deployed", "chosen"),
    [
        ("r.example/olm-py:1", None, "r.example/olm-py:1"),
        ("r.example/olm-py:2", "r.example/olm-py:1", "r.example/olm-py:2"),  # an upgrade
        (None, "r.example/olm-py:1", "r.example/olm-py:1"),  # a repair keeps the image
        ("", "r.example/olm-py:1", "r.example/olm-py:1"),
        (None, None, None),  # the first install names one
        (None, f"{IMAGE_PLACEHOLDER}:0.1.0", None),  # never the rendering's stand-in
    ],
)
def test_the_image_olm_install_runs(
    requested: str | None, deployed: str | None, chosen: str | None
) -> None:
    running = deployed_image(deployment_running(deployed) if deployed else None)
    assert choose_image(requested, running) == chosen


def test_without_an_image_olm_install_says_how_to_get_one() -> None:
    assert "--image" in NO_IMAGE and "make release REGISTRY=" in NO_IMAGE
    assert deployed_image({"kind": "Deployment"}) is None


def test_documents_skip_empty_ones() -> None:
    assert documents("---\n# only a comment\n---\na: 1\n---\n") == [{"a": 1}]
