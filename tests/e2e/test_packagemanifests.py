"""A user browses operators before subscribing, as OLM's docs tell them to:
`kubectl get packagemanifests`, then one package's channels, then subscribe.

olm-py serves the PackageManifest API itself (docs/packagemanifests.md); the kube-apiserver
reaches `olm run` through the local cluster's host bridge, so these stories need the pod
network.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.catalog_server import V1, V2, V3, Server, catalog_source, write_catalog
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator

PACKAGE = "memcached-operator"
API = "/apis/packages.operators.coreos.com/v1"


def _listed(plane: ControlPlane, *args: str) -> list[dict[str, Any]]:
    result = plane.kubectl("get", "packagemanifests", *args, "-o", "json", check=False)
    if result.returncode != 0:
        return []
    return list(json.loads(result.stdout)["items"])


def _catalogs_of(items: list[dict[str, Any]], name: str = PACKAGE) -> list[str]:
    return sorted(i["status"]["catalogSource"] for i in items if i["metadata"]["name"] == name)


def _wait_serving(plane: ControlPlane, what: str) -> None:
    wait_for(lambda: bool(_listed(plane, "-n", "olm")), timeout=STEP_TIMEOUT, what=what)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path)
    yield server
    server.stop()


def test_browse_the_catalogs_then_read_one_package(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    served: Server,
    pod_network: None,
) -> None:
    plane = control_plane
    # The global samples catalog shows in every namespace, in that namespace's name.
    wait_for(
        lambda: _catalogs_of(_listed(plane, "-n", namespace)) == ["samples"],
        timeout=STEP_TIMEOUT,
        what="kubectl get packagemanifests to list the samples catalog's packages",
    )
    table = plane.kubectl("get", "packagemanifests", "-n", namespace).stdout
    header, *rows = table.splitlines()
    assert header.split() == ["NAME", "CATALOG", "AGE"]
    assert any(row.split()[:3] == [PACKAGE, "olm-py", "samples"] for row in rows), table

    manifest = plane.get_json("packagemanifest", PACKAGE, "-n", namespace)
    assert manifest["metadata"]["namespace"] == namespace
    status = manifest["status"]
    assert (status["catalogSource"], status["catalogSourceNamespace"]) == ("samples", "olm")
    assert status["defaultChannel"] == "alpha"
    alpha = next(c for c in status["channels"] if c["name"] == "alpha")
    assert alpha["currentCSV"] == V2
    assert [e["name"] for e in alpha["entries"]] == [V2, V1]
    assert alpha["currentCSVDesc"]["displayName"] == "Memcached Operator"
    assert "icon" not in alpha["currentCSVDesc"]
    labels = manifest["metadata"]["labels"]
    assert labels["catalog"] == "samples" and labels["operatorframework.io/os.linux"] == "supported"

    # Selectors, as consoles and scripts use them.
    by_label = _listed(plane, "-n", namespace, "-l", "catalog=samples,provider=olm-py")
    assert PACKAGE in {i["metadata"]["name"] for i in by_label}
    assert _listed(plane, "-n", namespace, "-l", "catalog=elsewhere") == []
    by_name = _listed(plane, "-n", namespace, "--field-selector", f"metadata.name={PACKAGE}")
    assert [i["metadata"]["name"] for i in by_name] == [PACKAGE]
    refused = plane.kubectl(
        "get", "packagemanifests", "-n", namespace, "--field-selector", "status.x=y", check=False
    )
    assert refused.returncode != 0
    assert '"status.x" is not a known field selector: only "metadata.name"' in refused.stderr

    # The icon subresource answers an image (the placeholder when the CSV has none).
    icon = plane.kubectl(
        "get", "--raw", f"{API}/namespaces/{namespace}/packagemanifests/{PACKAGE}/icon"
    )
    assert icon.stdout.strip()

    # A namespace's own catalog shows there (first), and nowhere else.
    write_catalog(served.directory, with_v3=True)
    served.start()
    catalog_source(plane, namespace, served.port)
    wait_for(
        lambda: _catalogs_of(_listed(plane, "-n", namespace)) == ["samples", "updating"],
        timeout=STEP_TIMEOUT,
        what="the namespace's own catalog to be listed beside the global one",
    )
    assert _catalogs_of(_listed(plane, "-n", "default")) == ["samples"]
    everywhere = _listed(plane, "-A")
    assert {
        (i["metadata"]["namespace"], i["status"]["catalogSource"])
        for i in everywhere
        if i["metadata"]["name"] == PACKAGE
    } == {("olm", "samples"), (namespace, "updating")}
    own = plane.get_json("packagemanifest", PACKAGE, "-n", namespace)
    assert own["status"]["catalogSource"] == "updating"  # Get answers the namespace's own first
    assert own["status"]["channels"][0]["currentCSV"] == V3

    # Who may not list CatalogSources' packages is told so by the API.
    forbidden = plane.kubectl(
        "get",
        "packagemanifests",
        "-n",
        namespace,
        f"--as=system:serviceaccount:{namespace}:nobody",
        check=False,
    )
    assert forbidden.returncode != 0 and "forbidden" in forbidden.stderr.lower()

    # A catalog that goes away takes its packages with it.
    plane.kubectl("delete", "catsrc", "updating", "-n", namespace)
    wait_for(
        lambda: _catalogs_of(_listed(plane, "-n", namespace)) == ["samples"],
        timeout=STEP_TIMEOUT,
        what="the deleted catalog's packages to go",
    )


def test_a_graceful_stop_takes_its_own_registration_away(
    control_plane: ControlPlane, olm_operator: OlmOperator, pod_network: None
) -> None:
    from olm.packages import registration

    plane = control_plane
    _wait_serving(plane, "kubectl get packagemanifests to answer")
    try:
        olm_operator.stop()
        gone = plane.kubectl("get", "apiservice", registration.APISERVICE, check=False)
        assert "NotFound" in gone.stderr
        gone = plane.kubectl("get", "service", registration.SERVICE, "-n", "olm", check=False)
        assert "NotFound" in gone.stderr
    finally:
        olm_operator.start()
    _wait_serving(plane, "kubectl get packagemanifests to answer from the restarted olm run")
