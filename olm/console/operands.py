"""Operands of an installed operator: the APIs its CSV owns, a starting object for the create
form (from `alm-examples`, else built from the CRD's schema), the form's fields (from the
API's `specDescriptors`, else the schema's scalar `spec` fields), the submitted YAML checked
and the changed fields applied to it, and the operand list's columns (`statusDescriptors`).

Invariants: pure; a submitted object is accepted only if it is one mapping of a kind the CSV
owns, in the operator's namespace; a field is applied only when its value differs from the
one the form was shown with (so an edit of the YAML alone is kept); every refusal is one
sentence naming what to fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from olm.api import body

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
    spec_fields: tuple[tuple[str, str, str], ...] = ()  # (path, display name, description)

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
        spec_fields = tuple(
            (
                str(d.get("path")),
                str(d.get("displayName") or d.get("path")),
                str(d.get("description") or ""),
            )
            for d in item.get("specDescriptors") or []
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
                spec_fields=spec_fields,
            )
        )
    return apis


def examples(csv: Mapping[str, Any]) -> list[Obj]:
    """The CSV's `alm-examples` (JSON list of objects); [] when absent or malformed."""
    annotations = body.annotations(csv)
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


SCALARS = ("integer", "number", "boolean", "string")


@dataclass(frozen=True)
class Field:
    """One input of the generated form: a scalar under `spec`, at a dotted path."""

    path: str
    label: str
    kind: str  # one of SCALARS
    description: str
    value: str


def _spec_schema(crd: Mapping[str, Any] | None, version: str) -> Mapping[str, Any]:
    for served in ((crd or {}).get("spec") or {}).get("versions") or []:
        if served.get("name") == version:
            root = (served.get("schema") or {}).get("openAPIV3Schema") or {}
            spec = (root.get("properties") or {}).get("spec")
            return spec if isinstance(spec, Mapping) else {}
    return {}


def _schema_at(schema: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    for part in path.split("."):
        schema = (schema.get("properties") or {}).get(part) or {}
    return schema


def _scalar_paths(schema: Mapping[str, Any], prefix: str = "", depth: int = 2) -> list[str]:
    found: list[str] = []
    for name, sub in sorted((schema.get("properties") or {}).items()):
        if not isinstance(sub, Mapping):
            continue
        path = f"{prefix}{name}"
        if sub.get("type") in SCALARS:
            found.append(path)
        elif sub.get("type") == "object" and depth > 1:
            found.extend(_scalar_paths(sub, f"{path}.", depth - 1))
    return found


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _get(obj: Mapping[str, Any], path: str) -> Any:
    value: Any = obj.get("spec") or {}
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def form_fields(
    api: OwnedApi, crd: Mapping[str, Any] | None, start: Mapping[str, Any]
) -> list[Field]:
    """The form's inputs: the API's specDescriptors (scalars the schema types), else every
    scalar of the schema's `spec` (two levels deep), prefilled from `start`."""
    schema = _spec_schema(crd, api.version)
    described = [(p, label, about) for p, label, about in api.spec_fields]
    if not described:
        described = [(p, p, "") for p in _scalar_paths(schema)]
    fields = []
    for path, label, about in described:
        typed = _schema_at(schema, path)
        if schema and not typed:
            continue  # a descriptor of a path the schema does not have
        kind = str(typed.get("type") or "string")
        if kind not in SCALARS:
            continue
        fields.append(
            Field(
                path,
                label,
                kind,
                about or str(typed.get("description") or ""),
                _text(_get(start, path)),
            )
        )
    return fields


def _typed(kind: str, text: str) -> tuple[Any, str]:
    if kind == "integer":
        try:
            return int(text), ""
        except ValueError:
            return None, "a whole number"
    if kind == "number":
        try:
            return float(text), ""
        except ValueError:
            return None, "a number"
    if kind == "boolean":
        return text == "true", ""
    return text, ""


def apply_fields(
    obj: Obj, fields: Sequence[Field], submitted: Mapping[str, str], shown: Mapping[str, str]
) -> str:
    """Set in `obj["spec"]` each field whose submitted value differs from the one shown; ""
    or why a value cannot be used."""
    for field in fields:
        value = submitted.get(field.path)
        if value is None or value == shown.get(field.path, field.value):
            continue
        typed, wanted = _typed(field.kind, value.strip())
        if wanted:
            return f"{field.label}: write {wanted}"
        target = obj.setdefault("spec", {})
        parts = field.path.split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                return f"{field.label}: the YAML has no object at {part}"
        target[parts[-1]] = typed
    return ""
