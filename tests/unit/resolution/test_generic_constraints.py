"""Generic constraints (`olm.constraint`) in the resolver, from OLM v0.38's own cases:
operator-lifecycle-manager pkg/controller/registry/resolver/resolver_test.go
(TestSolveOperators_OLMConstraint_Compound{All,Any,Not}, _Unknown, TestSolveOperators_
GenericConstraint) and operator-framework/api pkg/constraints/cel_test.go (TestCelLibrary)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from olm.catalog.fbc import blobs_to_catalog
from olm.resolution.catalogs import candidates
from olm.resolution.constraints import ConstraintError, Subject, parse, semver_compare
from olm.resolution.model import Candidate, Installed, Source, Wanted
from olm.resolution.resolver import Resolver

COMMUNITY = Source("community", "olm")


def bundle(
    name: str, package: str, version: str, *, provides: str = "", replaces: str = "", **extra: Any
) -> dict[str, Any]:
    """One bundle: `provides` is "g1/v1/k1 g2/v2/k2"; `constraint` an olm.constraint value."""
    properties: list[dict[str, Any]] = [
        {"type": "olm.package", "value": {"packageName": package, "version": version}}
    ]
    for gvk in provides.split():
        group, api_version, kind = gvk.split("/")
        properties.append(
            {"type": "olm.gvk", "value": {"group": group, "version": api_version, "kind": kind}}
        )
    if "constraint" in extra:
        properties.append({"type": "olm.constraint", "value": extra["constraint"]})
    return {"name": name, "package": package, "replaces": replaces, "properties": properties}


def pool(*bundles: dict[str, Any]) -> list[Candidate]:
    """A file-based catalog of the bundles, one `stable` channel per package in the given order."""
    blobs: list[dict[str, Any]] = []
    for package in dict.fromkeys(b["package"] for b in bundles):
        mine = [b for b in bundles if b["package"] == package]
        blobs.append({"schema": "olm.package", "name": package, "defaultChannel": "stable"})
        entries = [
            {"name": b["name"], **({"replaces": b["replaces"]} if b["replaces"] else {})}
            for b in mine
        ]
        blobs.append(
            {"schema": "olm.channel", "package": package, "name": "stable", "entries": entries}
        )
        for b in mine:
            blobs.append(
                {
                    "schema": "olm.bundle",
                    "name": b["name"],
                    "package": package,
                    "image": f"example.com/{b['name']}",
                    "properties": b["properties"],
                }
            )
    catalog = blobs_to_catalog([(blob, ("catalog.json", "")) for blob in blobs])
    return candidates(catalog, COMMUNITY)


def resolve(found: list[Candidate], *packages: str, installed: tuple[Installed, ...] = ()) -> Any:
    wanted = [
        Wanted(name=p, package=p, source="community", source_namespace="olm", channel="stable")
        for p in packages
    ]
    return Resolver(found, installed, [COMMUNITY]).resolve(wanted)


def installed_bundles(decision: Any) -> set[str]:
    chosen = {c.bundle for c in decision.chosen.values() if isinstance(c, Candidate)}
    return chosen | {c.bundle for c in decision.dependencies}


FOO_HISTORY = (
    bundle("foo.v0.99.0", "foo", "0.99.0", provides="g1/v1/k1 g2/v2/k2 g3/v3/k3"),
    bundle("foo.v1.0.0", "foo", "1.0.0", provides="g2/v2/k2 g3/v3/k3", replaces="foo.v0.99.0"),
    bundle(
        "foo.v1.0.1", "foo", "1.0.1", provides="g1/v1/k1 g2/v2/k2 g3/v3/k3", replaces="foo.v1.0.0"
    ),
)


def test_compound_all_needs_every_member() -> None:
    bar = bundle(
        "bar.v1.0.0",
        "bar",
        "1.0.0",
        constraint={
            "failureMessage": "all constraint",
            "all": {
                "constraints": [
                    {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
                    {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
                    {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}},
                ]
            },
        },
    )
    decision = resolve(pool(bar, *FOO_HISTORY), "bar")
    assert decision.ok
    assert installed_bundles(decision) == {"bar.v1.0.0", "foo.v1.0.1"}


def test_compound_any_needs_one_member() -> None:
    bar = bundle(
        "bar.v1.0.0",
        "bar",
        "1.0.0",
        constraint={
            "failureMessage": "any constraint",
            "any": {
                "constraints": [
                    {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
                    {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}},
                ]
            },
        },
    )
    foo = (
        bundle("foo.v0.99.0", "foo", "0.99.0", provides="g0/v0/k0"),
        bundle("foo.v1.0.0", "foo", "1.0.0", provides="g1/v1/k1 g2/v2/k2", replaces="foo.v0.99.0"),
        bundle(
            "foo.v1.0.1",
            "foo",
            "1.0.1",
            provides="g1/v1/k1 g2/v2/k2 g3/v3/k3",
            replaces="foo.v1.0.0",
        ),
    )
    decision = resolve(pool(bar, *foo), "bar")
    assert installed_bundles(decision) == {"bar.v1.0.0", "foo.v1.0.1"}


def test_compound_not_excludes_its_members() -> None:
    bar = bundle(
        "bar.v1.0.0",
        "bar",
        "1.0.0",
        constraint={
            "failureMessage": "compound not constraint",
            "all": {
                "constraints": [
                    {"gvk": {"group": "g0", "version": "v0", "kind": "k0"}},
                    {
                        "not": {
                            "constraints": [
                                {"gvk": {"group": "g1", "version": "v1", "kind": "k1"}},
                                {"gvk": {"group": "g2", "version": "v2", "kind": "k2"}},
                            ]
                        }
                    },
                ]
            },
        },
    )
    foo = (
        bundle("foo.v0.99.0", "foo", "0.99.0", provides="g0/v0/k0"),
        bundle(
            "foo.v1.0.0",
            "foo",
            "1.0.0",
            provides="g0/v0/k0 g1/v1/k1 g2/v2/k2",
            replaces="foo.v0.99.0",
        ),
        bundle(
            "foo.v1.0.1",
            "foo",
            "1.0.1",
            provides="g0/v0/k0 g1/v1/k1 g2/v2/k2 g3/v3/k3",
            replaces="foo.v1.0.0",
        ),
    )
    decision = resolve(pool(bar, *foo), "bar")
    assert installed_bundles(decision) == {"bar.v1.0.0", "foo.v0.99.0"}


GVK_RULE = "properties.exists(p, p.type == 'olm.gvk' && p.value == {'group': '%s', 'version': 'v', 'kind': 'k'})"


def test_a_cel_rule_over_the_providers_gvk_properties() -> None:
    op_a = bundle(
        "opA.v1.0.0",
        "test-package",
        "1.0.0",
        constraint={"failureMessage": "gvk-constraint", "cel": {"rule": GVK_RULE % "g"}},
    )
    op_b = bundle("opB.v1.0.0", "another-package", "1.0.0", provides="g/v/k")
    decision = resolve(pool(op_a, op_b), "test-package")
    assert installed_bundles(decision) == {"opA.v1.0.0", "opB.v1.0.0"}


def test_an_unsatisfied_cel_rule_fails_with_its_failure_message() -> None:
    op_a = bundle(
        "opA.v1.0.0",
        "test-package",
        "1.0.0",
        constraint={"failureMessage": "gvk2-constraint", "cel": {"rule": GVK_RULE % "g2"}},
    )
    op_b = bundle("opB.v1.0.0", "another-package", "1.0.0", provides="g/v/k")
    decision = resolve(pool(op_a, op_b), "test-package")
    assert not decision.ok and not decision.chosen
    message = decision.failures["test-package"]
    # OLM's words: "bundle opA.v1.0.0 requires an operator with constraint: ... and message: ..."
    assert (
        f'bundle opA.v1.0.0 requires an operator with constraint: "{GVK_RULE % "g2"}" and '
        'message: "gvk2-constraint"'
    ) in message


def test_semver_compare_picks_the_one_matching_version() -> None:
    rule = (
        "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'another-package'"
        " && (semver_compare(p.value.version, '1.0.1') == 0))"
    )
    op_a = bundle(
        "opA.v1.0.0",
        "test-package",
        "1.0.0",
        constraint={"failureMessage": "package-constraint", "cel": {"rule": rule}},
    )
    op_b = (
        bundle("opB.v1.0.0", "another-package", "1.0.0"),
        bundle("opB.v1.0.1", "another-package", "1.0.1", replaces="opB.v1.0.0"),
        bundle("opB.v1.0.2", "another-package", "1.0.2", replaces="opB.v1.0.1"),
    )
    decision = resolve(pool(op_a, *op_b), "test-package")
    assert installed_bundles(decision) == {"opA.v1.0.0", "opB.v1.0.1"}


def test_an_installed_csv_can_satisfy_a_constraint() -> None:
    op_a = bundle(
        "opA.v1.0.0",
        "test-package",
        "1.0.0",
        constraint={"package": {"packageName": "another-package", "versionRange": ">=1.0.0"}},
    )
    there = Installed(
        "opB.v1.0.0",
        "another-package",
        "1.0.0",
        properties=(
            {
                "type": "olm.package",
                "value": {"packageName": "another-package", "version": "1.0.0"},
            },
        ),
    )
    decision = resolve(pool(op_a), "test-package", installed=(there,))
    assert decision.ok and installed_bundles(decision) == {"opA.v1.0.0"}


def test_an_unknown_constraint_stops_the_namespaces_resolution() -> None:
    bar = bundle(
        "bar.v1.0.0",
        "bar",
        "1.0.0",
        constraint={"failureMessage": "unknown constraint", "unknown": {"foo": "bar"}},
    )
    other = bundle("other.v1.0.0", "other", "1.0.0")
    decision = resolve(pool(bar, other), "bar", "other")
    assert not decision.ok and not decision.chosen
    # Every Subscription of the namespace says why (OLM's ErrorPreventedResolution).
    assert decision.errors == {
        "bar": 'parse olm.constraint: json: unknown field "unknown"',
        "other": 'parse olm.constraint: json: unknown field "unknown"',
    }


def test_a_bad_constraint_nobody_reaches_does_not_matter() -> None:
    bar = bundle("bar.v1.0.0", "bar", "1.0.0", constraint={"cel": {"rule": "1"}})
    other = bundle("other.v1.0.0", "other", "1.0.0")
    decision = resolve(pool(bar, other), "other")
    assert decision.ok and installed_bundles(decision) == {"other.v1.0.0"}


# ----- the CEL environment (operator-framework/api pkg/constraints/cel_test.go) -----------------

OLM_TEST = Subject("p", "1.0.0", [{"type": "olm.test", "value": "1.0.0"}])


@pytest.mark.parametrize(
    ("comparison", "expected"),
    [("== 0", True), ("< 0", False), ("> 0", False)],
)
def test_semver_compare_in_a_rule(comparison: str, expected: bool) -> None:
    rule = f"properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.0') {comparison}))"
    assert parse({"cel": {"rule": rule}}).test(OLM_TEST) is expected


def test_semver_compare_not_equal() -> None:
    rule = "properties.exists(p, p.type == 'olm.test' && (semver_compare(p.value, '1.0.1') == 0))"
    assert parse({"cel": {"rule": rule}}).test(OLM_TEST) is False


def test_semver_compare_is_blangs_tolerant_compare() -> None:
    assert semver_compare("v1.2", "1.2.0") == 0
    assert semver_compare("1.0.0-alpha", "1.0.0") == -1
    assert semver_compare("2.0.0", "1.10.0") == 1


@pytest.mark.parametrize(
    ("rule", "error"),
    [
        (
            "properties.exists(p, p.type == 'olm.test' && (doesnt_exist(p.value, '1.0.0') == 0))",
            "undeclared reference to 'doesnt_exist'",
        ),
        ("1", "cel expressions must have type Bool"),
        ("properties.exists(p, p.type == ", "Syntax error"),
    ],
)
def test_a_bad_rule_is_refused_when_read(rule: str, error: str) -> None:
    with pytest.raises(ConstraintError) as e:
        parse({"cel": {"rule": rule}})
    assert str(e.value).startswith("convert olm.constraint to resolver predicate: ")
    assert error in str(e.value)


def test_an_evaluation_error_means_not_satisfied() -> None:
    rule = "properties.exists(p, p.type == 'olm.test' && semver_compare(p.value, 'x') == 0)"
    assert parse({"cel": {"rule": rule}}).test(OLM_TEST) is False


def test_messages_are_olms_predicate_strings() -> None:
    nested = parse(
        {
            "failureMessage": "ignored outside cel",
            "any": {
                "constraints": [
                    {"gvk": {"group": "g", "version": "v1", "kind": "K"}},
                    {"package": {"packageName": "foo", "versionRange": ">=1.0.0"}},
                ]
            },
        }
    )
    assert nested.text == (
        "providing an API with group: g, version: v1, kind: K or "
        "with package: foo and with version in range: >=1.0.0"
    )


@pytest.mark.parametrize(
    ("value", "error"),
    [
        ({}, "convert olm.constraint to resolver predicate: constraint is empty"),
        ({"failureMessage": "only a message"}, "constraint is empty"),
        (
            {"package": {"packageName": "foo", "versionRange": "not a range"}},
            "convert olm.constraint",
        ),
        (
            {"all": {"constraints": [{"gvk": {"group": "g", "plural": "ks"}}]}},
            'unknown field "plural"',
        ),
        ("a string", "parse olm.constraint: json: cannot unmarshal string"),
    ],
)
def test_malformed_constraints(value: Any, error: str) -> None:
    with pytest.raises(ConstraintError, match=re.escape(error)):
        parse(value)


def test_empty_compounds_compose_as_olms_predicates() -> None:
    empty = Subject("p", "1.0.0", [])
    assert parse({"all": {"constraints": []}}).test(empty) is True
    assert parse({"any": {"constraints": []}}).test(empty) is False
    assert parse({"not": {"constraints": []}}).test(empty) is True
