"""The binary cache: completeness, corruption, reuse without Go, and clear build errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from olm.devcluster import build
from olm.devcluster.build import (
    BINARY_NAMES,
    STAGES_FILE,
    BuildError,
    cache_problems,
    ensure_binaries,
)
from olm.devcluster.versions import PINNED, cache_dir
from tests.support.paths import REPO


def make_complete_cache(root: Path) -> None:
    (root / "bin").mkdir(parents=True)
    for name in BINARY_NAMES:
        (root / "bin" / name).write_bytes(f"binary {name}".encode())
    (root / STAGES_FILE).write_text("kind: Stage\n")
    build._write_manifest(root, PINNED)


def fake_go(tmp_path: Path, marker: Path) -> Path:
    """A `go` that records it was called and fails, so any Go invocation is visible."""
    script = tmp_path / "go"
    script.write_text(
        f"#!/bin/sh\necho called >> {marker}\necho 'go version go1.26.8 linux/amd64'\nexit 1\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_complete_cache_is_reused_without_invoking_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "cache"
    make_complete_cache(root)
    marker = tmp_path / "go-called"
    monkeypatch.setenv("OLM_PY_GO", str(fake_go(tmp_path, marker)))
    binaries = ensure_binaries(root=root)
    assert binaries.path("kube-apiserver") == root / "bin" / "kube-apiserver"
    assert not marker.exists()


def test_missing_manifest_means_incomplete(tmp_path: Path) -> None:
    make_complete_cache(tmp_path)
    (tmp_path / "manifest.json").unlink()
    assert "never completed" in cache_problems(tmp_path)[0]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda p: p.write_bytes(b"garbage!!!!!!!!!!!!!!!!!!"), "wrong size"),
        (lambda p: p.write_bytes(b"binary etcX"), "wrong checksum"),
        (lambda p: p.unlink(), "missing"),
    ],
    ids=["truncated-or-grown", "bit-flip", "deleted"],
)
def test_corrupt_cache_is_detected_and_named(tmp_path: Path, damage, expected: str) -> None:  # type: ignore[no-untyped-def]
    make_complete_cache(tmp_path)
    damage(tmp_path / "bin" / "etcd")
    problems = cache_problems(tmp_path)
    assert len(problems) == 1
    assert "bin/etcd" in problems[0] and expected in problems[0]
    with pytest.raises(BuildError, match=r"not usable.*bin/etcd.*olm dev build"):
        ensure_binaries(root=tmp_path, build=False)


def test_unreadable_manifest_is_reported(tmp_path: Path) -> None:
    make_complete_cache(tmp_path)
    (tmp_path / "manifest.json").write_text("{not json")
    assert "unreadable" in cache_problems(tmp_path)[0]


def test_missing_go_toolchain_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLM_PY_GO", str(tmp_path / "no-such-go"))
    with pytest.raises(
        BuildError, match=r"Go toolchain was not found.*install Go >= 1.24.*olm dev build"
    ):
        ensure_binaries(root=tmp_path / "cache")


def test_too_old_go_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = tmp_path / "go"
    script.write_text("#!/bin/sh\necho 'go version go1.19.2 linux/amd64'\n")
    script.chmod(0o755)
    monkeypatch.setenv("OLM_PY_GO", str(script))
    with pytest.raises(BuildError, match=r"Go 1\.24 or newer is needed"):
        ensure_binaries(root=tmp_path / "cache")


def test_unreachable_proxy_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A real Go run against a proxy address where nothing listens.
    monkeypatch.setenv("GOPROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("GOFLAGS", "")
    monkeypatch.setenv("GOMODCACHE", str(tmp_path / "modcache"))
    monkeypatch.delenv("OLM_PY_GO", raising=False)
    with pytest.raises(BuildError) as failure:
        ensure_binaries(root=tmp_path / "cache")
    message = str(failure.value)
    assert "Go module proxy could not be reached" in message
    assert "GOPROXY (http://127.0.0.1:9)" in message
    assert "rerun `olm dev build`" in message


def test_cache_dir_is_versioned_and_outside_the_repo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("OLM_PY_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = cache_dir()
    assert path == tmp_path / "olm-py" / PINNED.tag
    assert PINNED.kubernetes in path.name and PINNED.etcd in path.name and PINNED.kwok in path.name
    assert REPO not in cache_dir().parents or os.environ.get("OLM_PY_CACHE")
