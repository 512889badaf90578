"""Logging for `olm run`: human text (the default) or JSON, one object per line.

A JSON line carries `ts` (RFC 3339, UTC, milliseconds), `level` (lower case, as
controller-runtime's zap logger writes it), `logger`, `msg`, and `exc` (the formatted
traceback) when the record has exception info. Standard library only.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys
from typing import TextIO

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FORMATS = ("text", "json")
LEVELS = ("debug", "info", "warning", "error", "critical")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exc"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def formatter(fmt: str) -> logging.Formatter:
    if fmt == "json":
        return JsonFormatter()
    if fmt == "text":
        return logging.Formatter(TEXT_FORMAT)
    raise ValueError(f"unknown log format {fmt!r} (choose one of {', '.join(FORMATS)})")


def setup(fmt: str = "text", level: str = "info", stream: TextIO | None = None) -> None:
    """Send every logger's records to `stream` (stderr) in `fmt` at `level` and above."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatter(fmt))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
