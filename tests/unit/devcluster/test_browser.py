"""The console tests' browser: $OLM_CHROMIUM first, then chromium on PATH."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm.devcluster.browser import CHROMIUM_ENV, find_chromium


def test_the_configured_binary_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "chromium"
    binary.write_text("#!/bin/sh\n")
    monkeypatch.setenv(CHROMIUM_ENV, str(binary))
    assert find_chromium() == binary


def test_else_chromium_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary = tmp_path / "chromium"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.delenv(CHROMIUM_ENV, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_chromium() == binary
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    assert find_chromium() is None
