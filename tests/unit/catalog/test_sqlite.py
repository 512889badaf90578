"""Legacy SQLite index databases read into the catalog model (operator-registry's schema)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from olm.catalog.sqlite import load_sqlite

SCHEMA = """
CREATE TABLE operatorbundle (name TEXT PRIMARY KEY, csv TEXT, bundle TEXT, bundlepath TEXT,
  skiprange TEXT, version TEXT, replaces TEXT, skips TEXT, substitutesfor TEXT);
CREATE TABLE package (name TEXT PRIMARY KEY, default_channel TEXT);
CREATE TABLE channel (name TEXT, package_name TEXT, head_operatorbundle_name TEXT);
CREATE TABLE channel_entry (entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT,
  operatorbundle_name TEXT, replaces INTEGER, depth INTEGER);
CREATE TABLE api_provider (group_name TEXT, version TEXT, kind TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT);
CREATE TABLE properties (type TEXT, value TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT);
CREATE TABLE dependencies (type TEXT, value TEXT, operatorbundle_name TEXT,
  operatorbundle_version TEXT, operatorbundle_path TEXT);
"""

CSV = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {"name": "p.v2"},
}
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "xs.g"},
}


def database(tmp_path: Path, statements: list[tuple[str, tuple[Any, ...]]]) -> Path:
    path = tmp_path / "index.db"
    con = sqlite3.connect(path)
    con.executescript(SCHEMA)
    for sql, values in statements:
        con.execute(sql, values)
    con.commit()
    con.close()
    return path


BUNDLE = "INSERT INTO operatorbundle VALUES (?, ?, ?, ?, ?, ?, ?, ?, '')"
ENTRY = "INSERT INTO channel_entry VALUES (?, ?, 'p', ?, ?, 0)"

# p: v1 <- v2 (replaces) ; v3 skips v2 and replaces v2 in "stable"; "fast" has v3 alone.
ROWS: list[tuple[str, tuple[Any, ...]]] = [
    ("INSERT INTO package VALUES ('p', 'stable')", ()),
    (BUNDLE, ("p.v1", "", "", "quay.io/p-bundle:v1", "", "1.0.0", "", "")),
    (
        BUNDLE,
        (
            "p.v2",
            json.dumps(CSV),
            json.dumps(CSV) + json.dumps(CRD),
            "quay.io/p-bundle:v2",
            "",
            "2.0.0",
            "p.v1",
            "",
        ),
    ),
    (BUNDLE, ("p.v3", "", "", "quay.io/p-bundle:v3", "<3.0.0", "3.0.0", "p.v2", "p.v2,p.v1")),
    (ENTRY, (1, "stable", "p.v3", 2)),
    (ENTRY, (2, "stable", "p.v2", 3)),
    (ENTRY, (3, "stable", "p.v1", None)),
    (ENTRY, (4, "stable", "p.v3", 3)),  # the synthetic entry opm writes for a skip
    (ENTRY, (5, "fast", "p.v3", None)),
    ("INSERT INTO api_provider VALUES ('g', 'v1', 'X', 'p.v2', '2.0.0', '')", ()),
    (
        "INSERT INTO properties VALUES ('olm.package', ?, 'p.v3', '3.0.0', '')",
        (json.dumps({"packageName": "p", "version": "3.0.0"}),),
    ),
    (
        "INSERT INTO properties VALUES ('olm.package', ?, 'p.v3', '3.0.0', '')",
        (json.dumps({"packageName": "p", "version": "3.0.0"}),),
    ),
    ("INSERT INTO properties VALUES ('olm.maxOpenShiftVersion', '4.8', 'p.v3', '3.0.0', '')", ()),
    (
        "INSERT INTO dependencies VALUES ('olm.package', ?, 'p.v3', '3.0.0', '')",
        (json.dumps({"packageName": "q", "version": ">=1.0.0"}),),
    ),
    (
        "INSERT INTO dependencies VALUES ('olm.gvk', ?, 'p.v3', '3.0.0', '')",
        (json.dumps({"group": "g", "version": "v1", "kind": "Y"}),),
    ),
    ("INSERT INTO dependencies VALUES ('olm.unknown', '{}', 'p.v3', '3.0.0', '')", ()),
]


def test_channels_edges_properties_and_objects(tmp_path: Path) -> None:
    catalog = load_sqlite(database(tmp_path, ROWS))
    assert catalog.problems == []
    package = catalog.packages["p"]
    assert package.default_channel == "stable"
    stable = {
        e.name: (e.replaces, e.skips, e.skip_range) for e in package.channels["stable"].entries
    }
    assert stable == {
        "p.v3": ("p.v2", ["p.v2", "p.v1"], "<3.0.0"),
        "p.v2": ("p.v1", [], ""),
        "p.v1": ("", [], ""),
    }
    assert [(e.name, e.replaces) for e in package.channels["fast"].entries] == [("p.v3", "")]
    v2, v3 = package.bundles["p.v2"], package.bundles["p.v3"]
    assert v2.image == "quay.io/p-bundle:v2"
    assert [o["kind"] for o in v2.objects] == ["ClusterServiceVersion", "CustomResourceDefinition"]
    assert v2.props("olm.gvk") == [{"group": "g", "version": "v1", "kind": "X"}]
    assert v2.version == "2.0.0"
    assert v3.objects == [] and v3.image == "quay.io/p-bundle:v3"
    assert v3.props("olm.package") == [{"packageName": "p", "version": "3.0.0"}]
    assert v3.props("olm.maxOpenShiftVersion") == [4.8]
    assert v3.props("olm.package.required") == [{"packageName": "q", "versionRange": ">=1.0.0"}]
    assert v3.props("olm.gvk.required") == [{"group": "g", "version": "v1", "kind": "Y"}]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"plain text, not a database", "not an operator-registry index database"),
        (None, "not an operator-registry index database"),  # an SQLite file of another schema
    ],
)
def test_what_is_not_an_index_database_is_one_problem(
    tmp_path: Path, content: bytes | None, fragment: str
) -> None:
    path = tmp_path / "index.db"
    if content is None:
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE other (x TEXT)")
        con.commit()
        con.close()
    else:
        path.write_bytes(content)
    catalog = load_sqlite(path)
    assert [p.rule for p in catalog.problems] == ["sqlite"]
    assert fragment in catalog.problems[0].message
