"""The parity suite runs only when asked for (`make parity`, `pytest -m parity`, or
OLM_PARITY=1): it starts two clusters of its own, one of them with the real OLM v0."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = os.environ.get("OLM_PARITY") == "1" or "parity" in (config.option.markexpr or "")
    if wanted:
        return
    skip = pytest.mark.skip(reason="the parity suite runs with `make parity` (or OLM_PARITY=1)")
    for item in items:
        if item.get_closest_marker("parity") is not None:
            item.add_marker(skip)
