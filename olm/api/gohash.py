"""Go's encodings that OLM v0 builds names and label values from, reproduced on plain data.

- `base62(n)`: Go's `big.Int.Text(62)` (digits 0-9, a-z, A-Z).
- `go_json(value)`: what Go's `json.Encoder` writes for a value already laid out as Go would
  (struct fields in declaration order, empty `omitempty` fields left out, maps with sorted
  keys): compact, non-ASCII kept as UTF-8, `<`, `>`, `&`, U+2028 and U+2029 escaped as
  `\\u003c`-style sequences (the encoder's HTML escaping), and a trailing newline.
- `deep_hash_object(value)`: OLM's `hashutil.DeepHashObject`, base62 of SHA-224 of `go_json`.

Invariants: pure; the caller lays a value out in Go's field order (a dict keeps insertion
order) — these functions never reorder a struct, only a map (`sorted_map`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

_BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Go's json.Encoder escapes these by default (SetEscapeHTML(true), and always the two line
# separators), so a hash of its output differs from Python's `json.dumps` without them.
_GO_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def base62(value: int) -> str:
    """Go's `big.Int.Text(62)` of a non-negative integer."""
    if value == 0:
        return "0"
    digits = []
    while value:
        value, rest = divmod(value, 62)
        digits.append(_BASE62[rest])
    return "".join(reversed(digits))


def sorted_map(value: Mapping[str, Any]) -> dict[str, Any]:
    """A Go map as encoding/json writes it: keys in sorted order."""
    return {key: value[key] for key in sorted(value)}


def go_json(value: Any) -> str:
    """`json.NewEncoder(w).Encode(value)`'s output for a value laid out as Go's would be."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_ESCAPES.items():
        text = text.replace(char, escaped)
    return text + "\n"


def deep_hash_object(value: Any) -> str:
    """OLM's `hashutil.DeepHashObject`: base62(SHA-224(the encoder's JSON))."""
    digest = hashlib.sha224(go_json(value).encode()).digest()
    return base62(int.from_bytes(digest, "big"))
