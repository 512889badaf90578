"""One Operator object: whether to create it and what its `status.components` says, as OLM
v0.38's Operator controller does (`pkg/controller/operators/operator_controller.go`,
`decorators/operator.go`).

- Components are the objects OLM's caches show (`objects.visible`) that carry the Operator's
  label key (`names.component_label_key` of its name).
- A missing Operator is created (`metadata.name`, `spec: {}`) when it has a component, and
  never otherwise; one the user deleted therefore comes back while components remain.
  An Operator is never deleted here, and neither is any component.
- `status.components` = `{labelSelector: {matchExpressions: [{key, operator: Exists}]},
  refs}`; `refs` (left out when empty) holds `apiVersion`, `kind`, `name`, `namespace` (not for
  cluster-scoped objects) and `conditions`, sorted by kind, apiVersion, namespace, name. A
  CSV's one condition is made from its phase; other objects' `status.conditions` are cut to
  OLM's Condition fields, times in whole seconds, UTC.
- The status is written only when it differs from what the object has.

Invariant: pure; deciding again over the object its writes produce plans nothing.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api.body import labels, meta, name, namespace
from olm.api.conditions import timestamp
from olm.api.kinds import KINDS, Kind
from olm.api.operator import (
    CONDITION_OPTIONAL_FIELDS,
    CSV_CONDITION_STATUS,
    SELECTOR_EXISTS,
    ComponentKind,
)
from olm.operator.names import component_label_key, operator_name_problem
from olm.operator.objects import CSV_KIND, visible

OPERATOR = KINDS[Kind.OPERATOR]
TIME_FIELDS = frozenset({"lastUpdateTime", "lastTransitionTime"})

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Component:
    kind: ComponentKind
    obj: Obj


@dataclass(frozen=True)
class OperatorPlan:
    create: dict[str, Any] | None = None  # the body to create
    status: dict[str, Any] | None = None  # the status merge patch (a null `refs` removes them)
    resource_version: str = ""  # what the status write was decided on ("" after a create)
    problem: str | None = None  # why nothing can be written


def _time(value: Any) -> str:
    """A condition time as OLM writes it back (metav1.Time: RFC 3339, seconds, UTC)."""
    text = str(value)
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        return text
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.UTC)
    return timestamp(parsed)


def _condition(source: Mapping[str, Any]) -> dict[str, Any]:
    condition = {"type": str(source.get("type") or ""), "status": str(source.get("status") or "")}
    for key in CONDITION_OPTIONAL_FIELDS:
        value = source.get(key)
        if value:
            condition[key] = _time(value) if key in TIME_FIELDS else str(value)
    return condition


def conditions(kind: ComponentKind, obj: Obj) -> list[dict[str, Any]]:
    """The conditions of a component's reference (OLM's jq queries over its status)."""
    status = obj.get("status")
    if kind.metadata_only:
        return []
    if kind.kind == CSV_KIND:
        status = status if isinstance(status, Mapping) else {}
        return [
            _condition(
                {
                    "type": status.get("phase"),
                    "status": CSV_CONDITION_STATUS,
                    **{k: status.get(k) for k in CONDITION_OPTIONAL_FIELDS},
                }
            )
        ]
    found = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(found, list):
        return []
    return [_condition(c) for c in found if isinstance(c, Mapping)]


def reference(kind: ComponentKind, obj: Obj) -> dict[str, Any]:
    ref: dict[str, Any] = {"apiVersion": kind.api_version, "kind": kind.kind, "name": name(obj)}
    if kind.namespaced and namespace(obj):
        ref["namespace"] = namespace(obj)
    found = conditions(kind, obj)
    if found:
        ref["conditions"] = found
    return ref


def label_selector(key: str) -> dict[str, Any]:
    return {"matchExpressions": [{"key": key, "operator": SELECTOR_EXISTS}]}


def listed(key: str, components: Sequence[Component]) -> list[Component]:
    """The components OLM lists for `key`: cached (`visible`) and carrying the key."""
    return [c for c in components if key in labels(c.obj) and visible(c.kind, c.obj)]


def components_status(key: str, components: Sequence[Component]) -> dict[str, Any]:
    refs = sorted(
        (reference(c.kind, c.obj) for c in listed(key, components)),
        key=lambda r: (r["kind"], r["apiVersion"], r.get("namespace", ""), r["name"]),
    )
    status: dict[str, Any] = {"labelSelector": label_selector(key)}
    if refs:
        status["refs"] = refs
    return status


def _same(current: Any, desired: Mapping[str, Any]) -> bool:
    if not isinstance(current, Mapping):
        return False
    return {k: v for k, v in current.items() if v not in (None, [])} == dict(desired)


def _patch(desired: Mapping[str, Any]) -> dict[str, Any]:
    return {"components": {**desired, "refs": desired.get("refs")}}


def decide_operator(
    operator_name: str, existing: Obj | None, components: Sequence[Component]
) -> OperatorPlan:
    """What to write for the Operator `operator_name` (`existing` as cached, or None)."""
    key = component_label_key(operator_name)
    if key is None:
        return OperatorPlan(
            problem=f'no component label key can be made from the name "{operator_name}"'
        )
    desired = components_status(key, components)
    if existing is None:
        if "refs" not in desired:
            return OperatorPlan()
        problem = operator_name_problem(operator_name)
        if problem is not None:
            return OperatorPlan(
                problem=f'the Operator name "{operator_name}" (from label {key}) would be '
                f"refused by the API server: {problem}. olm-py does not create it; its "
                "components keep their label"
            )
        body = {
            "apiVersion": OPERATOR.api_version,
            "kind": OPERATOR.kind.value,
            "metadata": {"name": operator_name},
            "spec": {},
        }
        return OperatorPlan(create=body, status=_patch(desired))
    if _same((existing.get("status") or {}).get("components"), desired):
        return OperatorPlan()
    return OperatorPlan(
        status=_patch(desired),
        resource_version=str(meta(existing).get("resourceVersion") or ""),
    )
