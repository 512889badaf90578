"""The API server's write semantics on plain data, for the in-memory gateway.

- `merge_patch`: RFC 7386 JSON merge patch (a None value removes the key).
- `json_patch`: RFC 6902 JSON patch (add, remove, replace, move, copy, test).
- `apply_fields` / `server_side_apply`: server-side apply as far as tests need it: the applied
  fields are merged into the live object, and fields this manager applied last time but no
  longer sends are removed. Lists are atomic (real SSA merges some lists by key).
- `selector_matches`: label selectors (`a=b`, `a==b`, `a!=b`, `a`, `!a`, `a in (x,y)`,
  `a notin (x,y)`).

Invariant: pure functions over JSON data; inputs are never modified.
"""

from __future__ import annotations

import copy
import re
from typing import Any

Path = tuple[str, ...]

# Fields that name an object rather than belong to anyone; apply never removes them.
_IDENTITY: frozenset[Path] = frozenset(
    {("apiVersion",), ("kind",), ("metadata",), ("metadata", "name"), ("metadata", "namespace")}
)


class PatchError(ValueError):
    """A patch that cannot be applied (the API server answers 422)."""


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer {path!r} must start with /")
    return [part.replace("~1", "/").replace("~0", "~") for part in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> Any:
    node = doc
    for part in parts[:-1]:
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError) as exc:
            raise PatchError(f"path {path!r} does not exist") from exc
    return node


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, last = _parent(doc, parts, path), parts[-1]
    try:
        return parent[int(last)] if isinstance(parent, list) else parent[last]
    except (KeyError, IndexError, ValueError) as exc:
        raise PatchError(f"path {path!r} does not exist") from exc


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    parent, last = _parent(doc, parts, path), parts[-1]
    try:
        return parent.pop(int(last)) if isinstance(parent, list) else parent.pop(last)
    except (KeyError, IndexError, ValueError) as exc:
        raise PatchError(f"path {path!r} does not exist") from exc


def _add(doc: Any, path: str, value: Any) -> Any:
    parts = _pointer(path)
    if not parts:
        return value
    parent, last = _parent(doc, parts, path), parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if not 0 <= index <= len(parent):
            raise PatchError(f"path {path!r}: index out of range")
        parent.insert(index, value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise PatchError(f"path {path!r}: parent is not a container")
    return doc


def json_patch(target: Any, operations: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(target)
    for op in operations:
        kind, path = op.get("op"), str(op.get("path", ""))
        if kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"test failed at {path!r}")
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "add":
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "replace":
            _get(doc, path)
            if _pointer(path):
                _remove(doc, path)
            doc = _add(doc, path, copy.deepcopy(op.get("value")))
        elif kind in ("move", "copy"):
            source = str(op.get("from", ""))
            value = _remove(doc, source) if kind == "move" else copy.deepcopy(_get(doc, source))
            doc = _add(doc, path, value)
        else:
            raise PatchError(f"unknown JSON patch op {kind!r}")
    return doc


def apply_fields(obj: dict[str, Any], prefix: Path = ()) -> frozenset[Path]:
    """Every field path an applied object sets (maps recursively; lists and scalars as leaves)."""
    fields: set[Path] = set()
    for key, value in obj.items():
        path = (*prefix, key)
        fields.add(path)
        if isinstance(value, dict):
            fields |= apply_fields(value, path)
    return frozenset(fields)


def _deep_merge(live: dict[str, Any], applied: dict[str, Any]) -> None:
    for key, value in applied.items():
        if isinstance(value, dict) and isinstance(live.get(key), dict):
            _deep_merge(live[key], value)
        else:
            live[key] = copy.deepcopy(value)


def _drop(obj: dict[str, Any], path: Path) -> None:
    node: Any = obj
    for key in path[:-1]:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None:
            return
    if isinstance(node, dict) and path[-1] in node:
        value = node[path[-1]]
        if not isinstance(value, dict) or not value:
            del node[path[-1]]


def server_side_apply(
    live: dict[str, Any] | None, applied: dict[str, Any], previously: frozenset[Path]
) -> tuple[dict[str, Any], frozenset[Path]]:
    """(the object after the apply, the fields the manager now owns)."""
    owned = apply_fields(applied)
    result = copy.deepcopy(live) if live is not None else {}
    for path in sorted(previously - owned - _IDENTITY, key=len, reverse=True):
        _drop(result, path)
    _deep_merge(result, applied)
    return result, owned


_TERM = re.compile(
    r"\s*(?:(?P<neg>!)\s*(?P<absent>[^\s,!=()]+)"
    r"|(?P<key>[^\s,!=()]+)\s*(?:(?P<op>==|=|!=)\s*(?P<value>[^\s,()]*)"
    r"|\s+(?P<setop>in|notin)\s*\((?P<values>[^)]*)\))?)\s*(?:,|$)"
)


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    position = 0
    text = selector.strip()
    while position < len(text):
        match = _TERM.match(text, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot parse label selector {selector!r}")
        position = match.end()
        if match["absent"]:
            if match["absent"] in labels:
                return False
            continue
        key = match["key"]
        if match["op"] in ("=", "=="):
            if labels.get(key) != match["value"]:
                return False
        elif match["op"] == "!=":
            if labels.get(key) == match["value"]:
                return False
        elif match["setop"]:
            values = {v.strip() for v in match["values"].split(",") if v.strip()}
            inside = key in labels and labels[key] in values
            if inside != (match["setop"] == "in"):
                return False
        elif key not in labels:
            return False
    return True
