"""CRD upgrade safety: stored versions stay, existing CRs still validate."""

from __future__ import annotations

import copy
from typing import Any

from olm.installplan.crdsafety import stored_versions_problem, validation_problem, versions_to_check


def crd(
    *versions: tuple[str, bool, dict[str, Any]], stored: list[str] | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "memcacheds.cache.example.com"},
        "spec": {
            "group": "cache.example.com",
            "names": {"kind": "Memcached"},
            "versions": [
                {"name": n, "served": s, "schema": {"openAPIV3Schema": schema}}
                for n, s, schema in versions
            ],
        },
    }
    if stored is not None:
        body["status"] = {"storedVersions": stored}
    return body


SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "maximum": 10}}}
    },
}
STRICT = copy.deepcopy(SCHEMA)
STRICT["properties"]["spec"]["properties"]["size"]["maximum"] = 3
CR = {
    "apiVersion": "cache.example.com/v1alpha1",
    "kind": "Memcached",
    "metadata": {"name": "big", "namespace": "team-a"},
    "spec": {"size": 5},
}


def test_a_stored_version_may_not_disappear() -> None:
    existing = crd(("v1alpha1", True, SCHEMA), stored=["v1alpha1"])
    problem = stored_versions_problem(existing, crd(("v1", True, SCHEMA)))
    assert (
        problem
        == 'risk of data loss updating "memcacheds.cache.example.com": new CRD removes version v1alpha1 that is listed as a stored version on the existing CRD'
    )
    assert (
        stored_versions_problem(existing, crd(("v1alpha1", True, SCHEMA), ("v1", True, SCHEMA)))
        is None
    )


def test_existing_crs_must_fit_the_new_schema() -> None:
    existing = crd(("v1alpha1", True, SCHEMA))
    new = crd(("v1alpha1", True, STRICT))
    assert versions_to_check(existing, new) == ["v1alpha1"]
    problem = validation_problem(new, "v1alpha1", [CR])
    assert problem is not None
    assert (
        'Kind=Memcached "team-a/big": updated validation is too restrictive: spec.size:' in problem
    )
    assert validation_problem(crd(("v1alpha1", True, SCHEMA)), "v1alpha1", [CR]) is None


def test_openapi_extensions_do_not_break_validation() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "spec": {
                "type": "object",
                "nullable": True,
                "properties": {"port": {"x-kubernetes-int-or-string": True}},
            }
        },
    }
    assert (
        validation_problem(
            crd(("v1", True, schema)), "v1", [{"spec": {"port": "http"}}, {"spec": None}]
        )
        is None
    )
