"""A cluster admin runs olm-py with catalog trust on (`olm run --trusted-catalogs`,
docs/catalog-trust.md): catalogs are trusted in namespace olm (address: the samples catalog)
and, of kind configmap, in team-b's namespace only. Team a and team b each apply the same
ConfigMap catalog and subscribe to it:

- team b's catalog is read and its operator installs;
- team a's catalog is never read (its ConfigMap is not even given its CatalogSource as owner),
  its status and a Warning say why and what to ask for, its packages are not listed by the
  PackageManifest API, and team a's Subscription says why in CatalogSourcesUnhealthy and gets
  no InstallPlan.

The session's `olm run` is restarted with the setting for this story, and without it after.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, fresh_namespace, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import SAMPLE, operator_group, phase, warning_events
from tests.support.subscriptions import plans, subscribe, subscription

CATALOG = "team-catalog"
CSV = "memcached-operator.v0.0.1"


@pytest.fixture
def team_b(control_plane: ControlPlane) -> Iterator[str]:
    """A second fresh namespace (the `namespace` fixture is team a's)."""
    yield from fresh_namespace(control_plane)


@pytest.fixture
def trusting(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str, team_b: str
) -> Iterator[list[str]]:
    flags = ["--trusted-catalogs", f"olm=address,{team_b}=configmap"]
    olm_operator.restart(*flags)
    try:
        yield flags
    finally:
        # The teams' catalogs go first: the session's olm run, without the setting, would read
        # team a's, and its packages would be listed while the namespace is being deleted.
        for team in (namespace, team_b):
            control_plane.kubectl("delete", "catsrc", "--all", "-n", team, "--wait=true")
        olm_operator.restart()


def apply_catalog(plane: ControlPlane, namespace: str) -> None:
    """The sample operator 0.0.1 as a ConfigMap catalog, and its CatalogSource."""
    csv = yaml.safe_load((SAMPLE / f"{CSV}.csv.yaml").read_text())
    crd = yaml.safe_load((SAMPLE / "crd.yaml").read_text())
    package = {
        "packageName": "memcached-operator",
        "defaultChannel": "alpha",
        "channels": [{"name": "alpha", "currentCSV": CSV}],
    }
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": CATALOG, "namespace": namespace},
        "data": {
            "packages": yaml.safe_dump([package]),
            "clusterServiceVersions": yaml.safe_dump([csv]),
            "customResourceDefinitions": yaml.safe_dump([crd]),
        },
    }
    source = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": CATALOG, "namespace": namespace},
        "spec": {"sourceType": "configmap", "configMap": CATALOG, "displayName": "Team catalog"},
    }
    listing = {"apiVersion": "v1", "kind": "List", "items": [configmap, source]}
    plane.kubectl("create", "-f", "-", stdin=json.dumps(listing))


def catalog_status(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.get_json("catsrc", CATALOG, "-n", namespace).get("status") or {}
    return found


def packages_from(plane: ControlPlane, namespace: str) -> list[str] | None:
    """The catalogs `kubectl get packagemanifests -n NS` lists packages from (None: the API
    does not answer, e.g. without the local pod network)."""
    result = plane.kubectl("get", "packagemanifests", "-n", namespace, "-o", "json", check=False)
    if result.returncode != 0:
        return None
    return sorted({i["status"]["catalogSource"] for i in json.loads(result.stdout)["items"]})


def test_a_catalog_in_an_untrusted_namespace_is_ignored_and_says_why(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    team_b: str,
    trusting: list[str],
) -> None:
    plane, team_a = control_plane, namespace
    for team in (team_a, team_b):
        operator_group(plane, team)
        apply_catalog(plane, team)
        subscribe(plane, team, "Automatic", source=CATALOG, sourceNamespace=team)

    # Team b: trusted for configmap catalogs, so its catalog is read and the operator installs.
    wait_for(
        lambda: phase(plane, team_b, CSV) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{CSV} from the trusted catalog to succeed in {team_b}",
    )
    trusted = catalog_status(plane, team_b)
    assert not trusted.get("reason") and trusted["configMapReference"]["name"] == CATALOG

    # Team a: the same catalog is not used, and its status says why and what to ask for.
    said = wait_for(
        lambda: (
            catalog_status(plane, team_a) if catalog_status(plane, team_a).get("reason") else None
        ),
        timeout=STEP_TIMEOUT,
        what="the untrusted CatalogSource's status",
    )
    assert said["reason"] == "SpecInvalidError"
    assert said["message"] == (
        f"CatalogSource {team_a}/{CATALOG} is not used: catalog kind configmap (spec.configMap) "
        f"is not trusted in namespace {team_a}: no catalog in namespace {team_a} is trusted "
        f"(olm-py runs with --trusted-catalogs olm=address,{team_b}=configmap); ask the cluster "
        f"admin to add {team_a}=configmap to --trusted-catalogs (chart value trustedCatalogs), "
        f"or use a catalog from namespace {team_b}."
    )
    assert "configMapReference" not in said and "connectionState" not in said
    configmap = plane.get_json("configmap", CATALOG, "-n", team_a)
    assert not configmap["metadata"].get("ownerReferences"), "not even read"
    events = wait_for(
        lambda: [m for r, m in warning_events(plane, team_a, CATALOG) if r == "SpecInvalidError"],
        what="the Warning event on the untrusted CatalogSource",
    )
    assert events == [said["message"]]

    def unhealthy() -> dict[str, Any] | None:
        status = subscription(plane, team_a).get("status") or {}
        found = {c["type"]: c for c in status.get("conditions") or []}
        return found.get("CatalogSourcesUnhealthy")

    condition = wait_for(unhealthy, timeout=STEP_TIMEOUT, what="CatalogSourcesUnhealthy in team a")
    assert (condition["status"], condition["reason"]) == ("True", "UnhealthyCatalogSourceFound")
    assert condition["message"].startswith(
        f"targeted catalogsource {team_a}/{CATALOG} unhealthy: catalog kind configmap "
        f"(spec.configMap) is not trusted in namespace {team_a}"
    )
    # Team b's Subscription was resolved, installed and settled meanwhile: team a's, decided in
    # the same way, has no InstallPlan and no CSV.
    assert plans(plane, team_a) == []
    assert plane.get_json("csv", "-n", team_a)["items"] == []

    # The PackageManifest API lists team b's catalog in team b, and not team a's in team a
    # (served where the API server reaches olm-py: the local pod network).
    if (plane.cluster.state_dir / "network.json").is_file():
        wait_for(
            lambda: CATALOG in (packages_from(plane, team_b) or []),
            timeout=STEP_TIMEOUT,
            what="team b's catalog in kubectl get packagemanifests",
        )
        listed_a = packages_from(plane, team_a) or []
        assert "samples" in listed_a and CATALOG not in listed_a, listed_a
