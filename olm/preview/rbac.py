"""RBAC granted and revoked by an upgrade: the new CSV's install strategy against the replaced one.

A CSV's rights are its `spec.install.spec.permissions` (Roles in the operator's namespace, or
across the OperatorGroup's target namespaces; cluster-wide when the group is AllNamespaces:
olm.scope.rbac lifts them) and `clusterPermissions` (ClusterRoles), per ServiceAccount.

- Per rule: a rule of the new CSV that the replaced CSV does not have for the same account and
  scope (compared normalized: order and duplicates of its lists do not matter) is `granted`; a
  rule of the replaced CSV the new one lacks is `revoked`. A fresh install grants every rule.
- A granted rule `widens` RBAC when it allows something no rule of the replaced CSV allowed the
  same account: every (group, resource, verb, name) it allows is checked against the old rules
  (a cluster-wide old rule covers a namespaced new one, never the reverse; `*` is covered only
  by `*`). Reshaping rules (splitting, merging) therefore never widens.
- Flags per granted rule: cluster-wide, wildcard (`*` in apiGroups, resources or verbs),
  sensitive (olm.api.preview.SENSITIVE_RESOURCES / SENSITIVE_VERBS), widens.

Invariant: pure; the CSVs given are never changed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.preview import (
    SENSITIVE_RESOURCES,
    SENSITIVE_VERBS,
    WILDCARD,
    Change,
    RuleFlag,
    RuleScope,
)

RULE_FIELDS = ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs")


@dataclass(frozen=True)
class Rule:
    """A PolicyRule, normalized: each list sorted, without duplicates."""

    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    non_resource_urls: tuple[str, ...] = ()

    @classmethod
    def of(cls, rule: Mapping[str, Any]) -> Rule:
        lists = [tuple(sorted({str(v) for v in rule.get(f) or []})) for f in RULE_FIELDS]
        return cls(*lists)

    def as_dict(self) -> dict[str, list[str]]:
        values = (
            self.api_groups,
            self.resources,
            self.verbs,
            self.resource_names,
            self.non_resource_urls,
        )
        return {f: list(v) for f, v in zip(RULE_FIELDS, values, strict=True) if v}

    @property
    def wildcard(self) -> bool:
        return any(WILDCARD in v for v in (self.api_groups, self.resources, self.verbs))

    @property
    def sensitive(self) -> bool:
        return bool(
            SENSITIVE_RESOURCES.intersection(self.resources)
            or SENSITIVE_VERBS.intersection(self.verbs)
            or (WILDCARD in self.resources and self.verbs)
        )


@dataclass(frozen=True)
class RuleChange:
    csv: str
    service_account: str
    scope: RuleScope
    change: Change  # GRANTED or REVOKED
    rule: Rule
    flags: tuple[RuleFlag, ...] = ()


@dataclass(frozen=True)
class RbacDiff:
    changes: tuple[RuleChange, ...]
    unchanged: int  # rules both CSVs have

    @property
    def granted(self) -> tuple[RuleChange, ...]:
        return tuple(c for c in self.changes if c.change is Change.GRANTED)

    @property
    def revoked(self) -> tuple[RuleChange, ...]:
        return tuple(c for c in self.changes if c.change is Change.REVOKED)


Account = tuple[RuleScope, str]  # (scope, ServiceAccount name)


def csv_rules(csv: Mapping[str, Any] | None) -> dict[Account, list[Rule]]:
    """A CSV's rules per (scope, ServiceAccount), in order, without duplicates."""
    install = (((csv or {}).get("spec") or {}).get("install") or {}).get("spec") or {}
    found: dict[Account, list[Rule]] = {}
    for scope, key in (
        (RuleScope.NAMESPACE, "permissions"),
        (RuleScope.CLUSTER, "clusterPermissions"),
    ):
        for entry in install.get(key) or []:
            if not isinstance(entry, Mapping):
                continue
            rules = found.setdefault((scope, str(entry.get("serviceAccountName") or "")), [])
            for raw in entry.get("rules") or []:
                rule = Rule.of(raw) if isinstance(raw, Mapping) else None
                if rule is not None and rule not in rules:
                    rules.append(rule)
    return found


def _matches(allowed: Sequence[str], value: str) -> bool:
    return WILDCARD in allowed or value in allowed


def _url_matches(allowed: Sequence[str], url: str) -> bool:
    return any(
        a in (WILDCARD, url) or (a.endswith(WILDCARD) and url.startswith(a[:-1])) for a in allowed
    )


def _covered(rule: Rule, by: Iterable[Rule]) -> bool:
    """Does every right `rule` allows appear in some rule of `by`?"""
    olds = list(by)
    if rule.non_resource_urls:
        return all(
            any(
                old.non_resource_urls
                and _url_matches(old.non_resource_urls, url)
                and _matches(old.verbs, verb)
                for old in olds
            )
            for url, verb in itertools.product(rule.non_resource_urls, rule.verbs)
        )
    names: Sequence[str | None] = rule.resource_names or (None,)
    for group, resource, verb, name in itertools.product(
        rule.api_groups, rule.resources, rule.verbs, names
    ):
        if not any(
            _matches(old.api_groups, group)
            and _matches(old.resources, resource)
            and _matches(old.verbs, verb)
            and (not old.resource_names or (name is not None and name in old.resource_names))
            for old in olds
        ):
            return False
    return True


def _flags(rule: Rule, cluster_wide: bool, widens: bool) -> tuple[RuleFlag, ...]:
    flags = (
        (RuleFlag.CLUSTER_WIDE, cluster_wide),
        (RuleFlag.WILDCARD, rule.wildcard),
        (RuleFlag.SENSITIVE, rule.sensitive),
        (RuleFlag.WIDENS, widens),
    )
    return tuple(flag for flag, on in flags if on)


def rbac_diff(
    new: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    *,
    all_namespaces: bool = False,
) -> RbacDiff:
    """The rules `new` grants and revokes against `old` (None: a fresh install);
    `all_namespaces`: the OperatorGroup targets every namespace (namespaced rules are then
    cluster-wide)."""
    name = str(body.meta(new).get("name", ""))
    before, after = csv_rules(old), csv_rules(new)
    changes: list[RuleChange] = []
    unchanged = 0
    for account in sorted({*before, *after}):
        scope, service_account = account
        old_rules, new_rules = before.get(account, []), after.get(account, [])
        # What the account held before at this scope: a cluster-wide rule covers namespaced use.
        held = [*old_rules, *(before.get((RuleScope.CLUSTER, service_account), []))]
        cluster_wide = scope is RuleScope.CLUSTER or all_namespaces
        for rule in new_rules:
            if rule in old_rules:
                unchanged += 1
                continue
            widens = old is None or not _covered(rule, held)
            changes.append(
                RuleChange(
                    name,
                    service_account,
                    scope,
                    Change.GRANTED,
                    rule,
                    _flags(rule, cluster_wide, widens),
                )
            )
        changes.extend(
            RuleChange(name, service_account, scope, Change.REVOKED, rule)
            for rule in old_rules
            if rule not in new_rules
        )
    return RbacDiff(tuple(changes), unchanged)


def describe_rule(rule: Rule) -> str:
    """One line a person reads: `get, list on secrets (core) named a`."""
    verbs = ", ".join(rule.verbs) or "(no verbs)"
    if rule.non_resource_urls:
        return f"{verbs} on URLs {', '.join(rule.non_resource_urls)}"
    groups = ", ".join(g or "core" for g in rule.api_groups) or "(no group)"
    what = f"{verbs} on {', '.join(rule.resources) or '(no resources)'} ({groups})"
    if rule.resource_names:
        what += f" named {', '.join(rule.resource_names)}"
    return what
