"""Body accessors read what is there and read an absent or null field as empty."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api import body

FULL = {
    "metadata": {
        "name": "etcd.v1",
        "namespace": "team",
        "labels": {"olm.managed": "true"},
        "annotations": {"olm.operatorGroup": "og"},
    }
}


def test_reads_the_fields() -> None:
    assert body.meta(FULL) is FULL["metadata"]
    assert (body.name(FULL), body.namespace(FULL)) == ("etcd.v1", "team")
    assert body.key(FULL) == ("team", "etcd.v1")
    assert body.labels(FULL) == {"olm.managed": "true"}
    assert body.annotations(FULL) == {"olm.operatorGroup": "og"}


@pytest.mark.parametrize(
    "obj",
    [
        {},
        {"metadata": None},
        {"metadata": {}},
        {"metadata": {"name": None, "namespace": None, "labels": None, "annotations": None}},
        {"metadata": {"name": "", "namespace": ""}},
    ],
)
def test_absent_or_null_reads_as_empty(obj: dict[str, Any]) -> None:
    assert body.meta(obj) == {} or all(v in (None, "") for v in body.meta(obj).values())
    assert (body.name(obj), body.namespace(obj), body.key(obj)) == ("", "", ("", ""))
    assert body.labels(obj) == {} and body.annotations(obj) == {}


def test_names_are_strings_and_bodies_unchanged() -> None:
    obj = {"metadata": {"name": 7, "namespace": 8}}
    assert body.key(obj) == ("8", "7")
    assert obj == {"metadata": {"name": 7, "namespace": 8}}
