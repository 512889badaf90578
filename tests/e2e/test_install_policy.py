"""What a bundle may install (issue 25): a bundle that ships a kind OLM does not install (here a
ValidatingAdmissionPolicy) fails its InstallPlan with the kind and the bundle named, and nothing
of it is created; once the admin allows the kind (`olm run --allow-bundle-kind`), the same
Subscription installs it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import exists, subscribed_to_first_bundle, wait_phase
from tests.support.subscriptions import plan_for, subscription
from tests.support.widgets import admission_policy

pytestmark = pytest.mark.e2e

V1 = "memcached-operator.v0.0.1"
INSTALL_PLAN = "installplan.operators.coreos.com"
POLICY = "validatingadmissionpolicies.admissionregistration.k8s.io"


def test_a_bundle_with_a_kind_olm_does_not_install_fails_until_the_admin_allows_it(
    control_plane: ControlPlane, restore_olm: OlmOperator, namespace: str, tmp_path: Path
) -> None:
    plane = control_plane
    policy_name = f"olm-py-test-{namespace}"
    policy = (admission_policy(policy_name),)
    try:
        with subscribed_to_first_bundle(plane, namespace, tmp_path, policy):
            # kubectl get installplan: Failed, the step UnsupportedResource, the kind named.
            plan = plan_for(plane, namespace, V1)
            name = plan["metadata"]["name"]

            def failed() -> dict[str, Any] | None:
                status = plane.get_json(INSTALL_PLAN, name, "-n", namespace).get("status") or {}
                return status if status.get("phase") == "Failed" else None

            status = wait_for(failed, timeout=STEP_TIMEOUT, what="the plan to fail")
            refused = [s for s in status["plan"] if s["status"] == "UnsupportedResource"]
            assert [s["resource"]["kind"] for s in refused] == ["ValidatingAdmissionPolicy"]
            assert f"ValidatingAdmissionPolicy {policy_name} of bundle {V1}" in status["message"]
            assert "--allow-bundle-kind ValidatingAdmissionPolicy" in status["message"]
            assert "nothing of this plan was applied" in status["message"]
            installed = next(c for c in status["conditions"] if c["type"] == "Installed")
            assert installed["reason"] == "InstallComponentFailed"
            # Nothing of the bundle exists: no CSV, no ServiceAccount, no admission policy.
            assert not exists(plane, "csv", V1, "-n", namespace)
            assert not exists(plane, "serviceaccount", "memcached-operator", "-n", namespace)
            assert not exists(plane, POLICY, policy_name)
            # The Subscription says why, as for any failed plan.
            wait_for(
                lambda: any(
                    c["type"] == "InstallPlanFailed" and policy_name in c.get("message", "")
                    for c in subscription(plane, namespace)["status"].get("conditions") or []
                ),
                timeout=STEP_TIMEOUT,
                what="InstallPlanFailed on the Subscription",
            )

            # The admin allows the kind; the failed plan is deleted, as its message says.
            restore_olm.restart("--allow-bundle-kind=ValidatingAdmissionPolicy")
            plane.kubectl("delete", INSTALL_PLAN, name, "-n", namespace)
            wait_phase(plane, namespace, V1, "Succeeded/InstallSucceeded")
            created = plane.get_json(POLICY, policy_name)
            assert created["metadata"]["labels"]["olm.managed"] == "true"
            assert json.dumps(created["spec"]["validations"]) == json.dumps(
                admission_policy(policy_name)["spec"]["validations"]
            )
    finally:
        plane.kubectl("delete", POLICY, policy_name, "--ignore-not-found")
