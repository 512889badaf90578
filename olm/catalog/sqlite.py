"""Legacy SQLite index databases (`/database/index.db` of index images built with `opm index
add` / `opm registry add`), read with the standard library's sqlite3 into the catalog model.

- packages and default channels from `package`; channel membership from `channel_entry`;
- upgrade edges: `replaces` is the bundle's `operatorbundle.replaces` when the channel's
  entries record that edge (else the one edge they record), `skips` and `skipRange` from
  `operatorbundle`;
- properties from `properties` (duplicates dropped), with `olm.package` and `olm.gvk` (from
  `api_provider`) added when missing; `dependencies` become `olm.gvk.required` /
  `olm.package.required` / `olm.label.required` properties, as OLM converts them;
- the bundle's objects (the `bundle` column, a JSON stream) are inlined as
  `olm.bundle.object`; a bundle without them keeps only its image (`bundlepath`).

Invariant: the database is opened read-only; a file that is not such a database gives a catalog
with one problem, never an exception.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path
from typing import Any

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package, Problem
from olm.catalog.yamlio import DocumentError, iter_documents

DEPENDENCY_TYPES = {
    "olm.gvk": "olm.gvk.required",
    "olm.package": "olm.package.required",
    "olm.label": "olm.label.required",
}


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in con.execute(f"PRAGMA table_info({table})")}


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value) if value is not None else ""


def _value(raw: Any) -> Any:
    try:
        return json.loads(_text(raw))
    except ValueError:
        return _text(raw)


def _dependency(kind: str, value: Any) -> dict[str, Any] | None:
    if kind == "olm.constraint":
        return {"type": kind, "value": value}
    target = DEPENDENCY_TYPES.get(kind)
    if target is None:
        return None
    if kind == "olm.package" and isinstance(value, dict):
        value = {"packageName": value.get("packageName"), "versionRange": value.get("version")}
    return {"type": target, "value": value}


def load_sqlite(path: Path) -> Catalog:
    catalog = Catalog()
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        catalog.problems.append(
            Problem("sqlite", f"cannot open the index database: {exc}", path=str(path))
        )
        return catalog
    try:
        _load(con, catalog)
    except sqlite3.Error as exc:
        catalog.problems.append(
            Problem(
                "sqlite",
                f"not an operator-registry index database ({exc})",
                "build it with opm, or migrate it to a file-based catalog (opm migrate)",
                path=str(path),
            )
        )
    finally:
        con.close()
    return catalog


def _load(con: sqlite3.Connection, catalog: Catalog) -> None:
    wanted = ["name", "csv", "bundle", "bundlepath", "skiprange", "version", "replaces", "skips"]
    present = _columns(con, "operatorbundle")
    selected = [c if c in present else "NULL" for c in wanted]
    rows = {
        row[0]: dict(zip(wanted, row, strict=True))
        for row in con.execute(f"SELECT {', '.join(selected)} FROM operatorbundle")
    }
    properties: dict[str, list[dict[str, Any]]] = {}
    if "type" in _columns(con, "properties"):
        for kind, value, name in con.execute(
            "SELECT type, value, operatorbundle_name FROM properties"
        ):
            found = {"type": _text(kind), "value": _value(value)}
            if found not in properties.setdefault(_text(name), []):
                properties[_text(name)].append(found)
    if "type" in _columns(con, "dependencies"):
        for kind, value, name in con.execute(
            "SELECT type, value, operatorbundle_name FROM dependencies"
        ):
            converted = _dependency(_text(kind), _value(value))
            if converted is not None and converted not in properties.setdefault(_text(name), []):
                properties[_text(name)].append(converted)
    provided: dict[str, list[dict[str, str]]] = {}
    for group, version, kind, name in con.execute(
        "SELECT group_name, version, kind, operatorbundle_name FROM api_provider"
    ):
        provided.setdefault(_text(name), []).append(
            {"group": _text(group), "version": _text(version), "kind": _text(kind)}
        )
    entries: dict[tuple[str, str], list[tuple[int, str, int | None]]] = {}
    for entry_id, channel, package, name, replaces in con.execute(
        "SELECT entry_id, channel_name, package_name, operatorbundle_name, replaces "
        "FROM channel_entry ORDER BY entry_id"
    ):
        entries.setdefault((_text(package), _text(channel)), []).append(
            (entry_id, _text(name), replaces)
        )
    for name, default in con.execute("SELECT name, default_channel FROM package"):
        catalog.packages[_text(name)] = Package(_text(name), default_channel=_text(default))
    for (package_name, channel_name), rows_in in sorted(entries.items()):
        package = catalog.packages.setdefault(package_name, Package(package_name))
        by_id = {entry_id: name for entry_id, name, _ in rows_in}
        replaced: dict[str, set[str]] = {}
        for _, name, target in rows_in:
            replaced.setdefault(name, set())
            if target is not None and target in by_id:
                replaced[name].add(by_id[target])
        channel = Channel(channel_name, package_name)
        for name, edges in replaced.items():
            row = rows.get(name, {})
            skips = [s for s in _text(row.get("skips")).split(",") if s]
            declared = _text(row.get("replaces"))
            others = edges - set(skips)
            replaces = (
                declared if declared in edges else (next(iter(others)) if len(others) == 1 else "")
            )
            channel.entries.append(Entry(name, replaces, skips, _text(row.get("skiprange"))))
            if name not in package.bundles:
                package.bundles[name] = _bundle(name, package_name, row, properties, provided)
        package.channels[channel_name] = channel


def _bundle(
    name: str,
    package: str,
    row: dict[str, Any],
    properties: dict[str, list[dict[str, Any]]],
    provided: dict[str, list[dict[str, str]]],
) -> Bundle:
    props = list(properties.get(name, []))
    kinds = {p["type"] for p in props}
    if "olm.package" not in kinds:
        props.append(
            {
                "type": "olm.package",
                "value": {"packageName": package, "version": _text(row.get("version"))},
            }
        )
    if "olm.gvk" not in kinds:
        props += [{"type": "olm.gvk", "value": gvk} for gvk in provided.get(name, [])]
    objects: list[Any] = []
    try:
        objects = [d for _, d in iter_documents(_text(row.get("bundle")))]
    except DocumentError:
        objects = []
    for obj in objects:
        if isinstance(obj, dict):
            data = base64.b64encode(json.dumps(obj, sort_keys=True).encode()).decode()
            props.append({"type": "olm.bundle.object", "value": {"data": data}})
    return Bundle(
        name, package, image=_text(row.get("bundlepath")), properties=props, format="sqlite"
    )
