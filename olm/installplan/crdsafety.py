"""Is it safe to replace an existing CRD with a bundle's version of it? (OLM v0 §3.4)

1. Every version in the existing CRD's `status.storedVersions` must still be in the new CRD,
   or stored objects would become unreadable.
2. Every existing custom resource of a version served before and after must validate against
   the new schema of that version.
Each problem names the CRD, the resource and the field, in OLM's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jsonschema

from olm.api import body

# OpenAPI keywords that are not JSON Schema (or must not constrain here).
_IGNORED = (
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "nullable",
    "format",
)


def _json_schema(schema: Any) -> Any:
    if isinstance(schema, dict):
        converted = {k: _json_schema(v) for k, v in schema.items() if k not in _IGNORED}
        if schema.get("nullable") and "type" in converted:
            converted["type"] = [converted["type"], "null"]
        if schema.get("x-kubernetes-int-or-string"):
            converted.pop("type", None)
        return converted
    if isinstance(schema, list):
        return [_json_schema(item) for item in schema]
    return schema


def _versions(crd: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        v["name"]: v
        for v in (crd.get("spec") or {}).get("versions") or []
        if isinstance(v, dict) and "name" in v
    }


def stored_versions_problem(existing: dict[str, Any], new: dict[str, Any]) -> str | None:
    name = existing["metadata"]["name"]
    kept = set(_versions(new))
    for version in (existing.get("status") or {}).get("storedVersions") or []:
        if version not in kept:
            return f'risk of data loss updating "{name}": new CRD removes version {version} that is listed as a stored version on the existing CRD'
    return None


def versions_to_check(existing: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Versions served before and after: their existing objects must fit the new schema."""
    before, after = _versions(existing), _versions(new)
    return sorted(v for v in before if before[v].get("served") and after.get(v, {}).get("served"))


def validation_problem(
    new: dict[str, Any], version: str, objects: list[dict[str, Any]]
) -> str | None:
    name = new["metadata"]["name"]
    schema = ((_versions(new).get(version) or {}).get("schema") or {}).get("openAPIV3Schema")
    if not schema:
        return None
    validator = jsonschema.Draft202012Validator(_json_schema(schema))
    group = (new.get("spec") or {}).get("group", "")
    kind = ((new.get("spec") or {}).get("names") or {}).get("kind", "")
    for obj in objects:
        errors = sorted(
            validator.iter_errors({k: v for k, v in obj.items() if k != "metadata"}),
            key=lambda e: list(e.absolute_path),
        )
        if errors:
            error = errors[0]
            meta = body.meta(obj)
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            field = ".".join(str(p) for p in error.absolute_path) or "(root)"
            return (
                f'error validating existing CRs against new CRD\'s schema for "{name}": error validating '
                f'{group}/{version}, Kind={kind} "{where}": updated validation is too restrictive: {field}: {error.message}'
            )
    return None


def crd_upgrade_problem(
    live: Mapping[str, Any],
    new: Mapping[str, Any],
    custom_resources: Mapping[tuple[str, str], list[dict[str, Any]]],
) -> str | None:
    """OLM's CRD upgrade safety for an existing CRD (§3.4), over the listed custom resources."""
    existing, manifest = dict(live), dict(new)
    problem = stored_versions_problem(existing, manifest)
    if problem:
        return problem
    name = str(body.meta(new).get("name", ""))
    for version in versions_to_check(existing, manifest):
        problem = validation_problem(manifest, version, custom_resources.get((name, version), []))
        if problem:
            return problem
    return None
