"""Reading YAML and JSON documents the way Kubernetes tools do.

Invariants: timestamps stay strings (as kubectl and opm read them); a JSON stream is a
sequence of concatenated objects; errors carry the document index and line when known.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class KubeLoader(_Base):  # type: ignore[misc]
    """SafeLoader (libyaml-backed when available) without the timestamp resolver."""


# Go's YAML has neither YAML 1.1 timestamps nor the "=" value key: both stay strings.
_DROPPED = ("tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value")
KubeLoader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag not in _DROPPED]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class DocumentError(ValueError):
    def __init__(self, message: str, document: int, line: int | None = None) -> None:
        super().__init__(message)
        self.document = document
        self.line = line


def iter_documents(text: str) -> Iterator[tuple[int, Any]]:
    """(index, document) for each document of a YAML or JSON-stream text; empty docs skipped."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        decoder = json.JSONDecoder()
        position, index = 0, 0
        length = len(text)
        while True:
            while position < length and text[position].isspace():
                position += 1
            if position >= length:
                return
            try:
                value, position = decoder.raw_decode(text, position)
            except json.JSONDecodeError as exc:
                raise DocumentError(f"invalid JSON: {exc.msg}", index, exc.lineno) from exc
            yield index, value
            index += 1
    else:
        index = -1
        try:
            for index, document in enumerate(yaml.load_all(text, Loader=KubeLoader)):
                if document is not None:
                    yield index, document
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc)
            raise DocumentError(f"invalid YAML: {problem}", index + 1, line) from exc


def first_document(path: Path) -> Any:
    """The first document of the file at `path`; None when it has none or cannot be read."""
    try:
        for _, document in iter_documents(path.read_text()):
            return document
    except (OSError, UnicodeDecodeError, DocumentError):
        return None
    return None
