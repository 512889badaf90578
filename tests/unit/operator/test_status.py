"""OLM's Operator controller as a decision: when an Operator is created, and its
status.components (selector, references, conditions, order)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.operator import component
from olm.operator.status import Component, conditions, decide_operator, reference
from tests.unit.operator.objects import CSV_NAME, KEY, MANAGED, NS, csv, obj, plan, subscription

NAME = f"memcached-operator.{NS}"
SELECTOR = {"matchExpressions": [{"key": KEY, "operator": "Exists"}]}


def comps(*objs: dict[str, Any]) -> list[Component]:
    return [Component(component(o["kind"]), o) for o in objs]


def labelled(o: dict[str, Any], key: str = KEY) -> dict[str, Any]:
    return {**o, "metadata": {**o["metadata"], "labels": {**o["metadata"]["labels"], key: ""}}}


def operator(status: dict[str, Any] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "Operator",
        "metadata": {"name": NAME, "resourceVersion": "7"},
        "spec": {},
    }
    if status is not None:
        body["status"] = status
    return body


def test_nothing_is_created_without_components() -> None:
    assert decide_operator(NAME, None, []) == decide_operator(NAME, None, comps(csv()))
    assert decide_operator(NAME, None, []).create is None


def test_the_first_component_creates_the_operator_with_its_status() -> None:
    decision = decide_operator(NAME, None, comps(labelled(subscription())))
    assert decision.create == {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "Operator",
        "metadata": {"name": NAME},
        "spec": {},
    }
    assert decision.status is not None
    components = decision.status["components"]
    assert components["labelSelector"] == SELECTOR
    assert [r["kind"] for r in components["refs"]] == ["Subscription"]


def test_refs_are_sorted_by_kind_api_version_namespace_name() -> None:
    rbac = "rbac.authorization.k8s.io/v1"
    objs = [
        labelled(obj(rbac, "Role", "b", labels=MANAGED)),
        labelled(obj(rbac, "Role", "a", labels=MANAGED)),
        labelled(obj(rbac, "Role", "a", namespace="aa", labels=MANAGED)),
        labelled(obj("apps/v1", "Deployment", "op", labels=MANAGED)),
        labelled(obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "c", "", MANAGED)),
        labelled(csv()),
        labelled(plan("install-2")),
    ]
    status = decide_operator(NAME, operator(), comps(*objs)).status
    assert status is not None
    refs = [(r["kind"], r.get("namespace", ""), r["name"]) for r in status["components"]["refs"]]
    assert refs == [
        ("ClusterServiceVersion", NS, CSV_NAME),
        ("CustomResourceDefinition", "", "c"),
        ("Deployment", NS, "op"),
        ("InstallPlan", NS, "install-2"),
        ("Role", "aa", "a"),
        ("Role", NS, "a"),
        ("Role", NS, "b"),
    ]


def test_a_csv_has_one_condition_made_from_its_phase() -> None:
    assert conditions(component("ClusterServiceVersion"), csv()) == [
        {
            "type": "Succeeded",
            "status": "True",
            "reason": "InstallSucceeded",
            "message": "install strategy completed with no errors",
            "lastUpdateTime": "2026-01-01T00:00:02Z",
            "lastTransitionTime": "2026-01-01T00:00:01Z",
        }
    ]


def test_other_conditions_are_cut_to_olms_fields() -> None:
    deployment = obj(
        "apps/v1",
        "Deployment",
        "op",
        labels=MANAGED,
        status={
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "lastUpdateTime": "2026-01-01T00:00:02.123456Z",
                    "lastTransitionTime": "2026-01-01T01:00:00+01:00",
                    "reason": "MinimumReplicasAvailable",
                    "message": "",
                    "observedGeneration": 3,
                    "lastHeartbeatTime": "2026-01-01T00:00:02Z",
                }
            ]
        },
    )
    assert reference(component("Deployment"), deployment) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "op",
        "namespace": NS,
        "conditions": [
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "lastUpdateTime": "2026-01-01T00:00:02Z",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ],
    }


def test_metadata_only_and_condition_less_objects_have_no_conditions() -> None:
    role = obj("rbac.authorization.k8s.io/v1", "Role", "r", labels=MANAGED)
    assert "conditions" not in reference(component("Role"), role)
    crd = obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", "c", "")
    assert "namespace" not in reference(component("CustomResourceDefinition"), crd)


@pytest.mark.parametrize(
    "hidden",
    [
        obj("v1", "ServiceAccount", "sa"),  # not olm.managed: OLM's cache does not have it
        obj("apps/v1", "Deployment", "d", labels={"olm.managed": "false"}),
        obj(
            "operators.coreos.com/v1alpha1",
            "ClusterServiceVersion",
            "copy",
            labels={"olm.copiedFrom": "other"},
        ),
    ],
)
def test_objects_olms_cache_does_not_hold_are_not_components(hidden: dict[str, Any]) -> None:
    assert decide_operator(NAME, None, comps(labelled(hidden))).create is None


def test_an_unchanged_status_is_not_written_and_a_changed_one_is() -> None:
    components = comps(labelled(subscription()))
    first = decide_operator(NAME, operator(), components)
    assert first.status is not None and first.resource_version == "7"
    stored = {"components": {k: v for k, v in first.status["components"].items() if v}}
    assert decide_operator(NAME, operator(stored), components).status is None
    # the last component loses its label: refs are removed (null in the merge patch)
    emptied = decide_operator(NAME, operator(stored), []).status
    assert emptied == {"components": {"labelSelector": SELECTOR, "refs": None}}


def test_an_existing_operator_is_never_deleted_and_a_user_made_one_gets_its_selector() -> None:
    decision = decide_operator("o-abc", operator() | {"metadata": {"name": "o-abc"}}, [])
    assert decision.create is None
    assert decision.status == {
        "components": {
            "labelSelector": {
                "matchExpressions": [{"key": "operators.coreos.com/o-abc", "operator": "Exists"}]
            },
            "refs": None,
        }
    }


def test_an_invalid_operator_name_is_not_created_and_says_why() -> None:
    key = "operators.coreos.com/My_Operator.ns"
    decision = decide_operator("My_Operator.ns", None, comps(labelled(subscription(), key)))
    assert decision.create is None and decision.status is None
    assert decision.problem is not None and "object name" in decision.problem


def test_a_long_name_uses_the_cut_key() -> None:
    name = "p" * 70 + ".ns"
    cut = "operators.coreos.com/" + "p" * 63
    decision = decide_operator(name, operator(), comps(labelled(subscription(), cut)))
    assert decision.status is not None
    assert decision.status["components"]["labelSelector"]["matchExpressions"][0]["key"] == cut
    assert len(decision.status["components"]["refs"]) == 1
