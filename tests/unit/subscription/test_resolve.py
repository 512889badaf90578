"""What resolution counts as installed, for the namespace and for each Subscription."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm.subscription.resolve import annotated_package, installed_csvs
from tests.unit.subscription.world import (
    V1,
    V2,
    csv,
    install_plan,
    subscription,
    world,
)

PACKAGES = {V1: "memcached-operator", V2: "memcached-operator"}


def annotated(name: str, properties: Any) -> dict[str, Any]:
    found = csv(name)
    found["metadata"]["annotations"] = {"operatorframework.io/properties": properties}
    return found


@pytest.mark.parametrize(
    ("properties", "package"),
    [
        (
            json.dumps(
                {
                    "properties": [
                        {
                            "type": "olm.package",
                            "value": {"packageName": "etcd", "version": "1.0.0"},
                        }
                    ]
                }
            ),
            "etcd",
        ),
        (json.dumps({"properties": [{"type": "olm.gvk", "value": {}}]}), ""),
        ("not json", ""),
        (json.dumps(["a list"]), ""),
    ],
)
def test_the_package_from_the_properties_annotation(properties: str, package: str) -> None:
    assert annotated_package(annotated(V1, properties)) == package


@pytest.mark.parametrize(
    ("status", "csvs", "plans", "expected"),
    [
        ({"installedCSV": V1}, [csv(V1)], [], V1),
        ({"currentCSV": V1}, [csv(V1)], [], V1),
        ({"installedCSV": V1}, [], [], None),
        # a newer CSV of the package replaces it: the Subscription follows
        ({"installedCSV": V1}, [csv(V1), csv(V2, replaces=V1)], [], V2),
        # status never written: what its own plan installed
        ({}, [csv(V1)], [install_plan("p", [V1], "Complete")], V1),
        ({}, [csv(V1), csv(V2, replaces=V1)], [install_plan("p", [V1], "Complete")], V2),
        (
            {},
            [csv(V1), csv(V2, replaces=V1)],
            [install_plan("p", [V1], "Complete"), install_plan("q", [V2], "Complete")],
            V2,
        ),
        # ... but not what someone else's plan (or a person) installed
        ({}, [csv(V1)], [install_plan("p", [V1], "Complete", owners=("other",))], None),
        ({}, [csv(V1)], [], None),
        # a replace cycle does not loop
        ({"installedCSV": V1}, [csv(V1, replaces=V2), csv(V2, replaces=V1)], [], V1),
    ],
)
def test_the_csv_a_subscription_has_installed(
    status: dict[str, Any],
    csvs: list[dict[str, Any]],
    plans: list[dict[str, Any]],
    expected: str | None,
) -> None:
    snapshot = world([subscription(status=status)], csvs=csvs, plans=plans)
    found = installed_csvs(snapshot, {"memcached": status}, PACKAGES)
    assert found.get("memcached") == expected
