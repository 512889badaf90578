"""What a plan step writes over an object that already exists (OLM v0 `catalog/step_ensurer.go`).

Invariants:
- Owners are merged, never replaced: the live object's ownerReferences stay and the step's
  are added (one entry per uid). An upgrade's plan adds the new CSV beside the old one, so the
  garbage collector keeps the object when the old CSV goes (it only drops the dangling
  reference), and a plan that runs late can never strip a newer CSV's ownership (issue 16:
  the operator's ServiceAccount was deleted during upgrades when it could).
- A ServiceAccount keeps its secrets and its annotations (OLM's EnsureServiceAccount merges
  them too).
- Nothing is written when the live object already carries everything the step sets (OLM's
  DeepDerivative check), so a repeated pass writes nothing.
- Pure: inputs are never modified.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

# This module's objects are called `body`: the accessors keep a prefix.
from olm.api.body import annotations as body_annotations
from olm.api.body import meta as body_meta
from olm.api.kinds import KINDS, Kind
from olm.api.labels import MANAGED_VALUE, Label

CSV_KIND = KINDS[Kind.CLUSTER_SERVICE_VERSION].kind.value
SERVICE_ACCOUNT = "ServiceAccount"
# OLM's record, on a CRD, of each CSV it was installed with (`with_alongside`).
ALONGSIDE_PREFIX = "operatorframework.io/installed-alongside-"
_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3


def alongside_key(namespace: str, name: str) -> str:
    """OLM's annotation key for CSV `namespace/name`: the prefix and the 64-bit FNV-1a hash
    of "<namespace>/<name>" in lower-case hex (no padding)."""
    digest = _FNV64_OFFSET
    for byte in f"{namespace}/{name}".encode():
        digest = ((digest ^ byte) * _FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{ALONGSIDE_PREFIX}{digest:x}"


def alongside_refs(obj: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The (namespace, CSV) pairs a CRD's well-formed installed-alongside annotations name."""
    refs = []
    for key, value in body_annotations(obj or {}).items():
        parts = str(value).split("/")
        if key.startswith(ALONGSIDE_PREFIX) and len(parts) == 2:
            refs.append((parts[0], parts[1]))
    return refs


def with_alongside(
    manifest: Mapping[str, Any],
    live: Mapping[str, Any] | None,
    namespace: str,
    csv_name: str,
    present: Mapping[tuple[str, str], bool] | None = None,
) -> dict[str, Any]:
    """The CRD `manifest` annotated as installed alongside CSV `namespace/csv_name`, keeping
    the well-formed installed-alongside references the manifest and the live CRD already
    carry, except (as OLM) those `present` says name a CSV that is gone or a copy."""
    body = copy.deepcopy(dict(manifest))
    meta = body.setdefault("metadata", {})
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if not k.startswith(ALONGSIDE_PREFIX)
    }
    refs = [
        ref
        for source in (manifest, live)
        for ref in alongside_refs(source)
        if ref != (namespace, csv_name) and (present or {}).get(ref, True)
    ]
    if namespace and csv_name:
        refs.append((namespace, csv_name))
    for ref_namespace, ref_name in refs:
        annotations[alongside_key(ref_namespace, ref_name)] = f"{ref_namespace}/{ref_name}"
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    return body


def _owner_key(owner: Mapping[str, Any]) -> tuple[str, ...]:
    uid = str(owner.get("uid") or "")
    if uid:
        return ("uid", uid)
    return (
        "name",
        str(owner.get("apiVersion", "")),
        str(owner.get("kind", "")),
        str(owner.get("name", "")),
    )


def merge_owner_references(*sets: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every owner of every set, in order, once per uid (the first entry of a uid wins)."""
    merged: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    for owners in sets:
        for owner in owners:
            key = _owner_key(owner)
            if key not in seen:
                seen.add(key)
                merged.append(dict(owner))
    return merged


def resolve_owners(manifest: Mapping[str, Any], csv_uids: Mapping[str, str]) -> dict[str, Any]:
    """The manifest with each CSV owner's uid filled in from `csv_uids` (steps name their CSV,
    whose uid is unknown until it is created); owners still without a uid are dropped."""
    body = copy.deepcopy(dict(manifest))
    meta = body.setdefault("metadata", {})
    owners = []
    for owner in meta.get("ownerReferences") or []:
        owner = dict(owner)
        if owner.get("kind") == CSV_KIND and not owner.get("uid"):
            owner["uid"] = csv_uids.get(str(owner.get("name", "")), "")
        if owner.get("uid"):
            owners.append(owner)
    if owners:
        meta["ownerReferences"] = owners
    else:
        meta.pop("ownerReferences", None)
    return body


def with_csv_owner(manifest: Mapping[str, Any], owner: Mapping[str, Any]) -> dict[str, Any]:
    """`manifest` with `owner` (a CSV ownerReference) added, unless it already names that CSV."""
    body = copy.deepcopy(dict(manifest))
    meta = body.setdefault("metadata", {})
    owners = list(meta.get("ownerReferences") or [])
    if not any(
        o.get("kind") == owner.get("kind") and o.get("name") == owner.get("name") for o in owners
    ):
        meta["ownerReferences"] = [*owners, dict(owner)]
    return body


def managed(body: dict[str, Any]) -> dict[str, Any]:
    """`body` labelled `olm.managed=true`, as OLM labels every object a plan step writes
    (its step manifests do not carry the label)."""
    meta = body.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), Label.MANAGED.value: MANAGED_VALUE}
    return body


GENERATED_BY = "olm.generated-by"  # OLM's annotation naming the plan that made a Subscription


def generated_by(body: dict[str, Any], plan_name: str) -> dict[str, Any]:
    """A Subscription step's `body` annotated with the plan that writes it, as OLM's
    ExecutePlan annotates the Subscription it creates for a dependency; other kinds as given."""
    if body.get("kind") != KINDS[Kind.SUBSCRIPTION].kind.value:
        return body
    meta = body.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), GENERATED_BY: plan_name}
    return body


def update_for(live: Mapping[str, Any], desired: Mapping[str, Any]) -> dict[str, Any]:
    """What to apply over `live` so that it gets `desired` without losing what it has:
    its owners (all kinds) and, for a ServiceAccount, its secrets and annotations."""
    body = copy.deepcopy(dict(desired))
    meta = body.setdefault("metadata", {})
    live_meta = body_meta(live)
    owners = merge_owner_references(
        live_meta.get("ownerReferences") or [], meta.get("ownerReferences") or []
    )
    if owners:
        meta["ownerReferences"] = owners
    if body.get("kind") == SERVICE_ACCOUNT:
        body.pop("secrets", None)  # not applied: the live secrets stay as they are
        annotations = {**(live_meta.get("annotations") or {}), **(meta.get("annotations") or {})}
        if annotations:
            meta["annotations"] = annotations
    return body


def contains(live: Any, desired: Any) -> bool:
    """True when `live` already carries every field `desired` sets, with the same value."""
    if isinstance(desired, Mapping):
        return isinstance(live, Mapping) and all(
            key in live and contains(live[key], value) for key, value in desired.items()
        )
    if isinstance(desired, list):
        return (
            isinstance(live, list)
            and len(live) == len(desired)
            and all(contains(a, b) for a, b in zip(live, desired, strict=True))
        )
    return bool(live == desired)


def with_resource_version(body: Mapping[str, Any], live: Mapping[str, Any]) -> dict[str, Any]:
    """`body` carrying the live object's resourceVersion: the API server refuses the write
    (409) when the object changed since it was read, so owners merged from a stale copy can
    never overwrite newer ones."""
    result = dict(body)
    version = body_meta(live).get("resourceVersion")
    if version:
        result["metadata"] = {**body_meta(result), "resourceVersion": version}
    return result


def is_established(crd: Mapping[str, Any] | None) -> bool:
    conditions = {
        c.get("type"): c.get("status")
        for c in ((crd or {}).get("status") or {}).get("conditions") or []
    }
    return conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True"
