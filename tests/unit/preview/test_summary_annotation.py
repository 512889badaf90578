"""The InstallPlan controller writes a plan's preview summary once, before anything of the plan
runs, and never lets it block or fail the plan."""

from __future__ import annotations

import json
from typing import Any

from olm.api.preview import PREVIEW_SUMMARY_ANNOTATION
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from olm.preview.plan import needs_summary
from tests.unit.installplan.plans import NS, entries, install_plan, world

IP = "operators.coreos.com/v1alpha1"


def annotation(fake: FakeGateway) -> dict[str, Any] | None:
    plan = fake.get(IP, "InstallPlan", NS, "install-abc")
    value = (plan["metadata"].get("annotations") or {}).get(PREVIEW_SUMMARY_ANNOTATION)
    return json.loads(value) if value else None


def test_a_plan_waiting_for_approval_gets_its_summary_once() -> None:
    fake, _, controller = world(install_plan("RequiresApproval", approved=False))
    controller.reconcile(NS, "install-abc")
    assert annotation(fake) == {
        "flags": ["widensRBAC"],
        "granted": 3,
        "revoked": 0,
        "crdsChanged": 0,
        "deploymentsChanged": 1,
        "created": 4,
        "updated": 1,
        "deleted": 0,
    }
    assert [(w.verb, w.kind) for w in fake.take_writes()] == [("patch", "InstallPlan")]
    controller.reconcile(NS, "install-abc")
    assert fake.take_writes() == []


def test_a_refused_summary_never_blocks_the_plan() -> None:
    fake, _, controller = world(install_plan("Installing", approved=True))
    fake.fail("patch", GatewayError("forbidden", 403), kind="InstallPlan")
    controller.reconcile(NS, "install-abc")
    assert annotation(fake) is None
    assert fake.get(IP, "InstallPlan", NS, "install-abc")["status"]["phase"] == "Complete"


def test_only_plans_a_subscription_made_and_not_yet_run_are_summarised() -> None:
    assert needs_summary(install_plan("RequiresApproval", approved=False))
    assert needs_summary(install_plan("Installing"))
    assert not needs_summary(install_plan("Installing", owned=False))
    assert not needs_summary(install_plan(None))
    assert not needs_summary(install_plan("Complete"))
    started = install_plan("Installing", entries(statuses=["Created"] + ["Unknown"] * 4))
    assert not needs_summary(started)
    done = install_plan("RequiresApproval")
    done["metadata"]["annotations"] = {PREVIEW_SUMMARY_ANNOTATION: "{}"}
    assert not needs_summary(done)
