"""What a Subscription says when a generic constraint (`olm.constraint`) decides its resolution:
an unsatisfied one is ConstraintsNotSatisfiable with OLM's words and the rule's failureMessage; a
constraint OLM cannot read stops the namespace's resolution (ErrorPreventedResolution)."""

from __future__ import annotations

import copy
from typing import Any

from olm.catalog.model import Catalog
from olm.subscription.decide import decide
from olm.subscription.resolve import csv_properties
from tests.unit.subscription.world import GLOBAL, conditions, samples, subscription, world


def with_constraint(value: Any) -> Catalog:
    """The samples catalog with `value` as an olm.constraint of every memcached-operator bundle."""
    catalog = copy.deepcopy(samples())
    for bundle in catalog.packages["memcached-operator"].bundles.values():
        bundle.properties.append({"type": "olm.constraint", "value": value})
    return catalog


def resolution_failed(catalog: Catalog) -> dict[str, Any]:
    decision = decide(world([subscription()], loaded={(GLOBAL, "samples"): catalog}))
    assert decision.create is None
    [write] = decision.statuses
    failed: dict[str, Any] = conditions(write.status)["ResolutionFailed"]
    return failed


def test_an_unsatisfied_cel_rule_is_constraints_not_satisfiable() -> None:
    rule = "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'nowhere')"
    failed = resolution_failed(
        with_constraint({"failureMessage": "needs nowhere", "cel": {"rule": rule}})
    )
    assert (failed["status"], failed["reason"]) == ("True", "ConstraintsNotSatisfiable")
    assert (
        f'requires an operator with constraint: "{rule}" and message: "needs nowhere"'
        in (failed["message"])
    )


def test_an_unreadable_constraint_is_error_prevented_resolution() -> None:
    failed = resolution_failed(with_constraint({"cel": {"rule": "'not a boolean'"}}))
    assert (failed["reason"], failed["message"]) == (
        "ErrorPreventedResolution",
        "convert olm.constraint to resolver predicate: cel expressions must have type Bool",
    )


def test_an_installed_csv_shows_its_annotated_or_inferred_properties() -> None:
    annotated = {
        "metadata": {
            "annotations": {
                "operatorframework.io/properties": '{"properties":[{"type":"olm.maxOpenShiftVersion","value":"4.9"}]}'
            }
        },
        "spec": {"version": "1.0.0"},
    }
    assert csv_properties(annotated, "foo") == (
        {"type": "olm.maxOpenShiftVersion", "value": "4.9"},
    )
    bare = {
        "metadata": {},
        "spec": {
            "version": "1.0.0",
            "customresourcedefinitions": {
                "owned": [{"name": "ks.g.io", "version": "v1", "kind": "K"}]
            },
        },
    }
    assert csv_properties(bare, "foo") == (
        {"type": "olm.package", "value": {"packageName": "foo", "version": "1.0.0"}},
        {"type": "olm.gvk", "value": {"group": "g.io", "version": "v1", "kind": "K"}},
    )
