"""What a plan's CRD step changes in the CRD the cluster has, and whether the upgrade is safe.

Per CRD step, against the live CRD (None: the plan creates it):
- versions added, versions removed (in the live CRD, absent from the new one) and versions
  no longer served (kept but `served: false`); a version served before and not after is a
  removed version (`Flag.CRD_VERSION_REMOVED`), "in use" when it is a stored version or
  objects of it exist;
- the storage version, when it changes;
- fields removed: per version in both, the schema properties the new schema no longer has
  (the top-most path only; nothing under `x-kubernetes-preserve-unknown-fields`, which keeps
  unknown fields);
- existing objects: the number read per version, and OLM's upgrade safety verdict from
  olm.installplan.crdsafety.crd_upgrade_problem, the very check the InstallPlan runs before
  it updates the CRD (no stored version dropped; every existing object of a version served
  before and after validates against the new schema). `objects_read` says whether the
  caller listed the objects of every version the check needs; when it did not, only the
  stored-versions half is judged, and the preview says the objects were not checked.

Invariant: pure; the CRDs and objects given are never changed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.installplan.crdsafety import (
    crd_upgrade_problem,
    stored_versions_problem,
    versions_to_check,
)

PRESERVE_UNKNOWN = "x-kubernetes-preserve-unknown-fields"
CustomResources = Mapping[tuple[str, str], list[dict[str, Any]]]


@dataclass(frozen=True)
class CrdChange:
    name: str
    created: bool
    versions_added: tuple[str, ...] = ()
    versions_removed: tuple[str, ...] = ()  # served before, not served (or gone) after
    storage: tuple[str, str] | None = None  # (before, after) when it changes
    stored_versions: tuple[str, ...] = ()  # the live CRD's status.storedVersions
    fields_removed: tuple[tuple[str, str], ...] = ()  # (version, dotted path)
    objects: tuple[tuple[str, int], ...] = ()  # (version, existing objects read)
    objects_read: bool = False
    problem: str | None = None  # OLM's upgrade safety verdict; None: safe

    @property
    def changed(self) -> bool:
        return self.created or bool(
            self.versions_added
            or self.versions_removed
            or self.storage
            or self.fields_removed
            or self.problem
        )

    @property
    def removed_in_use(self) -> tuple[str, ...]:
        """Removed versions that are stored versions or have objects."""
        counts = dict(self.objects)
        return tuple(
            v for v in self.versions_removed if v in self.stored_versions or counts.get(v, 0) > 0
        )


def _versions(crd: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {
        str(v["name"]): v
        for v in (crd.get("spec") or {}).get("versions") or []
        if isinstance(v, Mapping) and v.get("name")
    }


def _served(crd: Mapping[str, Any]) -> list[str]:
    return [name for name, v in _versions(crd).items() if v.get("served")]


def _storage(crd: Mapping[str, Any]) -> str:
    return next((name for name, v in _versions(crd).items() if v.get("storage")), "")


def _schema(version: Mapping[str, Any]) -> Mapping[str, Any]:
    schema = (version.get("schema") or {}).get("openAPIV3Schema")
    return schema if isinstance(schema, Mapping) else {}


def _fields(schema: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, bool]]:
    """(path, preserves unknown fields below it) of every property, parents first."""
    for name, sub in sorted((schema.get("properties") or {}).items()):
        if not isinstance(sub, Mapping):
            continue
        path = f"{prefix}.{name}" if prefix else str(name)
        yield path, bool(sub.get(PRESERVE_UNKNOWN))
        yield from _fields(sub, path)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _fields(items, f"{prefix}[]")


def fields_removed(old_schema: Mapping[str, Any], new_schema: Mapping[str, Any]) -> list[str]:
    """The top-most property paths of `old_schema` that `new_schema` no longer has."""
    if not old_schema or not new_schema or new_schema.get(PRESERVE_UNKNOWN):
        return []
    new_fields = dict(_fields(new_schema))
    open_paths = [p for p, keeps in new_fields.items() if keeps]
    removed: list[str] = []
    for path, _ in _fields(old_schema):
        if path in new_fields or any(
            path.startswith(f"{r}.") or path.startswith(f"{r}[") for r in removed
        ):
            continue
        if any(path.startswith(f"{p}.") or path.startswith(f"{p}[") for p in open_paths):
            continue
        removed.append(path)
    return removed


def crd_change(
    new: Mapping[str, Any],
    live: Mapping[str, Any] | None,
    custom_resources: CustomResources | None = None,
) -> CrdChange:
    """The change of CRD `new` over `live`; `custom_resources` (None: not read) maps
    (CRD name, version) to the existing objects of that version."""
    name = str(body.meta(new).get("name", ""))
    if live is None:
        return CrdChange(name, created=True, versions_added=tuple(_versions(new)))
    before, after = _versions(live), _versions(new)
    served_after = set(_served(new))
    storage = (_storage(live), _storage(new))
    removed_fields = [
        (version, path)
        for version in before
        if version in after
        for path in fields_removed(_schema(before[version]), _schema(after[version]))
    ]
    objects = tuple(
        (version, len(custom_resources[(name, version)]))
        for version in before
        if custom_resources is not None and (name, version) in custom_resources
    )
    # Every version the check needs listed, or the check of objects is not claimed at all.
    objects_read = custom_resources is not None and all(
        (name, v) in custom_resources for v in versions_to_check(dict(live), dict(new))
    )
    if custom_resources is not None and objects_read:
        problem = crd_upgrade_problem(live, new, custom_resources)
    else:
        problem = stored_versions_problem(dict(live), dict(new))
    return CrdChange(
        name,
        created=False,
        versions_added=tuple(v for v in after if v not in before),
        versions_removed=tuple(v for v in _served(live) if v not in served_after),
        storage=storage if storage[0] != storage[1] else None,
        stored_versions=tuple(
            str(v) for v in (live.get("status") or {}).get("storedVersions") or []
        ),
        fields_removed=tuple(removed_fields),
        objects=objects,
        objects_read=objects_read,
        problem=problem,
    )


def versions_to_read(live: Mapping[str, Any]) -> list[str]:
    """The live CRD's served versions: listing the objects of each tells how many exist and
    gives crd_upgrade_problem what it checks."""
    return _served(live)
