"""Reading a Kubernetes object held as a plain dict body: its metadata and the fields of it
every decision asks for (name, namespace, labels, annotations, key).

Invariants: a missing or null field reads as empty (`{}` or `""`), never as an error; names and
namespaces are strings; bodies are never modified.

No `from __future__ import annotations` here: it would bind the name `annotations`, which this
module defines. Read it as `body.annotations(obj)` (`from olm.api import body`) where a module has
that import.
"""

from collections.abc import Mapping
from typing import Any


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """`metadata` ({} when absent)."""
    return obj.get("metadata") or {}


def name(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name") or "")


def namespace(obj: Mapping[str, Any]) -> str:
    """The namespace ("" for a cluster-scoped object, or one not written yet)."""
    return str(meta(obj).get("namespace") or "")


def key(obj: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name), as stores and caches key objects."""
    return namespace(obj), name(obj)


def labels(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("labels") or {}


def annotations(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("annotations") or {}
