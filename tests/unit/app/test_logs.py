"""`olm run --log-format json`: one JSON object per line."""

from __future__ import annotations

import io
import json
import logging

import pytest

from olm import logs


def record(level: int = logging.INFO, exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            import sys

            exc_info = sys.exc_info()
    rec = logging.LogRecord(
        "olm.csv", level, __file__, 1, "reconciled %s/%s", ("ns", "a"), exc_info
    )
    rec.created = 1767268800.123456  # 2026-01-01T12:00:00.123Z
    return rec


@pytest.mark.parametrize(
    ("level", "name"),
    [(logging.DEBUG, "debug"), (logging.WARNING, "warning"), (logging.ERROR, "error")],
)
def test_json_line_fields(level: int, name: str) -> None:
    line = logs.JsonFormatter().format(record(level))
    assert "\n" not in line
    assert json.loads(line) == {
        "ts": "2026-01-01T12:00:00.123+00:00",
        "level": name,
        "logger": "olm.csv",
        "msg": "reconciled ns/a",
    }


def test_json_line_carries_the_traceback_on_one_line() -> None:
    line = logs.JsonFormatter().format(record(logging.ERROR, exc=True))
    assert "\n" not in line
    entry = json.loads(line)
    assert "ValueError: boom" in entry["exc"] and entry["msg"] == "reconciled ns/a"


def test_setup_sends_records_in_the_chosen_format_and_level() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        logs.setup("json", "warning", stream)
        logging.getLogger("olm.x").info("hidden")
        logging.getLogger("olm.x").warning("shown %d", 1)
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
    lines = stream.getvalue().splitlines()
    assert [json.loads(line)["msg"] for line in lines] == ["shown 1"]


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown log format"):
        logs.formatter("xml")
