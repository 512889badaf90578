"""How request bodies travel: JSON text, UTF-8 encoded, every character as itself.

Why: the kubernetes client serializes bodies with `json.dumps` (ASCII only), so U+1F600 goes
out as the surrogate-pair escape `\\ud83d\\ude00`. Valid JSON, but server-side apply bodies are
read by the API server as YAML (application/apply-patch+yaml), and Go's YAML parser refuses
surrogate escapes ("found invalid Unicode character escape code"). So the gateway serializes
every body itself with `encode_body`.

Invariants:
- The result is valid JSON and valid YAML that both decode to exactly the input.
- No surrogate escapes are produced; characters outside the BMP are written as UTF-8.
- Characters YAML does not allow raw (C1 controls, U+FEFF, U+FFFE, U+FFFF) or would fold
  inside a quoted string (NEL, LINE and PARAGRAPH SEPARATOR) are written as `\\uXXXX`
  escapes, which are BMP escapes both parsers read.
- Lone surrogates (which Python strings can hold but UTF-8 cannot) become U+FFFD, as Go's
  JSON decoder would make them; a surrogate pair split over two code points is joined.
"""

from __future__ import annotations

import json
import re
from typing import Any

_YAML_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def encode_body(body: Any) -> bytes:
    """The request body for `body` (a JSON-able value) as UTF-8 bytes."""
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    if _LONE_SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        text = _LONE_SURROGATE.sub("\ufffd", text)
    return _YAML_UNSAFE.sub(_escape, text).encode("utf-8")


def decode_body(data: bytes | None) -> Any:
    """A response body (JSON) as plain data; None for an empty body."""
    return json.loads(data) if data else None
