"""The preview of a whole InstallPlan (samples 0.0.1 -> 0.0.2, and crafted bundles), its
summary annotation, its JSON and its text."""

from __future__ import annotations

import copy
import json
from typing import Any

from olm.api.preview import Change, Count, Flag
from olm.installplan.stepref import step_ref
from olm.installplan.steps import plan_bundle
from olm.preview.plan import Snapshot, Upgrade, as_json, preview, replaced_csv, summary_annotation
from olm.preview.render import lines
from tests.unit.installplan.plans import (
    CRD_NAME,
    NEW,
    NS,
    OLD,
    bundle_objects,
    entries,
    established,
    install_plan,
    live,
    manifest,
)

SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}


def old_csv() -> dict[str, Any]:
    return live(next(o for o in bundle_objects(OLD) if o["kind"] == "ClusterServiceVersion"))


def crd_of(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return next(manifest(e) for e in steps if e["resource"]["kind"] == "CustomResourceDefinition")


def upgrade_snapshot(steps: list[dict[str, Any]], **changes: Any) -> Snapshot:
    """The 0.0.2 plan waiting for approval, with 0.0.1 installed (its CRD, ServiceAccount)."""
    plan = install_plan("RequiresApproval", steps, approved=False)
    present = {
        step_ref(m): live(m)
        for m in map(manifest, entries(OLD))
        if m["kind"] in ("ServiceAccount",)
    }
    present[step_ref(crd_of(entries(OLD)))] = established(crd_of(entries(OLD)))
    subscription = {"status": {"currentCSV": NEW, "installedCSV": OLD}}
    fields: dict[str, Any] = {
        "live": present,
        "installed_csvs": {OLD: old_csv()},
        "subscriptions": [subscription],
        "custom_resources": {(CRD_NAME, "v1alpha1"): []},
    }
    fields.update(changes)
    return Snapshot(plan, **fields)


def test_the_sample_upgrade_changes_the_image_and_no_rule() -> None:
    result = preview(upgrade_snapshot(entries(NEW)))
    assert result.upgrades == (Upgrade(NEW, OLD),)
    assert result.rbac.changes == () and result.rbac.unchanged == 3
    (deployment,) = result.deployments
    assert deployment.images == (
        (
            "operator",
            "olm-py.local/memcached-operator:0.0.1",
            "olm-py.local/memcached-operator:0.0.2",
        ),
    )
    (crd,) = result.crds
    assert not crd.changed and crd.problem is None
    assert result.flags == ()
    made = [(o.change, o.kind) for o in result.objects]
    assert made == [
        (Change.CREATE, "ClusterServiceVersion"),
        (Change.UPDATE, "CustomResourceDefinition"),
        (Change.UPDATE, "ServiceAccount"),
        (Change.CREATE, "Role"),
        (Change.CREATE, "RoleBinding"),
        (Change.DELETE, "ClusterServiceVersion"),
        (Change.DELETE, "Role"),
        (Change.DELETE, "RoleBinding"),
    ]
    deleted = [o for o in result.objects if o.change is Change.DELETE]
    assert deleted[0].name == OLD and NEW in deleted[0].why
    assert all(o.name.startswith(OLD) and o.why == f"with {OLD}" for o in deleted[1:])
    assert json.loads(summary_annotation(result)) == {
        "flags": [],
        "granted": 0,
        "revoked": 0,
        "crdsChanged": 0,
        "deploymentsChanged": 1,
        "created": 3,
        "updated": 2,
        "deleted": 3,
    }


def crafted(change_csv: Any = None, change_crd: Any = None) -> list[dict[str, Any]]:
    """The 0.0.2 plan's steps of a crafted bundle: the sample's CSV and CRD changed."""
    objects = copy.deepcopy(bundle_objects(NEW))
    for body in objects:
        if body["kind"] == "ClusterServiceVersion" and change_csv:
            change_csv(body)
        elif body["kind"] == "CustomResourceDefinition" and change_crd:
            change_crd(body)
    return [s.status_entry() for s in plan_bundle(objects, NS, ("samples", "olm"), OLD)]


def cluster_secrets(csv: dict[str, Any]) -> None:
    csv["spec"]["install"]["spec"]["clusterPermissions"] = [
        {"serviceAccountName": "memcached-operator", "rules": [SECRETS]}
    ]


def v1beta1_only(crd: dict[str, Any]) -> None:
    crd["spec"]["versions"][0]["name"] = "v1beta1"


def test_a_cluster_wide_secrets_rule_widens_rbac_and_is_flagged() -> None:
    result = preview(upgrade_snapshot(crafted(change_csv=cluster_secrets)))
    assert result.flags == (Flag.WIDENS_RBAC, Flag.CLUSTER_WIDE, Flag.SENSITIVE)
    (granted,) = result.rbac.granted
    assert granted.rule.resources == ("secrets",)
    assert result.counts[Count.GRANTED] == 1
    assert [o.kind for o in result.objects if o.change is Change.CREATE][-2:] == [
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    text = "\n".join(lines(result))
    assert "Summary: widens RBAC; grants cluster-wide rights; grants sensitive rights" in text
    assert (
        "! + granted  cluster-wide get, list, watch on secrets (core) [cluster-wide, sensitive, widens]"
        in text
    )
    assert json.loads(summary_annotation(result))["flags"] == [
        "widensRBAC",
        "clusterWide",
        "sensitive",
    ]


def test_a_crd_dropping_a_stored_version_in_use_is_flagged() -> None:
    objects = {(CRD_NAME, "v1alpha1"): [{"metadata": {"name": "cache-a", "namespace": NS}}]}
    result = preview(upgrade_snapshot(crafted(change_crd=v1beta1_only), custom_resources=objects))
    (crd,) = result.crds
    assert crd.versions_removed == ("v1alpha1",) and crd.removed_in_use == ("v1alpha1",)
    assert crd.problem is not None and "stored version" in crd.problem
    assert result.flags == (Flag.CRD_VERSION_REMOVED, Flag.CRD_UNSAFE)
    shown = as_json(result)["crds"][0]
    assert shown["versionsRemovedInUse"] == ["v1alpha1"] and shown["safe"] is False
    assert shown["existingObjects"] == {"v1alpha1": 1}
    text = "\n".join(lines(result))
    assert (
        "!     version removed: v1alpha1 (in use: a stored version, 1 existing object(s))" in text
    )
    assert f"!     unsafe: {crd.problem}" in text


def test_a_fresh_install_grants_everything() -> None:
    plan = install_plan("RequiresApproval", entries(OLD), approved=False)
    result = preview(Snapshot(plan))
    assert result.upgrades == (Upgrade(OLD, None),)
    assert len(result.rbac.granted) == 3 and Flag.WIDENS_RBAC in result.flags
    assert Flag.CLUSTER_WIDE not in result.flags
    assert {o.change for o in result.objects} == {Change.CREATE}
    assert result.crds[0].created


def test_the_json_is_plain_json_with_every_section() -> None:
    result = preview(upgrade_snapshot(crafted(change_csv=cluster_secrets)))
    shown = json.loads(json.dumps(as_json(result)))
    assert set(shown) == {
        "installPlan",
        "summary",
        "csvs",
        "rbac",
        "crds",
        "deployments",
        "objects",
        "notes",
    }
    assert shown["installPlan"] == {
        "name": "install-abc",
        "namespace": NS,
        "phase": "RequiresApproval",
        "approval": "Manual",
        "approved": False,
    }
    assert shown["csvs"] == [{"name": NEW, "replaces": OLD}]
    assert shown["rbac"]["rules"][0] == {
        "change": "granted",
        "csv": NEW,
        "serviceAccount": "memcached-operator",
        "scope": "Cluster",
        "rule": SECRETS,
        "flags": ["cluster-wide", "sensitive", "widens"],
    }
    image = shown["deployments"][0]["containers"][0]["fields"][0]
    assert image == {
        "field": "image",
        "from": "olm-py.local/memcached-operator:0.0.1",
        "to": "olm-py.local/memcached-operator:0.0.2",
    }


def test_which_csv_is_replaced() -> None:
    new = {"metadata": {"name": "b"}, "spec": {"replaces": "a", "skips": ["x"]}}
    installed = {"a": {}, "x": {}, "z": {}}
    moving = [{"status": {"currentCSV": "b", "installedCSV": "z"}}]
    assert replaced_csv(new, installed, moving) == "z"
    assert replaced_csv(new, installed) == "a"
    assert replaced_csv(new, {"x": {}}) == "x"
    assert replaced_csv(new, {}) is None


def test_unreadable_steps_and_run_plans_are_noted() -> None:
    steps = entries(NEW)
    steps[1] = copy.deepcopy(steps[1])
    steps[1]["resource"]["manifest"] = "not json"
    plan = install_plan("Complete", steps)
    result = preview(Snapshot(plan))
    assert any("step 1 (CustomResourceDefinition" in n for n in result.notes)
    assert any("already run (Complete)" in n for n in result.notes)
    assert preview(Snapshot(install_plan(None))).notes == (
        "the plan lists no steps yet: nothing to preview",
    )


def test_the_text_says_how_to_approve_and_what_is_unchanged() -> None:
    text = lines(preview(upgrade_snapshot(entries(NEW))))
    assert (
        text[0] == f"InstallPlan {NS}/install-abc: RequiresApproval, approval Manual (not approved)"
    )
    assert text[1] == "Summary: nothing flagged"
    assert "RBAC (0 granted, 0 revoked, 3 unchanged):" in text
    assert "  no rule granted or revoked" in text
    assert (
        "        image: olm-py.local/memcached-operator:0.0.1 -> olm-py.local/memcached-operator:0.0.2"
        in text
    )
    assert text[-1].startswith("approve: kubectl patch installplan install-abc -n team-a")
