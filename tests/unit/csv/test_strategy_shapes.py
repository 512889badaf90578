"""Pod template parts olm-py reads or adds to must have the right shape, or the strategy is
invalid with the path named (the CRD keeps deployment specs free-form, so the API server
admits any shape there)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.install.deployments import render_deployment
from olm.install.strategy import InvalidStrategy, parse_strategy
from tests.unit.csv.world import csv

PATH = "spec.install.spec.deployments[0].spec.template"


def with_template(change: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(csv())
    template = body["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]
    for key, value in change.items():
        where = template
        *parents, last = key.split(".")
        for part in parents:
            where = where[part]
        where[last] = value
    return body


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"metadata": "junk"}, f"{PATH}.metadata must be an object"),
        ({"metadata.annotations": ["a"]}, f"{PATH}.metadata.annotations must be an object"),
        ({"spec": 5}, f"{PATH}.spec must be an object"),
        ({"spec.containers": "c"}, f"{PATH}.spec.containers must be a list"),
        ({"spec.containers": ["c"]}, f"{PATH}.spec.containers[0] must be an object"),
        ({"spec.initContainers": [None]}, f"{PATH}.spec.initContainers[0] must be an object"),
        (
            {"spec.containers": [{"name": "c", "env": "X=1"}]},
            f"{PATH}.spec.containers[0].env must be a list",
        ),
        (
            {"spec.containers": [{"name": "c", "env": ["X=1"]}]},
            f"{PATH}.spec.containers[0].env[0] must be an object",
        ),
    ],
)
def test_wrong_shapes_are_named(change: dict[str, Any], path: str) -> None:
    with pytest.raises(InvalidStrategy, match=path.replace("[", r"\[").replace("]", r"\]")):
        parse_strategy(with_template(change))


@pytest.mark.parametrize(
    "change",
    [{"metadata": None}, {"spec": None}, {"spec.containers": None}, {"metadata.annotations": None}],
)
def test_explicit_nulls_read_as_absent(change: dict[str, Any]) -> None:
    body = with_template(change)
    rendered = render_deployment(body, parse_strategy(body).deployments[0])
    template = rendered["spec"]["template"]
    assert template["metadata"]["annotations"]["olm.operatorGroup"] == "og"
    assert isinstance(template["spec"], dict)
