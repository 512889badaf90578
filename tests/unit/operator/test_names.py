"""Operator names and label keys as OLM v0.38 makes them (decorators/operator.go), and what the
API server would refuse."""

from __future__ import annotations

import pytest

from olm.operator.names import (
    component_label_key,
    label_key_problem,
    operator_name_problem,
    operator_names,
    package_operator_name,
)

P = "operators.coreos.com/"


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("memcached-operator.ns", P + "memcached-operator.ns"),
        ("a" * 63, P + "a" * 63),  # at the limit: kept
        ("a" * 64, P + "a" * 63),  # cut to 63
        ("a" * 62 + "-b", P + "a" * 62),  # cut, then the trailing '-' goes
        ("a" * 60 + "._-" + "bbb", P + "a" * 60),  # every trailing separator goes
        ("p" * 62 + ".ns", P + "p" * 62),  # the package fills the key: the '.' goes too
        ("-" * 70, None),  # nothing left: OLM errs
        ("", None),
        ("short._", P + "short._"),  # only names over 63 are trimmed (as OLM)
    ],
)
def test_the_label_key_is_cut_as_olm_cuts_it(name: str, key: str | None) -> None:
    assert component_label_key(name) == key


def test_a_subscriptions_operator_is_package_dot_namespace() -> None:
    assert package_operator_name("memcached-operator", "ns") == "memcached-operator.ns"
    assert package_operator_name("global", "") == "global"


def test_every_prefixed_key_names_an_operator() -> None:
    found = {P + "b.ns": "", "olm.managed": "true", P + "a.ns": "", "operators.coreos.com": "x"}
    assert operator_names(found) == ["a.ns", "b.ns"]
    assert operator_names(None) == []


@pytest.mark.parametrize(
    ("key", "refused"),
    [
        (P + "memcached-operator.ns", False),
        (P + "My_Operator.ns", False),  # a valid label key (not a valid Operator name)
        (P + "mémcached.ns", True),  # non-ASCII
        (P + "a/b.ns", True),  # a second '/'
        (P + "has space.ns", True),
        (P + "a" * 64, True),
        (P + "ns-", True),
    ],
)
def test_label_key_problems(key: str, refused: bool) -> None:
    problem = label_key_problem(key)
    assert (problem is not None) == refused
    if problem:
        assert "letters" in problem or "longer" in problem


@pytest.mark.parametrize(
    ("name", "refused"),
    [
        ("memcached-operator.ns", False),
        ("a" * 63, False),
        ("My_Operator.ns", True),
        ("upper.NS", True),
        ("-lead.ns", True),
        ("x" * 254, True),
    ],
)
def test_operator_name_problems(name: str, refused: bool) -> None:
    assert (operator_name_problem(name) is not None) == refused


def test_a_non_ascii_name_is_cut_in_bytes_as_go_does() -> None:
    key = component_label_key("é" * 40)  # 80 bytes
    assert key is not None and label_key_problem(key) is not None
