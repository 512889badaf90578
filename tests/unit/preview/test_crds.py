"""CRD changes of a plan, and the upgrade safety verdict: the InstallPlan's own check."""

from __future__ import annotations

import copy
from typing import Any

from olm.installplan.crdsafety import crd_upgrade_problem
from olm.preview.crds import crd_change, fields_removed

NAME = "memcacheds.cache.example.com"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "maximum": 10},
                "mode": {"type": "string"},
                "extra": {"type": "object", "properties": {"a": {"type": "string"}}},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "nodes": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                }
            },
        },
    },
}


def version(
    name: str, served: bool = True, storage: bool = False, schema: Any = None
) -> dict[str, Any]:
    return {
        "name": name,
        "served": served,
        "storage": storage,
        "schema": {"openAPIV3Schema": schema if schema is not None else SCHEMA},
    }


def crd(*versions: dict[str, Any], stored: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": NAME},
        "spec": {
            "group": "cache.example.com",
            "names": {"kind": "Memcached", "plural": "memcacheds"},
            "versions": list(versions),
        },
    }
    if stored is not None:
        body["status"] = {"storedVersions": stored}
    return body


def cr(size: int, api_version: str = "v1alpha1") -> dict[str, Any]:
    return {
        "apiVersion": f"cache.example.com/{api_version}",
        "kind": "Memcached",
        "metadata": {"name": f"m{size}", "namespace": "team-a"},
        "spec": {"size": size},
    }


LIVE = crd(version("v1alpha1", storage=True), stored=["v1alpha1"])


def test_a_new_crd_is_created() -> None:
    change = crd_change(crd(version("v1", storage=True)), None)
    assert change.created and change.changed and change.versions_added == ("v1",)
    assert change.problem is None


def test_the_same_crd_changes_nothing() -> None:
    change = crd_change(copy.deepcopy(LIVE), LIVE, {(NAME, "v1alpha1"): [cr(3)]})
    assert not change.changed and change.objects == (("v1alpha1", 1),) and change.objects_read


def test_dropping_a_stored_version_in_use_is_flagged_with_olms_verdict() -> None:
    new = crd(version("v1beta1", storage=True))
    objects = {(NAME, "v1alpha1"): [cr(3)]}
    change = crd_change(new, LIVE, objects)
    assert change.versions_added == ("v1beta1",) and change.versions_removed == ("v1alpha1",)
    assert change.removed_in_use == ("v1alpha1",)
    assert change.storage == ("v1alpha1", "v1beta1")
    # One helper for one job: the verdict is the InstallPlan's upgrade check, word for word.
    assert change.problem == crd_upgrade_problem(LIVE, new, objects)
    assert change.problem is not None and "removes version v1alpha1" in change.problem


def test_a_version_no_longer_served_is_removed_even_if_listed() -> None:
    live = crd(version("v1alpha1"), version("v1", storage=True), stored=["v1"])
    new = crd(version("v1alpha1", served=False), version("v1", storage=True))
    change = crd_change(new, live, {(NAME, "v1alpha1"): [], (NAME, "v1"): []})
    assert change.versions_removed == ("v1alpha1",) and change.removed_in_use == ()
    assert change.problem is None


def test_a_removed_version_with_objects_is_in_use() -> None:
    live = crd(version("v1alpha1"), version("v1", storage=True), stored=["v1"])
    new = crd(version("v1", storage=True))
    change = crd_change(new, live, {(NAME, "v1alpha1"): [cr(1)], (NAME, "v1"): [cr(1, "v1")]})
    assert change.removed_in_use == ("v1alpha1",)


def test_existing_objects_that_no_longer_validate_are_the_upgrade_checks_problem() -> None:
    strict = copy.deepcopy(SCHEMA)
    strict["properties"]["spec"]["properties"]["size"]["maximum"] = 3
    new = crd(version("v1alpha1", storage=True, schema=strict))
    objects = {(NAME, "v1alpha1"): [cr(2), cr(5)]}
    change = crd_change(new, LIVE, objects)
    assert change.problem == crd_upgrade_problem(LIVE, new, objects)
    assert change.problem is not None and "updated validation is too restrictive" in change.problem
    assert crd_change(new, LIVE, {(NAME, "v1alpha1"): [cr(2)]}).problem is None


def test_objects_not_read_judge_stored_versions_only() -> None:
    change = crd_change(crd(version("v1beta1", storage=True)), LIVE)
    assert not change.objects_read and change.objects == ()
    assert change.problem is not None and "stored version" in change.problem


def test_removed_fields_are_listed_top_most_per_version() -> None:
    smaller = copy.deepcopy(SCHEMA)
    del smaller["properties"]["spec"]["properties"]["extra"]
    del smaller["properties"]["status"]["properties"]["nodes"]["items"]["properties"]["name"]
    change = crd_change(crd(version("v1alpha1", storage=True, schema=smaller)), LIVE)
    assert change.fields_removed == (
        ("v1alpha1", "spec.extra"),
        ("v1alpha1", "status.nodes[].name"),
    )
    assert change.changed


def test_fields_under_preserve_unknown_are_kept() -> None:
    open_spec = copy.deepcopy(SCHEMA)
    open_spec["properties"]["spec"] = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert fields_removed(SCHEMA, open_spec) == []
    assert (
        fields_removed(SCHEMA, {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
        == []
    )
