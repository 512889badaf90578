"""Property: the InstallPlan decision never raises and always decides, over plans made from
corpus bundles (their CSVs, CRDs and RBAC as steps) and then broken: steps mutated or not
JSON, phases and step statuses of every kind, approvals, hand-made plans with no owner, live
objects present or absent, CRDs established or not, kinds the API server does not serve."""

from __future__ import annotations

import datetime
import functools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm.api.installplan import InstallPlanPhase, StepStatus
from olm.installplan.decide import decide
from olm.installplan.snapshot import Plan, Snapshot
from olm.installplan.stepref import step_manifest, step_ref
from olm.installplan.steps import plan_bundle
from tests.support.fuzz_corpus import FUZZ_SETTINGS, catalogs, junk, mutated

NS = "fuzz"
NOW = datetime.datetime(2026, 11, 23, 12, 0, 0, tzinfo=datetime.UTC)
OWNER = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "Subscription",
    "name": "sub",
    "uid": "uid-sub",
    "controller": False,
    "blockOwnerDeletion": False,
}
pytestmark = pytest.mark.skipif(not catalogs(), reason="needs ../shared/corpus beside the repo")


@functools.cache
def bundle_entries() -> tuple[tuple[str, tuple[dict[str, Any], ...]], ...]:
    """(CSV name, status.plan entries) for up to 12 corpus bundles."""
    found = []
    for _, catalog in catalogs():
        for package in sorted(catalog.packages.values(), key=lambda p: p.name):
            for name in sorted(package.bundles)[:3]:
                try:
                    steps = plan_bundle(package.bundles[name].objects, NS, ("cat", NS))
                except ValueError:
                    continue
                found.append((name, tuple(s.status_entry(StepStatus.UNKNOWN) for s in steps)))
    return tuple(found[:12])


phases = st.one_of(st.sampled_from([p.value for p in InstallPlanPhase]), st.just("Bogus"))
step_statuses = st.one_of(st.sampled_from([s.value for s in StepStatus]), junk)


@st.composite
def entry(draw: st.DrawFn, seed: dict[str, Any]) -> Any:
    """One status.plan entry: as planned, with another status, broken, or its manifest not
    JSON (or JSON of another shape)."""
    choice = draw(st.integers(0, 9))
    body = dict(seed)
    body["status"] = draw(step_statuses)
    if choice == 0:
        resource = dict(body.get("resource") or {})
        resource["manifest"] = draw(st.sampled_from(["{not json", "[]", "null", "", "42"]))
        body["resource"] = resource
    elif choice == 1:
        manifest = json.loads(body["resource"]["manifest"])
        body["resource"] = {
            **body["resource"],
            "manifest": json.dumps(draw(mutated(manifest, max_changes=2, wild=True))),
        }
    elif choice == 2:
        return draw(mutated(body, max_changes=2, wild=True))
    return body


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    csv_name, seeds = draw(st.sampled_from(bundle_entries()))
    plan_entries = [draw(entry(seed)) for seed in seeds]
    if draw(st.booleans()):
        plan_entries = draw(st.permutations(plan_entries))
    plan: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {"name": "install-fuzz", "namespace": NS, "uid": "uid-ip"},
        "spec": {
            "clusterServiceVersionNames": draw(
                st.one_of(st.just([csv_name]), st.lists(st.text(max_size=5), max_size=2))
            ),
            "approval": draw(st.sampled_from(["Automatic", "Manual", "Sometimes"])),
            "approved": draw(st.booleans()),  # the CRD types spec, so no junk there
            "generation": 1,
        },
    }
    if draw(st.booleans()):
        plan["metadata"]["ownerReferences"] = [OWNER]
    if draw(st.integers(0, 4)):
        plan["status"] = {
            "phase": draw(phases),
            "catalogSources": ["cat"],
            "plan": plan_entries,
            "conditions": draw(
                st.lists(st.dictionaries(st.text(max_size=4), junk, max_size=3), max_size=2)
            ),
        }
    objects: dict[Any, Any] = {}
    unserved: dict[Any, str] = {}
    for item in plan_entries:
        manifest = step_manifest(item) if isinstance(item, dict) else None
        if manifest is None:
            continue
        ref = step_ref(manifest)
        live = draw(st.integers(0, 3))
        if live == 0:
            objects[ref] = None
        elif live == 1:
            body = json.loads(json.dumps(manifest))
            body["metadata"].update(uid=f"uid-{ref[3]}", resourceVersion="5")
            if manifest.get("kind") == "CustomResourceDefinition" and draw(st.booleans()):
                body["status"] = {
                    "conditions": [
                        {"type": "Established", "status": draw(st.sampled_from(["True", "False"]))},
                        {"type": "NamesAccepted", "status": "True"},
                    ],
                    "storedVersions": draw(
                        st.lists(st.sampled_from(["v1", "v1alpha1"]), max_size=2)
                    ),
                }
            objects[ref] = body
        elif live == 2 and draw(st.integers(0, 5)) == 0:
            unserved[ref] = "the server could not find the requested resource"
    return Snapshot(
        plan=plan,
        now=NOW,
        finished=draw(st.integers(0, 9)) == 0,
        objects=objects,
        unserved=unserved,
    )


@FUZZ_SETTINGS
@given(snapshots())
def test_decide_always_decides(snapshot: Snapshot) -> None:
    plan = decide(snapshot)
    assert isinstance(plan, Plan)
    if plan.status is not None:
        assert isinstance(plan.status.get("phase", ""), str)
        json.dumps(plan.status)  # what is written must be plain data
