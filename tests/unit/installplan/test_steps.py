"""InstallPlan steps for the samples catalog's memcached-operator bundle."""

from __future__ import annotations

import json

from olm.catalog.formats import load
from olm.catalog.samples import CATALOG
from olm.installplan.steps import execution_order, plan_bundle


def bundle_objects(name: str) -> list[dict[str, object]]:
    return load(CATALOG.parent).packages["memcached-operator"].bundles[name].objects


def test_steps_list_the_csv_crd_service_account_and_rbac() -> None:
    steps = plan_bundle(bundle_objects("memcached-operator.v0.0.1"), "team-a", ("samples", "olm"))
    kinds = [s.manifest["kind"] for s in steps]
    assert kinds == [
        "ClusterServiceVersion",
        "CustomResourceDefinition",
        "ServiceAccount",
        "Role",
        "RoleBinding",
    ]
    csv, _crd, account, role, binding = (s.manifest for s in steps)
    assert csv["metadata"]["namespace"] == "team-a" and "replaces" not in csv["spec"]
    assert account["metadata"]["name"] == "memcached-operator"
    assert role["metadata"]["name"].startswith("memcached-operator.v0.0.1-memcached-operator-")
    assert len(role["metadata"]["name"]) <= 63
    assert role["metadata"]["labels"]["olm.owner"] == "memcached-operator.v0.0.1"
    assert "olm.permissions.hash" in role["metadata"]["labels"]
    assert role["metadata"]["ownerReferences"][0]["kind"] == "ClusterServiceVersion"
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "memcached-operator", "namespace": "team-a"}
    ]
    assert role["rules"] == csv["spec"]["install"]["spec"]["permissions"][0]["rules"]


def test_the_resolvers_replaces_wins_and_crds_run_first() -> None:
    steps = plan_bundle(
        bundle_objects("memcached-operator.v0.0.2"),
        "team-a",
        ("samples", "olm"),
        replaces="memcached-operator.v0.0.1",
    )
    assert steps[0].manifest["spec"]["replaces"] == "memcached-operator.v0.0.1"
    assert [s.manifest["kind"] for s in execution_order(steps)][:2] == [
        "CustomResourceDefinition",
        "ClusterServiceVersion",
    ]
    entry = steps[0].status_entry()
    assert entry["resolving"] == "memcached-operator.v0.0.2" and entry["status"] == "Unknown"
    assert entry["resource"] | {"manifest": ""} == {
        "sourceName": "samples",
        "sourceNamespace": "olm",
        "group": "operators.coreos.com",
        "version": "v1alpha1",
        "kind": "ClusterServiceVersion",
        "name": "memcached-operator.v0.0.2",
        "manifest": "",
    }
    assert (
        json.loads(entry["resource"]["manifest"])["metadata"]["name"] == "memcached-operator.v0.0.2"
    )


def test_the_same_permissions_give_the_same_names() -> None:
    first = plan_bundle(bundle_objects("memcached-operator.v0.0.1"), "ns", ("samples", "olm"))
    again = plan_bundle(bundle_objects("memcached-operator.v0.0.1"), "ns", ("samples", "olm"))
    assert [s.manifest["metadata"]["name"] for s in first] == [
        s.manifest["metadata"]["name"] for s in again
    ]


def test_generated_rbac_is_grouped_per_service_account_as_olm_lists_it() -> None:
    """OLM lists, per ServiceAccount: the account, its Roles, RoleBindings, ClusterRoles,
    ClusterRoleBindings (corpus: k8gb's two accounts, each with cluster permissions, were
    listed accounts first by olm-py, so every later step of the plan differed)."""
    from olm.installplan.steps import rbac_for

    rules = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]
    csv = {
        "metadata": {"name": "k8gb.v0.11.4"},
        "spec": {
            "install": {
                "spec": {
                    "permissions": [
                        {"serviceAccountName": "k8gb", "rules": rules},
                        {"serviceAccountName": "default", "rules": rules},
                    ],
                    "clusterPermissions": [
                        {"serviceAccountName": "coredns", "rules": rules},
                        {"serviceAccountName": "k8gb", "rules": rules},
                    ],
                }
            }
        },
    }
    listed = [
        (o["kind"], (o.get("subjects") or [{}])[0].get("name") or o["metadata"]["name"])
        for o in rbac_for(csv, "k8gb")
    ]
    assert listed == [
        ("ServiceAccount", "k8gb"),
        ("Role", listed[1][1]),
        ("RoleBinding", "k8gb"),
        ("ClusterRole", listed[3][1]),
        ("ClusterRoleBinding", "k8gb"),
        ("ServiceAccount", "coredns"),
        ("ClusterRole", listed[6][1]),
        ("ClusterRoleBinding", "coredns"),
        ("Role", listed[8][1]),  # the default account has no ServiceAccount step
        ("RoleBinding", "default"),
    ]


def test_a_bundle_secret_of_any_group_is_a_bundle_secret_step_written_as_a_core_secret() -> None:
    """OLM v0.38 lists every bundle object of kind Secret as step kind BundleSecret and writes
    it as a core v1 Secret, dropping what a Secret has not (corpus: ecr-secret-operator ships
    a custom resource of kind Secret whose `spec` its CRD requires; OLM installs, olm-py's
    plan failed writing the custom resource)."""
    from olm.installplan.stepref import step_manifest
    from olm.installplan.steps import Step

    custom = {
        "apiVersion": "ecr.mobb.redhat.com/v1alpha1",
        "kind": "Secret",
        "metadata": {"name": "ecr-secret-sample", "namespace": "team-a"},
        "spec": {"region": "us-east-2"},
    }
    core = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}}
    for manifest, group in ((custom, "ecr.mobb.redhat.com"), (core, "")):
        entry = Step("ecr-secret-operator.v0.5.0", manifest, "corpus", "olm").status_entry()
        assert (entry["resource"]["kind"], entry["resource"]["group"]) == ("BundleSecret", group)
        written = step_manifest(entry)
        assert written is not None and written["apiVersion"] == "v1"
        assert written["kind"] == "Secret" and "spec" not in written
    assert step_manifest(Step("x", core, "corpus", "olm").status_entry()) == core, (
        "a core Secret is written as it is"
    )
