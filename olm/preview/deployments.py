"""What an upgrade changes in the operator's Deployments: the new CSV's install strategy
(`spec.install.spec.deployments`) against the replaced CSV's, by Deployment name.

Per Deployment: added, removed (the garbage collector deletes it with the old CSV) or changed;
per container (and init container) by name: added, removed, image, env (by variable name: a
value or valueFrom added, removed or changed) and resources (requests and limits, by resource).
Also the ServiceAccount and replicas, which decide who the operator runs as and how many.
A Deployment whose strategy entry is the same in both reports nothing.

Invariant: pure; the CSVs given are never changed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.preview import Change


@dataclass(frozen=True)
class FieldChange:
    """`field` of the Deployment or a container, `before` -> `after` ("" when absent)."""

    field: str
    before: str
    after: str


@dataclass(frozen=True)
class ContainerChange:
    name: str
    change: Change  # ADDED, REMOVED or CHANGED
    fields: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class DeploymentChange:
    csv: str
    name: str
    change: Change  # ADDED, REMOVED or CHANGED
    fields: tuple[FieldChange, ...] = ()
    containers: tuple[ContainerChange, ...] = ()

    @property
    def images(self) -> tuple[tuple[str, str, str], ...]:
        """(container, before, after) of every image change."""
        return tuple(
            (c.name, f.before, f.after)
            for c in self.containers
            for f in c.fields
            if f.field == "image"
        )


def _deployments(csv: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    install = (((csv or {}).get("spec") or {}).get("install") or {}).get("spec") or {}
    return {
        str(d["name"]): d.get("spec") or {}
        for d in install.get("deployments") or []
        if isinstance(d, Mapping) and d.get("name")
    }


def _text(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _containers(spec: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    pod = ((spec.get("template") or {}).get("spec")) or {}
    found: dict[str, Mapping[str, Any]] = {}
    for key, prefix in (("initContainers", "init:"), ("containers", "")):
        for container in pod.get(key) or []:
            if isinstance(container, Mapping) and container.get("name"):
                found[prefix + str(container["name"])] = container
    return found


def _env(container: Mapping[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for var in container.get("env") or []:
        if isinstance(var, Mapping) and var.get("name"):
            if "valueFrom" in var:
                env[str(var["name"])] = "from " + _text(var["valueFrom"])
            else:
                env[str(var["name"])] = _text(var.get("value", ""))
    return env


def _pairs(before: Mapping[str, str], after: Mapping[str, str], prefix: str) -> list[FieldChange]:
    return [
        FieldChange(f"{prefix}{key}", before.get(key, ""), after.get(key, ""))
        for key in sorted({*before, *after})
        if before.get(key, "") != after.get(key, "")
    ]


def _resources(container: Mapping[str, Any]) -> dict[str, str]:
    resources = container.get("resources") or {}
    return {
        f"{kind}.{name}": _text(value)
        for kind in ("requests", "limits")
        for name, value in (resources.get(kind) or {}).items()
    }


def _container_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldChange]:
    fields = _pairs({"image": _text(old.get("image"))}, {"image": _text(new.get("image"))}, "")
    fields += _pairs(_env(old), _env(new), "env.")
    fields += _pairs(_resources(old), _resources(new), "resources.")
    return fields


def _deployment_fields(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[FieldChange]:
    def account(spec: Mapping[str, Any]) -> str:
        return _text(((spec.get("template") or {}).get("spec") or {}).get("serviceAccountName"))

    return _pairs(
        {"serviceAccountName": account(old), "replicas": _text(old.get("replicas"))},
        {"serviceAccountName": account(new), "replicas": _text(new.get("replicas"))},
        "",
    )


def _change(
    csv: str, name: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> DeploymentChange | None:
    before, after = _containers(old), _containers(new)
    containers: list[ContainerChange] = []
    for container in [*before, *(c for c in after if c not in before)]:
        if container not in after:
            containers.append(ContainerChange(container, Change.REMOVED))
        elif container not in before:
            fields = _container_fields({}, after[container])
            containers.append(ContainerChange(container, Change.ADDED, tuple(fields)))
        elif fields := _container_fields(before[container], after[container]):
            containers.append(ContainerChange(container, Change.CHANGED, tuple(fields)))
    fields = _deployment_fields(old, new)
    if not containers and not fields:
        return None
    return DeploymentChange(csv, name, Change.CHANGED, tuple(fields), tuple(containers))


def deployment_changes(
    new: Mapping[str, Any], old: Mapping[str, Any] | None
) -> list[DeploymentChange]:
    """The Deployments `new` adds, removes and changes against `old` (None: a fresh install)."""
    csv = str(body.meta(new).get("name", ""))
    before, after = _deployments(old), _deployments(new)
    changes: list[DeploymentChange] = []
    for name, spec in after.items():
        if name not in before:
            added = _change(csv, name, {}, spec)
            changes.append(
                DeploymentChange(
                    csv,
                    name,
                    Change.ADDED,
                    added.fields if added else (),
                    added.containers if added else (),
                )
            )
        elif change := _change(csv, name, before[name], spec):
            changes.append(change)
    changes.extend(
        DeploymentChange(csv, name, Change.REMOVED) for name in before if name not in after
    )
    return changes
