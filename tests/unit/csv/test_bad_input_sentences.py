"""Issue 14's library errors as sentences: a registry answer that is not protobuf, a Deployment
spec with a StatefulSet's fields (refused field by field, in no fixed order, by server-side
apply), and an InstallPlan step whose status is not a string."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from olm.csv.phase import RETRY_FAILED_INSTALL_AFTER, decide
from olm.install.deployments import refusal_message
from olm.install.strategy import InvalidStrategy, parse_strategy
from olm.installplan.decide import decide as decide_plan
from olm.installplan.snapshot import Snapshot
from olm.registry import registry_pb2 as pb
from olm.registry.client import UnreadableAnswer, _decode
from tests.unit.csv.world import NOW, csv, world

UNDECLARED = (
    "PATCH /apis/apps/v1/namespaces/n/deployments/op failed (500): failed to create typed patch "
    "object (n/op; apps/v1, Kind=Deployment): .spec.volumeClaimTemplates: field not declared in "
    "schema"
)


def test_a_registry_answer_that_is_not_protobuf_is_unreadable_not_a_traceback() -> None:
    with pytest.raises(UnreadableAnswer, match=r"ListBundles is not a valid api\.Bundle"):
        _decode(pb.Bundle, b"\xff\xff\xff\xff\x0f not protobuf", "ListBundles")
    assert _decode(pb.PackageName, pb.PackageName(name="p").SerializeToString(), "x").name == "p"


def test_an_undeclared_deployment_field_names_the_csv_field_and_the_fix() -> None:
    message = refusal_message(1, {"metadata": {"name": "op"}}, UNDECLARED, 500)
    assert message == (
        "install strategy failed: the API server refused Deployment op "
        "(spec.install.spec.deployments[1]): spec.install.spec.deployments[1].spec."
        "volumeClaimTemplates is not a field of a Deployment. Remove it from the "
        "ClusterServiceVersion, or move it where it belongs in the Deployment spec."
    )


def statefulset_csv() -> dict[str, Any]:
    body = csv()
    spec = body["spec"]["install"]["spec"]["deployments"][0]["spec"]
    spec.update(serviceName="db", volumeClaimTemplates=[{"metadata": {"name": "data"}}])
    return body


def test_a_statefulset_spec_is_an_invalid_strategy_naming_every_foreign_field() -> None:
    with pytest.raises(InvalidStrategy) as raised:
        parse_strategy(statefulset_csv())
    message = str(raised.value)
    assert message.startswith(
        "spec.install.spec.deployments[0].spec.serviceName, "
        "spec.install.spec.deployments[0].spec.volumeClaimTemplates: not a field of a "
        "Deployment spec"
    )
    plan = decide(world(statefulset_csv()))
    assert plan.status is not None and plan.status["reason"] in (
        "RequirementsUnknown",
        "InvalidInstallStrategy",
    )


def test_a_refusal_whose_words_changed_is_not_retried_at_once() -> None:
    """The retry counts from the last refusal written, not the first failure: a refusal
    that names a different field each time must not become a write loop."""
    first = (NOW - datetime.timedelta(seconds=10 * RETRY_FAILED_INSTALL_AFTER)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )
    failed = csv(phase="Failed", reason="InstallComponentFailed")
    failed["status"].update(
        lastTransitionTime=first, lastUpdateTime=NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    plan = decide(world(failed))
    assert plan.status is None and not plan.apply
    assert plan.requeue_after is not None and plan.requeue_after > 0


@pytest.mark.parametrize("status", [["Created"], {"a": 1}, 7, None])
def test_a_step_status_of_any_json_type_is_not_done(status: Any) -> None:
    entry = {
        "resolving": "x",
        "status": status,
        "resource": {
            "name": "sa",
            "kind": "ServiceAccount",
            "version": "v1",
            "group": "",
            "manifest": '{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}',
        },
    }
    plan = {
        "metadata": {"name": "ip", "namespace": "ns", "uid": "u"},
        "spec": {"approved": True, "clusterServiceVersionNames": ["x"]},
        "status": {"phase": "Installing", "plan": [entry]},
    }
    decide_plan(Snapshot(plan=plan, now=NOW))  # no exception
