"""`olm explain` on plain data: each stuck state names its cause and the command that fixes
it; healthy objects say so."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.kinds import Kind
from olm.explain.chain import explain
from olm.explain.model import Explanation, Snapshot, Verdict
from olm.resolution.model import Candidate, Source, Wanted
from olm.resolution.resolver import Resolver
from tests.unit.explain.objects import (
    CRD,
    NEW,
    NS,
    OLD,
    catalog,
    condition,
    crd,
    csv,
    group,
    package_manifest,
    plan,
    sub,
)


def snapshot(**objects: Any) -> Snapshot:
    base: dict[str, Any] = {
        "subscriptions": [sub()],
        "install_plans": [plan()],
        "csvs": [csv()],
        "operator_groups": [group()],
        "catalog_sources": [catalog()],
        "crds": [crd()],
    }
    base.update(objects)
    if "cluster_csvs" not in objects:
        base["cluster_csvs"] = base["csvs"]
    return Snapshot(NS, **base)


def run(snap: Snapshot, kind: Kind, name: str) -> Explanation:
    found = explain(snap, kind, name)
    assert found is not None
    return found


def commands(explanation: Explanation) -> list[str]:
    return [fix.command for fix in explanation.fixes if fix.command]


def chain(explanation: Explanation) -> list[tuple[str, str]]:
    return [(link.kind, link.name) for link in explanation.links]


# ----- healthy ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (Kind.SUBSCRIPTION, "memcached"),
        (Kind.CLUSTER_SERVICE_VERSION, NEW),
        (Kind.INSTALL_PLAN, "install-abcde"),
        (Kind.OPERATOR_GROUP, "og"),
    ],
)
def test_a_working_install_is_healthy(kind: Kind, name: str) -> None:
    found = run(snapshot(), kind, name)
    assert found.verdict is Verdict.HEALTHY and found.fixes == ()


def test_a_ready_catalog_is_healthy() -> None:
    snap = snapshot(catalog_sources=[catalog(namespace=NS)])
    assert run(snap, Kind.CATALOG_SOURCE, "samples").healthy


def test_an_object_not_in_the_snapshot_is_none() -> None:
    assert explain(snapshot(), Kind.SUBSCRIPTION, "nope") is None


# ----- 1. Manual approval pending ------------------------------------------------------------


def test_manual_approval_pending_names_the_plan_and_the_approve_command() -> None:
    waiting = plan(phase="RequiresApproval", csvs=(OLD,))
    snap = snapshot(
        subscriptions=[sub(state="UpgradePending", current=OLD, installedCSV="")],
        install_plans=[waiting],
        csvs=[],
    )
    found = run(snap, Kind.SUBSCRIPTION, "memcached")
    assert found.verdict is Verdict.PROBLEM
    assert chain(found) == [("Subscription", "memcached"), ("InstallPlan", "install-abcde")]
    assert found.links[0].state == "UpgradePending"
    assert "waits for a person to approve it" in found.cause and "Manual" in found.cause
    assert commands(found) == [
        f"kubectl patch installplan install-abcde -n {NS} --type=merge "
        """-p '{"spec":{"approved":true}}'"""
    ]


def test_approving_a_shared_plan_says_what_else_it_installs() -> None:
    waiting = plan(phase="RequiresApproval", csvs=(OLD, "dashboard.v1"), owners=("a", "b"))
    found = run(snapshot(install_plans=[waiting]), Kind.INSTALL_PLAN, "install-abcde")
    assert "approving it installs all of them, for Subscriptions a, b" in found.links[0].says


def test_an_upgrade_waiting_for_approval_beside_a_working_csv() -> None:
    snap = snapshot(
        subscriptions=[sub(state="UpgradePending", current=NEW, installedCSV=OLD)],
        install_plans=[plan(phase="RequiresApproval")],
        csvs=[csv(OLD)],
    )
    found = run(snap, Kind.SUBSCRIPTION, "memcached")
    assert found.links[-1].kind == "InstallPlan" and "approved" in commands(found)[0]


# ----- 2. missing CRD --------------------------------------------------------------------------


WIDGETS = "widgets.example.com"
NOT_PRESENT = {
    "group": "apiextensions.k8s.io",
    "version": "v1",
    "kind": "CustomResourceDefinition",
    "name": WIDGETS,
    "status": "NotPresent",
    "message": "CRD is not present",
}


def pending_on_widgets(**extra: Any) -> dict[str, Any]:
    return csv(
        NEW,
        phase="Pending",
        reason="RequirementsNotMet",
        message=f"one or more requirements couldn't be found: CustomResourceDefinition {WIDGETS}: CRD is not present",
        requires=(WIDGETS,),
        requirementStatus=[NOT_PRESENT],
        **extra,
    )


def test_a_csv_pending_on_a_crd_no_installed_csv_owns() -> None:
    snap = snapshot(csvs=[pending_on_widgets()])
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert chain(found) == [("ClusterServiceVersion", NEW), ("CustomResourceDefinition", WIDGETS)]
    assert found.links[0].state == "Pending/RequirementsNotMet"
    assert "owned by no installed CSV" in found.links[1].says
    assert f"requires CRD {WIDGETS}, which no installed CSV owns" in found.cause
    assert f"kubectl get packagemanifests -n {NS}" in commands(found)
    assert any(f"CustomResourceDefinition {WIDGETS}" in c for c in commands(found))


def test_a_missing_crd_a_catalog_package_owns_is_installed_by_subscribing() -> None:
    owner = package_manifest(
        "widgets", "samples", owns=({"name": WIDGETS, "version": "v1", "kind": "Widget"},)
    )
    snap = snapshot(csvs=[pending_on_widgets()], package_manifests=[owner])
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, NEW)
    first = found.fixes[0]
    assert "install package widgets (channel stable) from CatalogSource olm/samples" in first.what
    assert first.command.startswith("echo ") and first.command.endswith(
        f"kubectl apply -n {NS} -f -"
    )
    assert '"source":"samples"' in first.command


def test_a_missing_crd_owned_by_a_failed_csv_follows_that_csv() -> None:
    owner = csv("widgets.v1", "other", phase="Failed", reason="NoOperatorGroup", owns=(WIDGETS,))
    snap = snapshot(csvs=[pending_on_widgets()], cluster_csvs=[pending_on_widgets(), owner])
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert chain(found) == [
        ("ClusterServiceVersion", NEW),
        ("CustomResourceDefinition", WIDGETS),
        ("ClusterServiceVersion", "widgets.v1"),
        ("Namespace", "other"),
    ]
    assert "namespace other has no OperatorGroup" in found.cause
    assert '"targetNamespaces":["other"]' in commands(found)[0]


def test_a_hand_applied_csv_whose_own_crd_is_missing() -> None:
    entry = {**NOT_PRESENT, "name": CRD}
    pending = csv(NEW, phase="Pending", reason="RequirementsNotMet", requirementStatus=[entry])
    found = run(snapshot(csvs=[pending], crds=[]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert "a CSV applied by hand brings no CRDs" in found.cause
    assert found.links[1].state == "missing"


def test_a_missing_service_account_and_unsatisfied_rules() -> None:
    missing = {
        "kind": "ServiceAccount",
        "name": "op",
        "status": "NotPresent",
        "group": "",
        "version": "v1",
    }
    pending = csv(NEW, phase="Pending", reason="RequirementsNotMet", requirementStatus=[missing])
    found = run(snapshot(csvs=[pending]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert commands(found) == [f"kubectl create serviceaccount op -n {NS}"]
    rule = '{"apiGroups":["apps"],"resources":["deployments"],"verbs":["get","list"]}'
    unsatisfied = {
        **missing,
        "status": "PresentNotSatisfied",
        "dependents": [{"status": "NotSatisfied", "message": f"namespaced rule:{rule}"}],
    }
    pending = csv(
        NEW, phase="Pending", reason="RequirementsNotMet", requirementStatus=[unsatisfied]
    )
    found = run(snapshot(csvs=[pending]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert commands(found) == [
        f"kubectl create role op-explain --verb=get,list --resource=deployments.apps -n {NS} "
        f"&& kubectl create rolebinding op-explain --role=op-explain --serviceaccount={NS}:op -n {NS}"
    ]


# ----- 3. missing catalog --------------------------------------------------------------------


def test_a_subscription_to_a_missing_catalog_is_pointed_at_one_that_serves_the_package() -> None:
    lost = sub(
        source="no-such-catalog",
        state="",
        current="",
        plan="",
        conditions=[
            condition(
                "CatalogSourcesUnhealthy",
                "UnhealthyCatalogSourceFound",
                "targeted catalogsource olm/no-such-catalog missing",
            )
        ],
    )
    snap = snapshot(
        subscriptions=[lost],
        install_plans=[],
        csvs=[],
        package_manifests=[package_manifest("memcached-operator", "samples")],
    )
    found = run(snap, Kind.SUBSCRIPTION, "memcached")
    assert chain(found) == [("Subscription", "memcached"), ("CatalogSource", "no-such-catalog")]
    assert "CatalogSource no-such-catalog does not exist in namespace olm" in found.cause
    assert commands(found)[0] == (
        f"kubectl patch subscription memcached -n {NS} --type=merge "
        """-p '{"spec":{"source":"samples","sourceNamespace":"olm"}}'"""
    )


def test_without_package_manifests_the_catalogs_in_scope_are_offered() -> None:
    lost = sub(source="gone", state="", current="", plan="")
    found = run(snapshot(subscriptions=[lost], install_plans=[]), Kind.SUBSCRIPTION, "memcached")
    assert "is in scope; check that it serves" in found.fixes[0].what


def test_a_catalog_that_cannot_be_reached_says_where_and_how_to_fix() -> None:
    message = (
        "CatalogSource team-a/mine cannot connect to the catalog at 127.0.0.1:1: nothing is "
        "listening there."
    )
    broken = catalog(
        "mine", NS, "TRANSIENT_FAILURE", message, "RegistryServerError", address="127.0.0.1:1"
    )
    found = run(snapshot(catalog_sources=[broken]), Kind.CATALOG_SOURCE, "mine")
    assert found.cause == message
    assert "start the registry server at 127.0.0.1:1" in found.fixes[0].what
    waiting = sub(source="mine", source_namespace=NS, state="", current="", plan="")
    found = run(
        snapshot(catalog_sources=[broken], subscriptions=[waiting]), Kind.SUBSCRIPTION, "memcached"
    )
    assert chain(found) == [("Subscription", "memcached"), ("CatalogSource", "mine")]


def test_a_ready_catalog_with_a_bad_poll_interval() -> None:
    odd = catalog("mine", NS, "READY", "bad interval", "InvalidIntervalError")
    found = run(snapshot(catalog_sources=[odd]), Kind.CATALOG_SOURCE, "mine")
    assert found.verdict is Verdict.PROBLEM and '"interval":"15m"' in commands(found)[0]


# ----- 4. unresolvable dependency --------------------------------------------------------------


def resolver_message() -> str:
    """The resolver's own sentence for a bundle requiring an API no catalog provides."""
    source = Source("samples", "olm", own_namespace=False)
    bundle = Candidate(
        "memcached-operator.v0.0.1",
        "memcached-operator",
        "alpha",
        source,
        "0.0.1",
        requires_gvks=(("example.com", "v1", "Widget"),),
    )
    wanted = Wanted("memcached", "memcached-operator", "samples", "olm", channel="alpha")
    return Resolver([bundle], [], [source]).resolve([wanted]).failures["memcached"]


def test_an_unresolvable_dependency_names_the_api_and_how_to_provide_it() -> None:
    message = resolver_message()
    failed = sub(
        state="",
        current="",
        plan="",
        conditions=[condition("ResolutionFailed", "ConstraintsNotSatisfiable", message)],
    )
    found = run(
        snapshot(subscriptions=[failed], install_plans=[], csvs=[]), Kind.SUBSCRIPTION, "memcached"
    )
    assert chain(found) == [("Subscription", "memcached")]
    assert "ResolutionFailed: ConstraintsNotSatisfiable" in found.links[0].says
    assert "requires API Widget.v1.example.com" in found.cause
    assert "providing API Widget.v1.example.com" in found.fixes[0].what
    assert '"kind":"CatalogSource"' in found.fixes[0].command
    assert "startingCSV" in found.fixes[1].command


def test_a_provider_in_a_catalog_out_of_scope_is_named() -> None:
    message = resolver_message()
    failed = sub(conditions=[condition("ResolutionFailed", "ConstraintsNotSatisfiable", message)])
    provider = package_manifest(
        "widgets",
        "far",
        "elsewhere",
        owns=({"name": "widgets.example.com", "version": "v1", "kind": "Widget"},),
    )
    found = run(
        snapshot(subscriptions=[failed], package_manifests=[provider]),
        Kind.SUBSCRIPTION,
        "memcached",
    )
    assert "package widgets of CatalogSource elsewhere/far provides" in found.fixes[0].what


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("spec.channel", """'{"spec":{"channel":"stable"}}'"""),
        ("spec.startingCSV", """'[{"op":"remove","path":"/spec/startingCSV"}]'"""),
        ("spec.name", "kubectl get packagemanifests"),
    ],
)
def test_a_wrong_spec_field_is_patched(field: str, expected: str) -> None:
    message = f"Subscription memcached cannot be resolved: something. Fix {field} (...)."
    failed = sub(conditions=[condition("ResolutionFailed", "ConstraintsNotSatisfiable", message)])
    manifest = package_manifest("memcached-operator", "samples")
    found = run(
        snapshot(subscriptions=[failed], package_manifests=[manifest]),
        Kind.SUBSCRIPTION,
        "memcached",
    )
    assert expected in found.fixes[0].command


def test_an_installed_csv_nobody_subscribes_to() -> None:
    message = (
        "Subscription memcached (package memcached-operator) cannot be resolved: it wants x, but "
        "ClusterServiceVersion stray.v1 (package stray) is already installed here and no "
        "Subscription refers to it, so it must stay."
    )
    failed = sub(conditions=[condition("ResolutionFailed", "ConstraintsNotSatisfiable", message)])
    found = run(snapshot(subscriptions=[failed]), Kind.SUBSCRIPTION, "memcached")
    assert commands(found)[0] == f"kubectl delete clusterserviceversion stray.v1 -n {NS}"


# ----- 5. group conflicts --------------------------------------------------------------------


def test_two_operator_groups_in_a_namespace() -> None:
    refused = csv(phase="Failed", reason="TooManyOperatorGroups")
    snap = snapshot(csvs=[refused], operator_groups=[group("a"), group("b")])
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert chain(found)[-1] == ("Namespace", NS)
    assert "has 2 OperatorGroups (a, b)" in found.cause
    assert commands(found) == [f"kubectl delete operatorgroup b -n {NS}"]
    assert run(snap, Kind.OPERATOR_GROUP, "a").verdict is Verdict.PROBLEM


def test_no_operator_group_for_an_all_namespaces_operator() -> None:
    refused = csv(phase="Failed", reason="NoOperatorGroup", modes=("AllNamespaces",))
    found = run(snapshot(csvs=[refused], operator_groups=[]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert '"spec":{}' in commands(found)[0]


def test_an_unsupported_install_mode_patches_the_group() -> None:
    refused = csv(
        phase="Failed",
        reason="UnsupportedOperatorGroup",
        message="OwnNamespace InstallModeType not supported",
    )
    snap = snapshot(csvs=[refused], operator_groups=[group(targets=[""])])
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert f'"targetNamespaces":["{NS}"]' in commands(found)[0]


def test_overlapping_groups_providing_the_same_api() -> None:
    api = "Widget.v1.conflict.example.com"
    owns = ("widgets.conflict.example.com",)
    mine = csv(
        "widgets-b.v1", "other", phase="Failed", reason="InterOperatorGroupOwnerConflict", owns=owns
    )
    theirs = csv("widgets-a.v1", NS, phase="Pending", reason="RequirementsNotMet", owns=owns)
    groups = [
        group(targets=[NS, "other"], provided=api),
        group(namespace="other", targets=["other"]),
    ]
    snap = Snapshot(
        "other",
        csvs=[mine],
        cluster_csvs=[mine, theirs],
        operator_groups=groups,
        catalog_sources=[catalog()],
    )
    found = run(snap, Kind.CLUSTER_SERVICE_VERSION, "widgets-b.v1")
    assert chain(found) == [("ClusterServiceVersion", "widgets-b.v1"), ("OperatorGroup", "og")]
    assert found.links[1].namespace == NS
    assert f"OperatorGroup {NS}/og already provides {api}" in found.cause
    assert commands(found) == [
        f"""kubectl patch operatorgroup og -n {NS} --type=merge -p '{{"spec":{{"targetNamespaces":["{NS}"]}}}}'""",
        f"kubectl delete clusterserviceversion widgets-a.v1 -n {NS}",
    ]
    assert run(snap, Kind.OPERATOR_GROUP, "og").links[-1].namespace == NS


def test_a_group_whose_service_account_is_missing() -> None:
    missing = condition(
        "OperatorGroupServiceAccount", "ServiceAccountNotFound", "ServiceAccount x not found"
    )
    snap = snapshot(operator_groups=[group(conditions=[missing], serviceAccountName="x")])
    found = run(snap, Kind.OPERATOR_GROUP, "og")
    assert commands(found)[0] == f"kubectl create serviceaccount x -n {NS}"


# ----- 6. failed plan --------------------------------------------------------------------------


def test_a_failed_plan_names_the_cause_and_how_to_retry() -> None:
    message = (
        "the bundle asks for ValidatingAdmissionPolicy p of bundle memcached-operator.v0.0.1, a kind "
        "OLM does not install; run olm with --allow-bundle-kind ValidatingAdmissionPolicy"
    )
    failed = plan(
        phase="Failed",
        csvs=(OLD,),
        conditions=[condition("Installed", "InstallComponentFailed", message, "False")],
        plan=[
            *(
                {"resource": {"kind": kind, "name": OLD}, "status": "Unknown"}
                for kind in (
                    "ClusterServiceVersion",
                    "CRD",
                    "ServiceAccount",
                    "Role",
                    "RoleBinding",
                )
            ),
            {
                "resource": {"kind": "ValidatingAdmissionPolicy", "name": "p"},
                "status": "UnsupportedResource",
            },
        ],
    )
    failing = sub(
        state="UpgradePending",
        current=OLD,
        conditions=[
            condition(
                "InstallPlanFailed", "InstallComponentFailed", "InstallPlan install-abcde failed"
            )
        ],
    )
    snap = snapshot(subscriptions=[failing], install_plans=[failed], csvs=[])
    found = run(snap, Kind.SUBSCRIPTION, "memcached")
    assert chain(found) == [("Subscription", "memcached"), ("InstallPlan", "install-abcde")]
    assert found.links[1].state == "Failed/InstallComponentFailed"
    assert found.links[1].says.endswith(
        "steps that went wrong: ValidatingAdmissionPolicy p (UnsupportedResource); "
        "5 other step(s) not run"
    )
    assert found.cause == message
    assert commands(found) == [f"kubectl delete installplan install-abcde -n {NS}"]


def test_a_complete_plan_whose_csv_was_upgraded_since_is_healthy() -> None:
    newer = csv(NEW)
    newer["spec"]["replaces"] = OLD
    done = plan(csvs=(OLD,))
    assert run(
        snapshot(install_plans=[done], csvs=[newer]), Kind.INSTALL_PLAN, "install-abcde"
    ).healthy
    gone = run(snapshot(install_plans=[done], csvs=[]), Kind.INSTALL_PLAN, "install-abcde")
    assert gone.verdict is Verdict.PROBLEM and "deleted since" in gone.cause


# ----- in progress and loops -----------------------------------------------------------------


def test_work_under_way_is_not_a_problem_but_not_healthy() -> None:
    installing = plan(phase="Installing")
    found = run(snapshot(install_plans=[installing]), Kind.INSTALL_PLAN, "install-abcde")
    assert found.verdict is Verdict.IN_PROGRESS
    fresh = sub(state="", current="", plan="")
    del fresh["status"]
    assert (
        run(snapshot(subscriptions=[fresh]), Kind.SUBSCRIPTION, "memcached").verdict
        is Verdict.IN_PROGRESS
    )


def test_csvs_that_wait_on_each_other_end_the_chain() -> None:
    first = csv(
        "a.v1",
        phase="Pending",
        reason="RequirementsNotMet",
        owns=("as.example.com",),
        requires=("bs.example.com",),
    )
    second = csv(
        "b.v1",
        phase="Pending",
        reason="RequirementsNotMet",
        owns=("bs.example.com",),
        requires=("as.example.com",),
    )
    for one, other in ((first, "bs.example.com"), (second, "as.example.com")):
        one["status"]["requirementStatus"] = [{**NOT_PRESENT, "name": other}]
    found = run(snapshot(csvs=[first, second]), Kind.CLUSTER_SERVICE_VERSION, "a.v1")
    assert "waits on this CSV in turn" in found.cause


def test_a_csv_waiting_for_the_one_it_replaces_follows_it() -> None:
    old = csv(OLD, phase="Failed", reason="InstallCheckFailed", message="install timeout")
    new = csv(NEW, phase="Pending", reason="RequirementsUnknown")
    new["spec"]["replaces"] = OLD
    found = run(snapshot(csvs=[old, new]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert chain(found) == [("ClusterServiceVersion", NEW), ("ClusterServiceVersion", OLD)]
    assert found.cause == "install timeout"
    assert f"kubectl describe deployment memcached-operator -n {NS}" in commands(found)


def test_a_copy_points_at_the_original() -> None:
    copy = csv(phase="Failed", reason="Copied", labels={"olm.copiedFrom": "operators"})
    found = run(snapshot(csvs=[copy]), Kind.CLUSTER_SERVICE_VERSION, NEW)
    assert commands(found) == [f"olm explain clusterserviceversion/{NEW} -n operators"]


def test_unreadable_objects_are_noted() -> None:
    snap = Snapshot(NS, subscriptions=[sub()], unreadable=("OperatorGroups",))
    found = run(snap, Kind.SUBSCRIPTION, "memcached")
    assert found.notes == ("could not read OperatorGroups; the chain may stop short",)


def test_a_healthy_subscription_says_what_its_version_range_holds_back() -> None:
    held = condition(
        "VersionHeld", "OutsideVersionRange", "olm-py.io/version-range '<0.1.0' holds back 0.1.0"
    )
    found = run(snapshot(subscriptions=[sub(conditions=[held])]), Kind.SUBSCRIPTION, "memcached")
    assert found.healthy
    assert found.notes == (
        "VersionHeld (OutsideVersionRange): olm-py.io/version-range '<0.1.0' holds back 0.1.0",
    )
