"""Deployment drift: what the API server changes on its way in is not drift (olm.install)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.install.deployments import is_subset
from olm.install.overrides import served_quantity


def container(**fields: Any) -> dict[str, Any]:
    return {"template": {"spec": {"containers": [{"name": "manager", **fields}]}}}


@pytest.mark.parametrize(
    ("wanted", "served", "same"),
    [
        # an env var whose value is "" is served without `value`
        (
            container(env=[{"name": "EMPTY", "value": ""}]),
            container(env=[{"name": "EMPTY"}]),
            True,
        ),
        (
            container(env=[{"name": "SET", "value": "x"}]),
            container(env=[{"name": "SET"}]),
            False,
        ),
        # empty objects and lists are omitted
        (container(securityContext={}, args=[]), container(), True),
        # quantities come back canonical and rounded up to milli-units
        (
            container(resources={"requests": {"cpu": "100n", "memory": "1024Mi"}}),
            container(resources={"requests": {"cpu": "1m", "memory": "1Gi"}}),
            True,
        ),
        (
            container(resources={"limits": {"cpu": "0.5"}}),
            container(resources={"limits": {"cpu": "500m"}}),
            True,
        ),
        # a real edit is drift
        (
            container(resources={"limits": {"cpu": "500m"}}),
            container(resources={"limits": {"cpu": "1"}}),
            False,
        ),
        ({"replicas": 0}, {}, False),  # zero replicas is a value, not an omission
        ({"paused": False}, {}, True),
    ],
)
def test_what_the_api_server_changes_is_not_drift(wanted: Any, served: Any, same: bool) -> None:
    assert is_subset(wanted, served) is same


@pytest.mark.parametrize(
    ("written", "served"),
    [("100n", "1m"), ("1500u", "2m"), ("1m", "1m"), ("0.25", "250m"), ("2", "2"), ("1Gi", "1Gi")],
)
def test_quantities_are_served_rounded_up_to_milli_units(written: str, served: str) -> None:
    assert served_quantity(written) == served
