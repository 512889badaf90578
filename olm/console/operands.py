"""Operands of an installed operator: the APIs its CSV owns, a starting object for the create
form (from `alm-examples`, else built from the CRD's schema), the form's YAML checked, and
the operand list's columns (`statusDescriptors`).

Invariants: pure; a submitted object is accepted only if it is one mapping of a kind the CSV
owns, in the operator's namespace; every refusal is one sentence naming what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

Obj = dict[str, Any]


@dataclass(frozen=True)
class OwnedApi:
    crd: str  # plural.group
    group: str
    version: str
    kind: str
    display_name: str
    description: str
    status_fields: tuple[tuple[str, str], ...]  # (path, display name)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    @property
    def plural(self) -> str:
        return self.crd.split(".", 1)[0]


def owned_apis(csv: Mapping[str, Any]) -> list[OwnedApi]:
    owned = ((csv.get("spec") or {}).get("customresourcedefinitions") or {}).get("owned") or []
    apis = []
    for item in owned:
        if not isinstance(item, Mapping) or "." not in str(item.get("name") or ""):
            continue
        fields = tuple(
            (str(d.get("path")), str(d.get("displayName") or d.get("path")))
            for d in item.get("statusDescriptors") or []
            if isinstance(d, Mapping) and d.get("path")
        )
        apis.append(
            OwnedApi(
                crd=str(item["name"]),
                group=str(item["name"]).split(".", 1)[1],
                version=str(item.get("version") or ""),
                kind=str(item.get("kind") or ""),
                display_name=str(item.get("displayName") or item.get("kind") or ""),
                description=str(item.get("description") or ""),
                status_fields=fields,
            )
        )
    return apis


def examples(csv: Mapping[str, Any]) -> list[Obj]:
    """The CSV's `alm-examples` (JSON list of objects); [] when absent or malformed."""
    annotations = (csv.get("metadata") or {}).get("annotations") or {}
    text = annotations.get("alm-examples") or annotations.get("olm.examples")
    try:
        parsed = json.loads(text) if text else []
    except ValueError:
        return []
    return [e for e in parsed if isinstance(e, dict)] if isinstance(parsed, list) else []


def _value(schema: Mapping[str, Any]) -> Any:
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "object":
        required = schema.get("required") or []
        properties = schema.get("properties") or {}
        return {k: _value(properties.get(k) or {}) for k in required}
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    return ""


def skeleton(api: OwnedApi, crd: Mapping[str, Any] | None, namespace: str) -> Obj:
    """A starting object for `api`: the CRD schema's required spec fields, with defaults."""
    spec: Any = {}
    for version in ((crd or {}).get("spec") or {}).get("versions") or []:
        if version.get("name") == api.version:
            schema = ((version.get("schema") or {}).get("openAPIV3Schema") or {}).get(
                "properties"
            ) or {}
            spec = _value(schema.get("spec") or {"type": "object"})
    return {
        "apiVersion": api.api_version,
        "kind": api.kind,
        "metadata": {"name": f"example-{api.kind.lower()}", "namespace": namespace},
        "spec": spec if isinstance(spec, dict) else {},
    }


def starting_object(
    api: OwnedApi, csv: Mapping[str, Any], crd: Mapping[str, Any] | None, namespace: str
) -> Obj:
    for example in examples(csv):
        if example.get("kind") == api.kind and str(example.get("apiVersion", "")).startswith(
            f"{api.group}/"
        ):
            found = json.loads(json.dumps(example))
            found.setdefault("metadata", {})["namespace"] = namespace
            return dict(found)
    return skeleton(api, crd, namespace)


def as_yaml(obj: Mapping[str, Any]) -> str:
    return str(yaml.safe_dump(dict(obj), sort_keys=False, default_flow_style=False))


def parse_operand(text: str, apis: Sequence[OwnedApi], namespace: str) -> tuple[Obj | None, str]:
    """(object, "") for a YAML text that is one operand of `apis`, else (None, why not)."""
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}" if where is not None else ""
        return None, f"YAML: cannot be read{at}; fix the syntax"
    if not isinstance(parsed, dict):
        return None, "YAML: write one object (a mapping with apiVersion, kind, metadata, spec)"
    kind, api_version = parsed.get("kind"), parsed.get("apiVersion")
    api = next((a for a in apis if a.kind == kind and a.api_version == api_version), None)
    if api is None:
        owned = ", ".join(f"{a.api_version} {a.kind}" for a in apis) or "none"
        return None, f"kind: {api_version} {kind} is not an API of this operator ({owned})"
    metadata = parsed.get("metadata")
    if not isinstance(metadata, dict) or not metadata.get("name"):
        return None, "metadata.name: give the object a name"
    if metadata.get("namespace") not in (None, "", namespace):
        return None, f"metadata.namespace: the operator runs in {namespace}; use it or leave it out"
    metadata["namespace"] = namespace
    return parsed, ""


def field_at(obj: Mapping[str, Any], path: str) -> str:
    """A statusDescriptor's `path` (dotted, under status) read from an operand, as text."""
    value: Any = obj.get("status") or {}
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)
