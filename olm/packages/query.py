"""Answering PackageManifest requests: which manifests a namespace sees, selectors, the
`kubectl get` table, the icon and the discovery documents.

Invariants (OLM v0.38's packageserver, docs/packagemanifests.md):
- a namespaced request sees its namespace's catalogs, then the global catalog namespace's, and
  every item comes back with `metadata.namespace` set to the namespace asked for; an
  all-namespaces request sees every catalog, each item in its catalog's namespace;
- Get answers the first visible item of that name (a namespace's own catalog first);
- only `metadata.name` is a supported field selector; label selectors are any;
- icons never appear in Get, List or Watch answers, only through the `icon` subresource;
- columns: Name, Catalog (the catalog's display name), Age.
Pure: manifests and the current time in, response bodies out.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api.conditions import parse_time
from olm.packages.manifest import API_VERSION, KIND
from olm.packages.selectors import (
    Requirement,
    SelectorError,
    UnsupportedSelector,
    matches,
    parse_fields,
)

GROUP = "packages.operators.coreos.com"
VERSION = "v1"
RESOURCE = "packagemanifests"
ICON_SUBRESOURCE = "icon"
VERBS = ("get", "list", "watch")
NAME_FIELD = "metadata.name"
FIELD_LABELS = (NAME_FIELD, "metadata.namespace")

# olm-py's own placeholder for a package without an icon (a plain grey box).
DEFAULT_ICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">'
    b'<rect x="4" y="4" width="56" height="56" rx="10" fill="#d1d1d1"/>'
    b'<rect x="20" y="20" width="24" height="24" rx="4" fill="#8d8d8f"/></svg>\n'
)
DEFAULT_ICON_TYPE = "image/svg+xml"


@dataclass(frozen=True)
class Visible:
    """The manifests of one ready catalog."""

    namespace: str
    name: str
    manifests: Sequence[Mapping[str, Any]]


def name_selected(field_selector: str) -> str:
    """The name a field selector asks for ("" for every name); SelectorError otherwise.

    As packageserver answers: only `metadata.name` and `metadata.namespace` are fields at all
    (the API machinery's default field labels); of those, only an exact `metadata.name` (the
    first one) selects; any other selector is refused naming its first field."""
    terms = parse_fields(field_selector)
    for field, _, _ in terms:
        if field not in FIELD_LABELS:
            raise SelectorError(
                f'"{field}" is not a known field selector: only '
                + ", ".join(f'"{known}"' for known in FIELD_LABELS)
            )
    for field, operator, value in terms:
        if field == NAME_FIELD and operator == "=":
            return value
    if terms:
        raise UnsupportedSelector(f"field label not supported: {terms[0][0]}")
    return ""


def visible(
    catalogs: Iterable[Visible],
    namespace: str,
    global_namespace: str,
    labels: tuple[Requirement, ...] = (),
    name: str = "",
    keep_icons: bool = False,
) -> list[dict[str, Any]]:
    """What a request in `namespace` ("" for all namespaces) sees, icons blanked unless
    `keep_icons` (the icon subresource's own read)."""
    catalogs = list(catalogs)
    if namespace:
        order = [namespace] + ([global_namespace] if namespace != global_namespace else [])
        chosen = [c for ns in order for c in sorted(catalogs, key=_by_name) if c.namespace == ns]
    else:
        chosen = sorted(catalogs, key=lambda c: (c.namespace, c.name))
    found = []
    for catalog in chosen:
        for manifest in catalog.manifests:
            meta = manifest["metadata"]
            if name and meta["name"] != name:
                continue
            if not matches(labels, meta.get("labels") or {}):
                continue
            found.append(response_item(manifest, namespace, keep_icons))
    return found


def _by_name(catalog: Visible) -> str:
    return catalog.name


def response_item(
    manifest: Mapping[str, Any], namespace: str = "", keep_icons: bool = False
) -> dict[str, Any]:
    """A copy for an answer: icons blanked, the namespace asked for (if any) in metadata."""
    item = dict(manifest)
    item["metadata"] = dict(manifest["metadata"])
    if namespace:
        item["metadata"]["namespace"] = namespace
    if keep_icons:
        return item
    status = dict(manifest["status"])
    status["channels"] = [
        {**channel, "currentCSVDesc": _without_icon(channel["currentCSVDesc"])}
        for channel in status["channels"]
    ]
    item["status"] = status
    return item


def _without_icon(desc: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in desc.items() if k != "icon"}


def manifest_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "kind": f"{KIND}List",
        "apiVersion": API_VERSION,
        "metadata": {},
        "items": items,
    }


def human_duration(seconds: float) -> str:
    """apimachinery's HumanDuration, as `kubectl get` shows an age."""
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(manifest: Mapping[str, Any], now: datetime.datetime) -> str:
    created = manifest["metadata"].get("creationTimestamp")
    if not created:
        return "<unknown>"
    when = parse_time(str(created))
    if when is None:
        return "<unknown>"
    return human_duration((now - when).total_seconds())


COLUMNS = (
    {
        "name": "Name",
        "type": "string",
        "format": "name",
        "description": "The package's name: unique in a catalog.",
        "priority": 0,
    },
    {
        "name": "Catalog",
        "type": "string",
        "format": "",
        "description": "The source catalog for this package",
        "priority": 0,
    },
    {
        "name": "Age",
        "type": "string",
        "format": "",
        "description": "Time since the catalog's creation.",
        "priority": 0,
    },
)


def _row_object(manifest: Mapping[str, Any], include: str) -> dict[str, Any] | None:
    if include == "None":
        return None
    if include == "Object":
        return dict(manifest)
    meta = manifest["metadata"]
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {**meta, "labels": dict(meta.get("labels") or {})},
    }


def catalog_ages(catalogs: Iterable[Visible], now: datetime.datetime) -> tuple[str, ...]:
    """The AGE cell of each catalog's manifests (all of a catalog's manifests carry its
    CatalogSource's creationTimestamp): what a Table depends on besides the manifests."""
    return tuple(age(c.manifests[0], now) if c.manifests else "" for c in catalogs)


def table(
    items: Sequence[Mapping[str, Any]], now: datetime.datetime, include: str = "Metadata"
) -> dict[str, Any]:
    """The `meta.k8s.io/v1` Table `kubectl get` asks for (`Accept: ...;as=Table`)."""
    rows = []
    ages: dict[Any, str] = {}  # by creationTimestamp: one parse per catalog, not per row
    for manifest in items:
        created = manifest["metadata"].get("creationTimestamp")
        if created not in ages:
            ages[created] = age(manifest, now)
        row: dict[str, Any] = {
            "cells": [
                manifest["metadata"]["name"],
                manifest["status"].get("catalogSourceDisplayName", ""),
                ages[created],
            ]
        }
        obj = _row_object(manifest, include)
        if obj is not None:
            row["object"] = obj
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": list(COLUMNS),
        "rows": rows,
    }


@dataclass(frozen=True)
class Icon:
    data: bytes
    media_type: str
    etag: str


def icon(manifest: Mapping[str, Any]) -> Icon:
    """The default channel's head CSV's first icon, decoded; the placeholder without one."""
    status = manifest["status"]
    for channel in status.get("channels") or []:
        if channel["name"] != status.get("defaultChannel"):
            continue
        icons = channel["currentCSVDesc"].get("icon") or []
        if not icons:
            break
        first = icons[0]
        try:
            data = base64.b64decode(first.get("base64data", ""))
        except (binascii.Error, ValueError):
            data = b""
        etag = (
            '"'
            + ".".join((manifest["metadata"]["name"], channel["name"], channel["currentCSV"]))
            + '"'
        )
        return Icon(data, first.get("mediatype", ""), etag)
    return Icon(DEFAULT_ICON, DEFAULT_ICON_TYPE, "")


def resource_list() -> dict[str, Any]:
    """`/apis/packages.operators.coreos.com/v1`."""
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{GROUP}/{VERSION}",
        "resources": [
            {
                "name": RESOURCE,
                "singularName": "packagemanifest",
                "namespaced": True,
                "kind": KIND,
                "verbs": list(VERBS),
            },
            {
                "name": f"{RESOURCE}/{ICON_SUBRESOURCE}",
                "singularName": "",
                "namespaced": True,
                "kind": KIND,
                "verbs": ["get"],
            },
        ],
    }


def api_group() -> dict[str, Any]:
    version = {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": GROUP,
        "versions": [version],
        "preferredVersion": version,
    }


def api_group_list() -> dict[str, Any]:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]}


def status_error(code: int, reason: str, message: str, name: str = "") -> dict[str, Any]:
    """A `v1` Status answer, as kubectl prints errors."""
    details: dict[str, Any] = {"group": GROUP, "kind": RESOURCE}
    if name:
        details["name"] = name
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": details,
        "code": code,
    }
    if not reason:  # an unknown reason: the API machinery writes neither reason nor details
        del status["reason"], status["details"]
    return status


def not_found(name: str) -> dict[str, Any]:
    return status_error(404, "NotFound", f'{RESOURCE}.{GROUP} "{name}" not found', name)
