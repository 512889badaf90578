"""The install form's decision: OperatorGroup where needed (as OLM's docs say), Subscription."""

from __future__ import annotations

from typing import Any

from olm.console.catalog import card
from olm.console.install import GLOBAL_GROUP, GLOBAL_NAMESPACE, InstallForm, decide
from tests.unit.console.test_catalog import manifest

PACKAGE = card(manifest("memcached", modes=("OwnNamespace", "SingleNamespace")))
GLOBAL = card(manifest("etcd", modes=("AllNamespaces",)))


def form(**values: str) -> InstallForm:
    base = {
        "package": "memcached",
        "catalog": "samples",
        "catalog_namespace": "olm",
        "channel": "stable",
        "scope": "namespace",
        "namespace": "shop",
        "approval": "Manual",
    }
    return InstallForm.from_post({**base, **values})


def group(name: str, targets: list[str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"targetNamespaces": targets} if targets else {}}


def test_a_namespace_without_a_group_gets_one_targeting_itself() -> None:
    decision = decide(form(starting_csv="memcached.v1.0.0"), PACKAGE, [], [])
    assert decision.problems == () and decision.namespace == "shop"
    og, sub = decision.creates
    assert og["kind"] == "OperatorGroup" and og["metadata"] == {"name": "shop", "namespace": "shop"}
    assert og["spec"] == {"targetNamespaces": ["shop"]}
    assert sub["kind"] == "Subscription" and sub["metadata"] == {
        "name": "memcached",
        "namespace": "shop",
    }
    assert sub["spec"] == {
        "name": "memcached",
        "channel": "stable",
        "source": "samples",
        "sourceNamespace": "olm",
        "installPlanApproval": "Manual",
        "startingCSV": "memcached.v1.0.0",
    }


def test_an_existing_group_is_used_not_changed() -> None:
    decision = decide(form(), PACKAGE, [group("og", ["shop"])], [])
    assert [o["kind"] for o in decision.creates] == ["Subscription"]
    assert "uses OperatorGroup og of shop" in decision.notes


def test_all_namespaces_goes_to_the_operators_namespace() -> None:
    decision = decide(form(package="etcd", scope="all"), GLOBAL, [], [])
    og, sub = decision.creates
    assert og["metadata"] == {"name": GLOBAL_GROUP, "namespace": GLOBAL_NAMESPACE}
    assert og["spec"] == {} and sub["metadata"]["namespace"] == GLOBAL_NAMESPACE


def test_problems_name_the_field_and_create_nothing() -> None:
    cases = {
        "channel: 'beta' is not a channel": form(channel="beta"),
        "approval: choose Automatic or Manual": form(approval="Sometimes"),
        "namespace: 'Not A Name' is not a namespace name": form(namespace="Not A Name"),
        "does not support all namespaces": form(scope="all"),
        "version: nope is not in channel stable": form(starting_csv="nope"),
    }
    for words, given in cases.items():
        decision = decide(given, PACKAGE, [], [])
        assert decision.creates == () and any(words in p for p in decision.problems), words
    single = decide(form(package="etcd"), GLOBAL, [], [])
    assert any("does not support a single namespace" in p for p in single.problems)


def test_two_groups_or_a_taken_package_are_refused() -> None:
    two = decide(form(), PACKAGE, [group("a"), group("b")], [])
    assert any("has 2 OperatorGroups (a, b)" in p for p in two.problems)
    taken = decide(
        form(), PACKAGE, [], [{"metadata": {"name": "mine"}, "spec": {"name": "memcached"}}]
    )
    assert any("already has Subscription mine" in p for p in taken.problems)
    narrow = decide(form(package="etcd", scope="all"), GLOBAL, [group("g", ["x"])], [])
    assert any("does not target all namespaces" in p for p in narrow.problems)


def test_olm_py_version_policies_are_subscription_annotations() -> None:
    decision = decide(form(auto_approve="patch", version_range=">=1.0.0 <2.0.0"), PACKAGE, [], [])
    sub = decision.creates[-1]
    assert sub["metadata"]["annotations"] == {
        "olm-py.io/auto-approve": "patch",
        "olm-py.io/version-range": ">=1.0.0 <2.0.0",
    }
    assert "annotations" not in decide(form(), PACKAGE, [], []).creates[-1]["metadata"]
    cases = {
        "auto-approve: choose first, patch, minor or none": form(auto_approve="always"),
        "auto-approve: olm-py approves plans by itself only under Manual": form(
            approval="Automatic", auto_approve="first"
        ),
        "version range: ": form(version_range=">=banana"),
    }
    for words, given in cases.items():
        refused = decide(given, PACKAGE, [], [])
        assert refused.creates == () and any(p.startswith(words) for p in refused.problems), words
