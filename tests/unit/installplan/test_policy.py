"""What a bundle may install: OLM's kinds by default, the admin's additions on request, and a
plan with any other kind failed before its first write."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm.installplan.decide import decide
from olm.installplan.policy import (
    OLM_INSTALLABLE_KINDS,
    InstallPolicy,
    parse_kinds,
    refusal,
    unsupported_steps,
)
from olm.installplan.snapshot import Snapshot
from olm.installplan.stepref import step_ref
from tests.unit.installplan.plans import NOW, OLD, entries, install_plan, manifest

POLICY_OBJECT = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "deny-everything"},
    "spec": {"validations": [{"expression": "false"}]},
}


def with_step(obj: dict[str, Any], status: str = "Unknown") -> list[dict[str, Any]]:
    steps = entries()
    extra = json.loads(json.dumps(steps[-1]))
    extra["resource"] = {
        "name": obj["metadata"]["name"],
        "kind": obj["kind"],
        "group": obj["apiVersion"].split("/")[0],
        "version": obj["apiVersion"].split("/")[-1],
        "sourceName": "samples",
        "sourceNamespace": "olm",
        "manifest": json.dumps(obj),
    }
    extra["status"] = status
    return [*steps, extra]


def test_olm_kinds_are_installable_by_default_and_nothing_else() -> None:
    policy = InstallPolicy()
    assert all(policy.installable(kind) for kind in OLM_INSTALLABLE_KINDS)
    for kind in ("ValidatingAdmissionPolicy", "MutatingWebhookConfiguration", "Namespace"):
        assert not policy.installable(kind)
    assert {"PrometheusRule", "ServiceMonitor", "NetworkPolicy", "Secret"} <= OLM_INSTALLABLE_KINDS
    assert "Deployment" not in OLM_INSTALLABLE_KINDS  # a CSV's install strategy makes those


def test_the_admin_adds_kinds_by_name() -> None:
    kinds = parse_kinds(["ValidatingAdmissionPolicy,ValidatingAdmissionPolicyBinding", "Namespace"])
    assert kinds == {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Namespace"}
    assert InstallPolicy(extra_kinds=kinds).installable("Namespace")
    assert parse_kinds([]) == frozenset()


@pytest.mark.parametrize("bad", ["namespace", "apps/Deployment", "Foo Bar", "-x"])
def test_a_value_that_is_not_a_kind_is_refused_with_the_flag_named(bad: str) -> None:
    with pytest.raises(ValueError, match="--allow-bundle-kind"):
        parse_kinds([bad])


def test_a_plan_with_a_kind_outside_the_list_fails_before_writing_anything() -> None:
    plan = install_plan(plan=with_step(POLICY_OBJECT))
    objects = {step_ref(manifest(e)): None for e in plan["status"]["plan"]}
    decision = decide(Snapshot(plan, NOW, objects=objects))
    assert decision.actions == ()
    assert decision.status is not None
    assert decision.status["phase"] == "Failed"
    refused = decision.status["plan"][-1]
    assert refused["status"] == "UnsupportedResource"
    assert all(e["status"] == "Unknown" for e in decision.status["plan"][:-1])
    message = decision.status["message"]
    assert "ValidatingAdmissionPolicy deny-everything" in message
    assert f"of bundle {OLD}" in message
    assert "nothing of this plan was applied" in message
    assert "--allow-bundle-kind ValidatingAdmissionPolicy" in message
    condition = next(c for c in decision.status["conditions"] if c["type"] == "Installed")
    assert (condition["status"], condition["reason"]) == ("False", "InstallComponentFailed")
    assert decision.event is not None and decision.event[1] == "InstallComponentFailed"


def test_with_the_kind_allowed_the_same_plan_installs() -> None:
    plan = install_plan(plan=with_step(POLICY_OBJECT))
    objects = {step_ref(manifest(e)): None for e in plan["status"]["plan"]}
    policy = InstallPolicy(extra_kinds=frozenset({"ValidatingAdmissionPolicy"}))
    decision = decide(Snapshot(plan, NOW, objects=objects, policy=policy))
    assert decision.status is not None and decision.status["phase"] == "Installing"
    assert decision.actions  # the CRD stage runs


def test_refusal_says_when_earlier_steps_were_written() -> None:
    steps = with_step(POLICY_OBJECT)
    steps[0]["status"] = "Created"
    manifests = [manifest(e) for e in steps]
    assert unsupported_steps(manifests, InstallPolicy()) == [len(steps) - 1]
    refused = refusal(steps, manifests, InstallPolicy())
    assert refused is not None
    marked, message = refused
    assert marked[0]["status"] == "Created" and steps[-1]["status"] == "Unknown"
    assert "steps written before this check keep their status" in message
    assert refusal(steps[:-1], manifests[:-1], InstallPolicy()) is None
