"""RBAC granted and revoked per rule; what widens, and the flags a person must see."""

from __future__ import annotations

from typing import Any

from olm.api.preview import Change, RuleFlag, RuleScope
from olm.preview.rbac import Rule, describe_rule, rbac_diff

PODS = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}
DEPLOYMENTS = {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "create"]}
SECRETS = {"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}


def csv(
    name: str,
    rules: list[dict[str, Any]],
    cluster_rules: list[dict[str, Any]] | None = None,
    account: str = "op",
) -> dict[str, Any]:
    install: dict[str, Any] = {"permissions": [{"serviceAccountName": account, "rules": rules}]}
    if cluster_rules is not None:
        install["clusterPermissions"] = [{"serviceAccountName": account, "rules": cluster_rules}]
    return {
        "metadata": {"name": name},
        "spec": {"install": {"strategy": "deployment", "spec": install}},
    }


def test_the_same_rules_change_nothing_whatever_their_order() -> None:
    reordered = {"verbs": ["watch", "get", "list", "get"], "resources": ["pods"], "apiGroups": [""]}
    diff = rbac_diff(csv("v2", [DEPLOYMENTS, reordered]), csv("v1", [PODS, DEPLOYMENTS]))
    assert diff.changes == () and diff.unchanged == 2


def test_a_cluster_wide_secrets_rule_is_granted_widening_and_flagged() -> None:
    diff = rbac_diff(csv("v2", [PODS], [SECRETS]), csv("v1", [PODS]))
    assert diff.unchanged == 1 and diff.revoked == ()
    (granted,) = diff.granted
    assert (granted.csv, granted.service_account, granted.scope) == ("v2", "op", RuleScope.CLUSTER)
    assert granted.flags == (RuleFlag.CLUSTER_WIDE, RuleFlag.SENSITIVE, RuleFlag.WIDENS)
    assert granted.rule == Rule.of(SECRETS)


def test_a_removed_rule_is_revoked_and_flags_nothing() -> None:
    diff = rbac_diff(csv("v2", [PODS]), csv("v1", [PODS, DEPLOYMENTS]))
    (revoked,) = diff.revoked
    assert revoked.change is Change.REVOKED and revoked.rule == Rule.of(DEPLOYMENTS)
    assert revoked.flags == () and diff.granted == ()


def test_splitting_a_rule_grants_new_rules_that_do_not_widen() -> None:
    split = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
    ]
    diff = rbac_diff(csv("v2", split), csv("v1", [PODS]))
    assert len(diff.granted) == 2 and len(diff.revoked) == 1
    assert all(RuleFlag.WIDENS not in c.flags for c in diff.granted)


def test_a_new_verb_widens() -> None:
    more = {**PODS, "verbs": ["get", "list", "watch", "delete"]}
    (granted,) = rbac_diff(csv("v2", [more]), csv("v1", [PODS])).granted
    assert granted.flags == (RuleFlag.WIDENS,)


def test_wildcards_are_flagged_and_covered_only_by_wildcards() -> None:
    star = {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}
    (granted,) = rbac_diff(csv("v2", [star]), csv("v1", [PODS])).granted
    assert granted.flags == (RuleFlag.WILDCARD, RuleFlag.SENSITIVE, RuleFlag.WIDENS)
    narrowed = rbac_diff(csv("v2", [PODS]), csv("v1", [star]))
    assert [RuleFlag.WIDENS in c.flags for c in narrowed.granted] == [False]


def test_resource_names_narrow_a_rule() -> None:
    named = {**SECRETS, "resourceNames": ["webhook-cert"]}
    (widens,) = rbac_diff(csv("v2", [SECRETS]), csv("v1", [named])).granted
    assert RuleFlag.WIDENS in widens.flags
    (covered,) = rbac_diff(csv("v2", [named]), csv("v1", [SECRETS])).granted
    assert RuleFlag.WIDENS not in covered.flags


def test_an_old_cluster_rule_covers_a_new_namespaced_one_but_not_the_reverse() -> None:
    to_namespace = rbac_diff(csv("v2", [PODS, SECRETS]), csv("v1", [PODS], [SECRETS]))
    assert [RuleFlag.WIDENS in c.flags for c in to_namespace.granted] == [False]
    to_cluster = rbac_diff(csv("v2", [PODS], [SECRETS]), csv("v1", [PODS, SECRETS]))
    assert [RuleFlag.WIDENS in c.flags for c in to_cluster.granted] == [True]


def test_rules_of_another_account_do_not_cover() -> None:
    diff = rbac_diff(csv("v2", [PODS], account="other"), csv("v1", [PODS]))
    assert [c.service_account for c in diff.granted] == ["other"]
    assert RuleFlag.WIDENS in diff.granted[0].flags
    assert [c.service_account for c in diff.revoked] == ["op"]


def test_a_fresh_install_grants_every_rule() -> None:
    diff = rbac_diff(csv("v1", [PODS, DEPLOYMENTS]), None)
    assert len(diff.granted) == 2 and all(RuleFlag.WIDENS in c.flags for c in diff.granted)


def test_an_all_namespaces_group_makes_namespaced_grants_cluster_wide() -> None:
    (granted,) = rbac_diff(
        csv("v2", [PODS, SECRETS]), csv("v1", [PODS]), all_namespaces=True
    ).granted
    assert granted.scope is RuleScope.NAMESPACE and RuleFlag.CLUSTER_WIDE in granted.flags


def test_non_resource_urls() -> None:
    metrics = {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
    everything = {"nonResourceURLs": ["/*"], "verbs": ["get"]}
    (covered,) = rbac_diff(csv("v2", [], [metrics]), csv("v1", [], [everything])).granted
    assert RuleFlag.WIDENS not in covered.flags
    (widens,) = rbac_diff(csv("v2", [], [everything]), csv("v1", [], [metrics])).granted
    assert RuleFlag.WIDENS in widens.flags
    assert describe_rule(Rule.of(metrics)) == "get on URLs /metrics"


def test_describe_rule_names_the_core_group() -> None:
    named = {**SECRETS, "resourceNames": ["b", "a"]}
    assert describe_rule(Rule.of(named)) == "get, list, watch on secrets (core) named a, b"
