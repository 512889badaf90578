"""Operands: owned APIs of a CSV, the create form's starting object, the submitted YAML."""

from __future__ import annotations

import json
from typing import Any

from olm.console.operands import (
    apply_fields,
    as_yaml,
    examples,
    field_at,
    form_fields,
    owned_apis,
    parse_operand,
    starting_object,
)

CSV: dict[str, Any] = {
    "metadata": {"annotations": {}},
    "spec": {
        "customresourcedefinitions": {
            "owned": [
                {
                    "name": "memcacheds.cache.example.com",
                    "version": "v1alpha1",
                    "kind": "Memcached",
                    "displayName": "Memcached",
                    "statusDescriptors": [{"path": "nodes", "displayName": "Nodes"}],
                },
                {"name": "broken"},
            ]
        }
    },
}
CRD = {
    "spec": {
        "versions": [
            {
                "name": "v1alpha1",
                "schema": {
                    "openAPIV3Schema": {
                        "properties": {
                            "spec": {
                                "type": "object",
                                "required": ["size", "mode", "tls"],
                                "properties": {
                                    "size": {"type": "integer", "minimum": 1},
                                    "mode": {"type": "string", "default": "fast"},
                                    "tls": {"type": "boolean"},
                                    "optional": {"type": "string"},
                                },
                            }
                        }
                    }
                },
            }
        ]
    }
}


def test_owned_apis_skip_malformed_entries() -> None:
    (api,) = owned_apis(CSV)
    assert (api.api_version, api.kind, api.plural) == (
        "cache.example.com/v1alpha1",
        "Memcached",
        "memcacheds",
    )
    assert api.status_fields == (("nodes", "Nodes"),)


def test_the_schema_makes_a_starting_object_without_examples() -> None:
    (api,) = owned_apis(CSV)
    start = starting_object(api, CSV, CRD, "shop")
    assert start == {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "example-memcached", "namespace": "shop"},
        "spec": {"size": 1, "mode": "fast", "tls": False},
    }
    assert starting_object(api, CSV, None, "shop")["spec"] == {}


def test_alm_examples_come_first() -> None:
    example = {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "x"},
        "spec": {"size": 3},
    }
    csv = {**CSV, "metadata": {"annotations": {"alm-examples": json.dumps([example])}}}
    (api,) = owned_apis(csv)
    assert starting_object(api, csv, CRD, "shop")["spec"] == {"size": 3}
    assert examples({"metadata": {"annotations": {"alm-examples": "not json"}}}) == []


def test_the_submitted_yaml_is_checked() -> None:
    apis = owned_apis(CSV)
    good, why = parse_operand(as_yaml(starting_object(apis[0], CSV, CRD, "shop")), apis, "shop")
    assert why == "" and good is not None and good["metadata"]["namespace"] == "shop"
    cases = {
        "kind: [": "YAML: cannot be read at line",
        "- a list": "YAML: write one object",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}": "kind: v1 Pod is not an API of this operator",
        "apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {}": "metadata.name",
        "apiVersion: cache.example.com/v1alpha1\nkind: Memcached\nmetadata: {name: a, namespace: other}": "metadata.namespace",
    }
    for text, words in cases.items():
        obj, why = parse_operand(text, apis, "shop")
        assert obj is None and why.startswith(words), (text, why)


def test_status_fields_are_read_by_path() -> None:
    operand = {"status": {"nodes": ["a", "b"], "deep": {"ready": "yes"}}}
    assert field_at(operand, "nodes") == '["a", "b"]'
    assert field_at(operand, "deep.ready") == "yes" and field_at(operand, "missing.x") == ""


def test_the_form_fields_come_from_the_schema_or_the_spec_descriptors() -> None:
    (api,) = owned_apis(CSV)
    start = starting_object(api, CSV, CRD, "shop")
    fields = form_fields(api, CRD, start)
    assert [(f.path, f.kind, f.value) for f in fields] == [
        ("mode", "string", "fast"),
        ("optional", "string", ""),
        ("size", "integer", "1"),
        ("tls", "boolean", "false"),
    ]
    described = dict(CSV["spec"]["customresourcedefinitions"]["owned"][0])
    described["specDescriptors"] = [
        {"path": "size", "displayName": "Size", "description": "How many pods"},
        {"path": "nested", "displayName": "Not a scalar"},
    ]
    csv = {"spec": {"customresourcedefinitions": {"owned": [described]}}}
    (api,) = owned_apis(csv)
    (size,) = form_fields(api, CRD, start)
    assert (size.label, size.description, size.value) == ("Size", "How many pods", "1")


def test_only_changed_fields_are_applied() -> None:
    (api,) = owned_apis(CSV)
    start = starting_object(api, CSV, CRD, "shop")
    fields = form_fields(api, CRD, start)
    obj = {"spec": {"size": 5, "mode": "fast"}}
    shown = {f.path: f.value for f in fields}
    submitted = {**shown, "mode": "slow", "tls": "true"}
    assert apply_fields(obj, fields, submitted, shown) == ""
    assert obj["spec"] == {"size": 5, "mode": "slow", "tls": True}  # size kept from the YAML
    assert apply_fields(obj, fields, {"size": "many"}, shown) == "size: write a whole number"
