"""Go's encodings OLM names and labels things with (olm.api.gohash): base62 digits, the JSON
encoder's escaping, DeepHashObject."""

from __future__ import annotations

import hashlib

from olm.api.gohash import base62, deep_hash_object, go_json, sorted_map


def test_base62_uses_gos_digits() -> None:
    assert base62(0) == "0"
    assert base62(61) == "Z"
    assert base62(62) == "10"
    assert base62(35) == "z"


def test_go_json_is_compact_keeps_utf8_and_escapes_html_with_a_newline() -> None:
    value = {"b": "<a&b>", "a": ["é", None, 1]}
    assert go_json(value) == '{"b":"\\u003ca\\u0026b\\u003e","a":["é",null,1]}\n'


def test_go_json_keeps_struct_order_and_sorts_maps_only_when_asked() -> None:
    assert go_json({"z": 1, "a": 2}) == '{"z":1,"a":2}\n'
    assert go_json(sorted_map({"z": 1, "a": 2})) == '{"a":2,"z":1}\n'


def test_deep_hash_object_is_base62_of_sha224_of_the_encoders_output() -> None:
    digest = hashlib.sha224(b'{"k":"v"}\n').digest()
    assert deep_hash_object({"k": "v"}) == base62(int.from_bytes(digest, "big"))
    assert len(deep_hash_object({"k": "v"})) <= 38
