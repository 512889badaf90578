"""The verified cache every tool build shares: complete only when its record, written last,
vouches for every file; reused without building; rebuilt (and checked again) otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from olm.devcluster.verifiedcache import (
    MANIFEST,
    BuildError,
    ensure_built,
    manifest_problems,
    record_problems,
    sha256_file,
    write_manifest,
    write_record,
)
from olm.progress import QUIET

INPUTS = {"module": "example.com/tool", "version": "v1.0.0"}


def _sealed(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "tool").write_bytes(b"tool binary")
    write_manifest(root, ["bin/tool"], inputs=INPUTS)
    return root


def test_the_manifest_lists_size_and_sha256_beside_what_the_caller_records(
    tmp_path: Path,
) -> None:
    root = _sealed(tmp_path)
    manifest = json.loads((root / MANIFEST).read_text())
    assert manifest == {
        "inputs": INPUTS,
        "files": {"bin/tool": {"size": 11, "sha256": sha256_file(root / "bin" / "tool")}},
    }
    assert not (root / (MANIFEST + ".tmp")).exists()
    assert manifest_problems(root, ["bin/tool"], INPUTS) == []


@pytest.mark.parametrize(
    ("required", "inputs", "expected"),
    [
        (["bin/tool", "bin/other"], INPUTS, "bin/other is not listed"),
        (["bin/tool"], {**INPUTS, "version": "v2.0.0"}, "built from other inputs"),
    ],
)
def test_what_the_caller_expects_is_checked(
    tmp_path: Path, required: list[str], inputs: dict[str, str], expected: str
) -> None:
    problems = manifest_problems(_sealed(tmp_path), required, inputs)
    assert len(problems) == 1 and expected in problems[0]


def test_a_cache_that_records_no_inputs_is_checked_by_its_files_only(tmp_path: Path) -> None:
    root = tmp_path
    (root / "file").write_text("x")
    write_manifest(root, ["file"], versions={"a": "1"})
    assert manifest_problems(root, ["file"]) == []
    # A caller that expects inputs finds none recorded: the manifest is not one of its own.
    assert "unreadable" in manifest_problems(root, ["file"], INPUTS)[0]


def test_a_bad_entry_is_named(tmp_path: Path) -> None:
    root = _sealed(tmp_path)
    manifest = json.loads((root / MANIFEST).read_text())
    manifest["files"]["bin/tool"] = "not a record"
    (root / MANIFEST).write_text(json.dumps(manifest))
    assert "bad entry for bin/tool" in manifest_problems(root, ["bin/tool"], INPUTS)[0]


def test_a_single_file_has_its_record_beside_it(tmp_path: Path) -> None:
    tarball = tmp_path / "base.tar"
    tarball.write_bytes(b"tar")
    record = tmp_path / "base.json"
    assert "never completed" in record_problems(tarball, record)[0]
    write_record(tarball, record, key="k")
    assert json.loads(record.read_text()) == {"size": 3, "sha256": sha256_file(tarball), "key": "k"}
    assert record_problems(tarball, record) == []
    record.write_text(json.dumps({"size": 3}))
    assert "unreadable" in record_problems(tarball, record)[0]


def _ensure(root: Path, build: object, **options: object) -> None:
    ensure_built(
        root,
        "tool v1",
        lambda: manifest_problems(root, ["bin/tool"], INPUTS),
        build,  # type: ignore[arg-type]
        QUIET,
        rebuild="`make tool`",
        **options,  # type: ignore[arg-type]
    )


def test_a_complete_cache_is_reused_without_building(tmp_path: Path) -> None:
    root = _sealed(tmp_path / "tool")

    def build() -> None:
        raise AssertionError("a complete cache must not be rebuilt")

    _ensure(root, build)


def test_an_unusable_cache_is_an_error_when_building_is_off(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match=r"tool v1 cache at .* is not usable.*`make tool`"):
        _ensure(tmp_path / "tool", lambda: None, may_build=False)


def test_a_stale_cache_loses_its_manifest_before_the_build_and_is_checked_after(
    tmp_path: Path,
) -> None:
    root = _sealed(tmp_path / "tool")
    (root / "bin" / "tool").write_bytes(b"corrupt")
    seen: list[bool] = []

    def build() -> None:
        seen.append((root / MANIFEST).exists())
        (root / "bin" / "tool").write_bytes(b"tool binary")
        write_manifest(root, ["bin/tool"], inputs=INPUTS)

    _ensure(root, build)
    assert seen == [False]
    assert manifest_problems(root, ["bin/tool"], INPUTS) == []
    assert (root.parent / "tool.lock").exists()  # builders of one cache wait for each other


def test_a_build_that_leaves_the_cache_unusable_says_so(tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="tool v1 build finished but its cache is unusable"):
        _ensure(tmp_path / "tool", lambda: None, lock=False)
