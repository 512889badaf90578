"""OperatorGroup test world: a group body, the snapshot its decision reads (namespaces, sibling
groups, CSVs) at a fixed `NOW`."""

from __future__ import annotations

import datetime
from typing import Any

from olm.groups.decide import GroupSnapshot

STAMP = "2026-01-02T03:04:05Z"
NOW = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
EARLIER = "2026-01-01T00:00:00Z"
NAMESPACES = {"own": {}, "a": {"team": "x"}, "b": {"team": "y"}}


def group(
    spec: dict[str, Any] | None = None,
    status: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    deleting: bool = False,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "og", "namespace": "own", "resourceVersion": "7"}
    if annotations is not None:
        meta["annotations"] = annotations
    if deleting:
        meta["deletionTimestamp"] = EARLIER
    obj: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": meta,
        "spec": spec or {},
    }
    if status is not None:
        obj["status"] = status
    return obj


def snapshot(
    g: dict[str, Any] | None = None,
    *,
    siblings: tuple[str, ...] = ("og",),
    namespaces: dict[str, dict[str, str]] | None = None,
    terminating: bool = False,
    csvs: tuple[dict[str, Any], ...] = (),
) -> GroupSnapshot:
    return GroupSnapshot(
        namespace="own",
        name="og",
        group=g,
        sibling_names=siblings,
        namespaces=NAMESPACES if namespaces is None else namespaces,
        namespace_terminating=terminating,
        csvs=csvs,
        now=NOW,
    )
