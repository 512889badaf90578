"""Who may install what (the tenancy opt-in): a tenant namespace's plan asking for cluster-wide,
wildcard or escalating RBAC fails before its first write with every rule named; admin
namespaces are exempt; a scoped group's ServiceAccount is checked for every right first."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from olm.controllers.installplan import InstallPlanController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store
from olm.installplan.decide import decide
from olm.installplan.policy import InstallPolicy
from olm.installplan.snapshot import Snapshot
from olm.installplan.stepref import step_ref
from olm.installplan.steps import plan_bundle
from olm.installplan.tenancy import (
    MAX_RIGHTS,
    Right,
    lacking_message,
    needed_rights,
    offending_rules,
    parse_namespaces,
    tenant_refusal,
)
from olm.kube.fake import FakeGateway
from tests.unit.installplan.plans import (
    NOW,
    NS,
    OLD,
    bundle_objects,
    entries,
    established,
    install_plan,
    manifest,
    sync,
)

ADMINS = frozenset({"olm", "platform"})
SECRETS_RULE = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"]}
CSV_PATH = f"ClusterServiceVersion {OLD} spec.install.spec."
REF = {"apiVersion": "v1", "kind": "ServiceAccount", "namespace": NS, "name": "installer"}
USER = f"system:serviceaccount:{NS}:installer"


def group(targets: list[str] | None = None, sa: str = "") -> dict[str, Any]:
    status: dict[str, Any] = {"namespaces": targets if targets is not None else [NS]}
    if sa:
        status["serviceAccountRef"] = {**REF, "name": sa}
    return {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": "og", "namespace": NS},
        "spec": {"serviceAccountName": sa} if sa else {},
        "status": status,
    }


def plan_entries(
    cluster_rules: list[dict[str, Any]] | None = None,
    extra_rules: list[dict[str, Any]] | None = None,
    extra_objects: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """status.plan of the samples' 0.0.1, its CSV given cluster rules and/or more rules."""
    objects = copy.deepcopy(bundle_objects(OLD))
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    install = csv["spec"]["install"]["spec"]
    if cluster_rules:
        install["clusterPermissions"] = [
            {"serviceAccountName": "memcached-operator", "rules": cluster_rules}
        ]
    if extra_rules:
        install["permissions"][0]["rules"] += extra_rules
    steps = plan_bundle([*objects, *(extra_objects or [])], NS, ("samples", "olm"), "")
    return [step.status_entry() for step in steps]


def manifests_of(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [manifest(e) for e in steps]


def test_admin_namespaces_are_named_by_the_flag() -> None:
    assert parse_namespaces(["olm,platform", "team-x", ""]) == {"olm", "platform", "team-x"}
    for bad in ("Olm", "a_b", "-x", "x" * 64):
        with pytest.raises(ValueError, match="--admin-namespaces"):
            parse_namespaces([bad])


def test_a_cluster_permission_is_named_by_its_field_once() -> None:
    steps = plan_entries(cluster_rules=[{**SECRETS_RULE, "verbs": ["watch"]}, SECRETS_RULE])
    kinds = [manifest(e)["kind"] for e in steps]
    assert "ClusterRole" in kinds and "ClusterRoleBinding" in kinds  # generated from it
    found = offending_rules(NS, manifests_of(steps), [group()])
    assert found == [
        f"{CSV_PATH}clusterPermissions[0].rules[0]: cluster-wide watch on secrets",
        f"{CSV_PATH}clusterPermissions[0].rules[1]: cluster-wide get,list on secrets",
    ]


def test_the_unmodified_sample_asks_nothing_a_tenant_may_not_give() -> None:
    assert offending_rules(NS, manifests_of(entries()), [group()]) == []
    assert tenant_refusal(NS, manifests_of(entries()), [group()], ADMINS) is None


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        ([""], "cluster-wide (OperatorGroup og targets all namespaces) get,list,watch on pods"),
        ([NS, "team-b"], "in namespaces team-b (OperatorGroup og targets them) get,list,watch"),
    ],
)
def test_permissions_reaching_beyond_the_namespace_are_refused(
    targets: list[str], expected: str
) -> None:
    found = offending_rules(NS, manifests_of(entries()), [group(targets)])
    assert f"{CSV_PATH}permissions[0].rules[0]: {expected}" in "\n".join(found)
    assert len(found) == 3  # every rule of the CSV's permissions


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ({"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]}, "wildcard verb"),
        ({"apiGroups": [""], "resources": ["*"], "verbs": ["get"]}, "get on * with a wildcard"),
        ({"apiGroups": [""], "resources": ["pods/*"], "verbs": ["get"]}, "wildcard resource"),
        (
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["bind"]},
            "bind on roles.rbac.authorization.k8s.io with the verb bind",
        ),
        ({"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"]}, "impersonate"),
        ({"apiGroups": [""], "resources": ["roles"], "verbs": ["escalate"]}, "verb escalate"),
    ],
)
def test_wildcards_and_escalating_verbs_are_refused_even_in_the_namespace(
    rule: dict[str, Any], expected: str
) -> None:
    found = offending_rules(NS, manifests_of(plan_entries(extra_rules=[rule])), [group()])
    assert len(found) == 1
    assert found[0].startswith(f"{CSV_PATH}permissions[0].rules[3]: ")
    assert expected in found[0]


def test_rbac_the_bundle_ships_itself_is_named_by_its_step() -> None:
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader"},
        "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "ServiceAccount", "name": "x", "namespace": NS}],
    }
    steps = plan_entries(extra_objects=[role, binding])
    found = "\n".join(offending_rules(NS, manifests_of(steps), [group()]))
    assert "ClusterRole reader (status.plan[" in found
    assert "rules[0]: cluster-wide get on non-resource URLs /metrics" in found
    assert "): binds ClusterRole view cluster-wide" in found


def test_admin_namespaces_are_exempt_and_the_check_is_off_by_default() -> None:
    manifests = manifests_of(plan_entries(cluster_rules=[SECRETS_RULE]))
    assert tenant_refusal("platform", manifests, [group()], ADMINS) is None
    assert tenant_refusal(NS, manifests, [group()], frozenset()) is None
    message = tenant_refusal(NS, manifests, [group()], ADMINS)
    assert message is not None
    assert f"namespace {NS} is not an admin namespace (--admin-namespaces olm,platform)" in message
    assert "Install the operator from an admin namespace" in message
    assert f"add {NS} to olm run --admin-namespaces (chart value adminNamespaces)" in message
    assert "delete this InstallPlan so that the Subscription makes a new one" in message


def _objects(steps: list[dict[str, Any]]) -> dict[Any, Any]:
    return {step_ref(manifest(e)): None for e in steps}


def test_a_tenant_plan_asking_too_much_fails_before_writing_anything() -> None:
    steps = plan_entries(cluster_rules=[SECRETS_RULE])
    plan = install_plan(plan=steps)
    policy = InstallPolicy(admin_namespaces=ADMINS)
    decision = decide(
        Snapshot(plan, NOW, objects=_objects(steps), groups=(group(),), policy=policy)
    )
    assert decision.actions == ()
    assert decision.status is not None and decision.status["phase"] == "Failed"
    assert (
        f"{CSV_PATH}clusterPermissions[0].rules[0]: cluster-wide get,list on secrets"
        in decision.status["message"]
    )
    condition = next(c for c in decision.status["conditions"] if c["type"] == "Installed")
    assert (condition["status"], condition["reason"]) == ("False", "InstallComponentFailed")
    assert decision.event is not None and decision.event[1] == "InstallComponentFailed"
    # Off (the default): OLM's behaviour, it installs.
    default = decide(Snapshot(plan, NOW, objects=_objects(steps), groups=(group(),)))
    assert default.status is not None and default.status["phase"] == "Installing"
    assert default.actions


def test_needed_rights_are_deduplicated_scoped_and_bounded() -> None:
    manifests = manifests_of(plan_entries(cluster_rules=[SECRETS_RULE]))
    rights = needed_rights(NS, manifests, [group(sa="installer")])
    assert len(rights) == len(set(rights))
    assert Right("create", "operators.coreos.com", "clusterserviceversions", NS) in rights
    assert Right("create", "rbac.authorization.k8s.io", "clusterroles") in rights
    assert Right("get", "", "secrets") in rights  # clusterPermissions: at the cluster scope
    assert Right("watch", "", "pods", NS) in rights
    assert not any(r.resource == "customresourcedefinitions" for r in rights)  # olm-py writes
    everywhere = needed_rights(NS, manifests, [group([""], sa="installer")])
    assert Right("watch", "", "pods") in everywhere  # all namespaces: lifted to the cluster
    done = [True] * len(manifests)
    assert not any(
        r.verb == "create" and r.resource == "roles"
        for r in needed_rights(NS, manifests, [group()], done)
    )
    many = [
        {"apiGroups": [""], "resources": [f"r{i}" for i in range(100)], "verbs": ["a", "b", "c"]}
    ]
    assert (
        len(needed_rights(NS, manifests_of(plan_entries(extra_rules=many)), [group()]))
        == MAX_RIGHTS
    )


def test_what_the_service_account_lacks_is_listed_at_once() -> None:
    lacking = [
        Right("get", "", "secrets"),
        Right("list", "", "secrets"),
        Right("create", "apps", "deployments", NS),
    ]
    message = lacking_message(lacking, REF, "og")
    assert message.startswith("retrying execution due to error: ")
    assert f"ServiceAccount {NS}/installer (spec.serviceAccountName of OperatorGroup og)" in message
    assert "get,list on secrets at the cluster scope" in message
    assert f"create on deployments.apps in namespace {NS}" in message
    assert f"--serviceaccount={NS}:installer" in message


def test_a_scoped_plan_stays_installing_while_its_account_lacks_rights() -> None:
    steps = entries()
    plan = install_plan(plan=steps)
    groups = (group(sa="installer"),)
    policy = InstallPolicy(admin_namespaces=ADMINS)
    access = {
        Right("watch", "", "pods", NS): False,
        Right("create", "apps", "deployments", NS): True,
    }
    snapshot = Snapshot(
        plan, NOW, objects=_objects(steps), groups=groups, policy=policy, access=access
    )
    decision = decide(snapshot)
    assert decision.actions == ()
    assert decision.status is not None and decision.status["phase"] == "Installing"
    assert f"watch on pods in namespace {NS}" in decision.status["message"]
    assert "deployments" not in decision.status["message"]
    assert decision.status["attenuatedServiceAccountRef"]["name"] == "installer"
    assert decision.requeue_after and decision.event is not None
    granted = Snapshot(
        plan,
        NOW,
        objects=_objects(steps),
        groups=groups,
        policy=policy,
        access=dict.fromkeys(access, True),
    )
    assert decide(granted).actions


class ReviewingGateway(FakeGateway):
    """The fake API server, answering SubjectAccessReviews from a set of allowed rights."""

    def __init__(self, allowed: set[tuple[str, str]]) -> None:
        super().__init__()
        self.allowed = allowed  # (verb, resource)
        self.reviews: list[dict[str, Any]] = []

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        if obj["kind"] != "SubjectAccessReview":
            return super().create(obj)
        self.reviews.append(obj["spec"])
        attributes = obj["spec"]["resourceAttributes"]
        allowed = (attributes["verb"], attributes["resource"]) in self.allowed
        return {**obj, "status": {"allowed": allowed}}


def test_the_controller_asks_each_right_once_as_the_service_account() -> None:
    fake = ReviewingGateway({("create", "clusterserviceversions")})
    fake.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    fake.put(established(manifest(entries()[1])))
    fake.put(install_plan())
    store = Store()
    sync(store, fake)
    store.upsert("operatorgroup", group(sa="installer"))
    policy = InstallPolicy(admin_namespaces=frozenset({NS}))  # admin: only the SA is checked
    controller = InstallPlanController(store, fake, WorkQueue(), policy)
    assert controller.reconcile(NS, "install-abc") is not None
    assert {r["user"] for r in fake.reviews} == {USER}
    asked = [json.dumps(r, sort_keys=True) for r in fake.reviews]
    assert len(asked) == len(set(asked))  # one review per right in the reconcile
    plan = fake.get("operators.coreos.com/v1alpha1", "InstallPlan", NS, "install-abc")
    assert plan["status"]["phase"] == "Installing"
    assert f"create on serviceaccounts in namespace {NS}" in plan["status"]["message"]
    assert "clusterserviceversions" not in plan["status"]["message"]
    assert not [w for w in fake.take_writes() if w.kind in ("ClusterServiceVersion", "Role")]
