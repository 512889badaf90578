"""Bad catalogs give clear problems (file, location, rule, fix) and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olm.catalog.formats import load
from olm.catalog.inspect import inspect
from olm.catalog.render import to_yaml
from olm.catalog.validate import validate

GOOD = [
    {"schema": "olm.package", "name": "p", "defaultChannel": "alpha"},
    {
        "schema": "olm.channel",
        "package": "p",
        "name": "alpha",
        "entries": [{"name": "p.v1"}, {"name": "p.v2", "replaces": "p.v1"}],
    },
    {
        "schema": "olm.bundle",
        "package": "p",
        "name": "p.v1",
        "image": "example.com/p:v1",
        "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "1.0.0"}}],
    },
    {
        "schema": "olm.bundle",
        "package": "p",
        "name": "p.v2",
        "image": "example.com/p:v2",
        "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "2.0.0"}}],
    },
]


def write(tmp_path: Path, blobs: list[dict[str, object]], name: str = "catalog.json") -> Path:
    (tmp_path / name).write_text("".join(json.dumps(b) + "\n" for b in blobs))
    return tmp_path


def problems(tmp_path: Path, blobs: list[dict[str, object]]) -> list[str]:
    return [f"{p.rule}: {p.message}" for p in validate(load(write(tmp_path, blobs)))]


def test_the_good_catalog_is_valid(tmp_path: Path) -> None:
    assert problems(tmp_path, GOOD) == []


def test_malformed_yaml_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("schema: olm.package\nname: [unclosed\n")
    [problem] = validate(load(tmp_path))
    assert (
        problem.rule == "file-parse" and problem.path == "bad.yaml" and "line" in problem.location
    )


def test_malformed_json(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"schema": "olm.package", "name": }')
    [problem] = validate(load(tmp_path))
    assert problem.rule == "file-parse" and "invalid JSON" in problem.message


def test_missing_fields_are_all_reported(tmp_path: Path) -> None:
    found = problems(
        tmp_path,
        [
            {"name": "x"},
            {"schema": "olm.package", "name": "p"},
            {"schema": "olm.bundle", "name": "b"},
        ],
    )
    assert any(f.startswith("blob-missing-schema") for f in found)
    assert any("default channel must be set" in f for f in found)
    assert any('package name must be set for bundle "b"' in f for f in found)


def test_duplicate_bundles(tmp_path: Path) -> None:
    found = problems(tmp_path, [*GOOD, GOOD[2]])
    assert any('duplicate bundle "p.v1"' in f for f in found)


def test_bad_skip_range(tmp_path: Path) -> None:
    channel = {
        **GOOD[1],
        "entries": [{"name": "p.v1"}, {"name": "p.v2", "replaces": "p.v1", "skipRange": "~1.0.0"}],
    }
    found = problems(tmp_path, [GOOD[0], channel, *GOOD[2:]])
    assert any(f.startswith("skiprange") and "~1.0.0" in f for f in found)


def test_cycles_and_heads(tmp_path: Path) -> None:
    channel = {
        **GOOD[1],
        "entries": [{"name": "p.v1", "replaces": "p.v2"}, {"name": "p.v2", "replaces": "p.v1"}],
    }
    found = problems(tmp_path, [GOOD[0], channel, *GOOD[2:]])
    assert any("no channel head found in graph" in f for f in found)


def test_stranded_and_multiple_heads(tmp_path: Path) -> None:
    channel = {**GOOD[1], "entries": [{"name": "p.v1"}, {"name": "p.v2"}]}
    found = problems(tmp_path, [GOOD[0], channel, *GOOD[2:]])
    assert any("multiple channel heads found in graph: p.v1, p.v2" in f for f in found)


def test_wrong_types(tmp_path: Path) -> None:
    blobs = [
        {"schema": "olm.package", "name": 5},
        {**GOOD[0], "name": "q"},
        {"schema": "olm.channel", "package": "q", "name": "alpha", "entries": "p.v1"},
        {
            "schema": "olm.bundle",
            "package": "p",
            "name": "p.v3",
            "image": "x",
            "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": 3}}],
        },
    ]
    found = problems(tmp_path, [*GOOD, *blobs])
    assert any('expected value for key "name" to be a string' in f for f in found)
    assert any("entries must be a list" in f for f in found)
    assert any("version 3: must be a string" in f for f in found)


def test_bad_versions_and_images(tmp_path: Path) -> None:
    bundle = {
        **GOOD[3],
        "image": "UPPER/Case:tag",
        "properties": [{"type": "olm.package", "value": {"packageName": "p", "version": "v2"}}],
    }
    found = problems(tmp_path, [*GOOD[:3], bundle])
    assert any("invalid image pull spec" in f for f in found)
    assert any('version "v2"' in f for f in found)


def test_indexignore(tmp_path: Path) -> None:
    write(tmp_path, GOOD)
    (tmp_path / "README.md").write_text("# not a catalog: just words\n- a list\n")
    assert validate(load(tmp_path)) != []
    (tmp_path / ".indexignore").write_text("*.md\n")
    assert validate(load(tmp_path)) == []


blob_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
blob = st.fixed_dictionaries(
    {
        "schema": st.sampled_from(
            ["olm.package", "olm.channel", "olm.bundle", "olm.deprecations", "custom", 3]
        )
    },
    optional={
        "name": st.text(max_size=6) | st.integers(),
        "package": st.sampled_from(["p", "q", ""]),
        "defaultChannel": st.text(max_size=4),
        "entries": st.lists(
            st.dictionaries(
                st.sampled_from(["name", "replaces", "skips", "skipRange"]), blob_values, max_size=4
            ),
            max_size=3,
        )
        | blob_values,
        "properties": st.lists(
            st.dictionaries(st.sampled_from(["type", "value"]), blob_values, max_size=2), max_size=3
        )
        | blob_values,
        "image": blob_values,
    },
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(blob, max_size=6), st.text(max_size=40))
def test_fuzzed_catalogs_never_crash(
    tmp_path_factory: object, blobs: list[dict[str, object]], junk: str
) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "catalog.json").write_text("".join(json.dumps(b) + "\n" for b in blobs))
        (root / "junk.yaml").write_text(junk)
        catalog = load(root)
        validate(catalog)
        inspect(catalog)
        to_yaml(catalog)
