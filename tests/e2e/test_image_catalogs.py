"""Catalog images: a CatalogSource with `spec.image` pointing at the local registry that
`olm dev up` runs (OLM_REGISTRY). olm-py pulls the image in-process (no registry pod), serves
its file-based catalog (unpacking bundles that come by image only), notices a new image pushed under the same tag within the poll interval,
and explains a tag that does not exist until it is pushed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from olm.devcluster.registry import REGISTRY_ENV
from tests.conftest import ControlPlane, OlmOperator, wait_for
from tests.e2e.stories import operator_group, phase
from tests.e2e.test_catalog_updates import V3, write_catalog
from tests.e2e.test_subscriptions import (
    NEW,
    OLD,
    approve,
    namespace_report,
    plan_for,
    subscribe,
    subscription,
)
from tests.integration.test_image_registry import bundle_dir, catalog_by_image, push_sqlite_index

SOURCE = "images"


@pytest.fixture
def registry(control_plane: ControlPlane) -> str:
    address = control_plane.env().get(REGISTRY_ENV)
    if not address:
        pytest.fail(f"`olm dev env` names no local registry ({REGISTRY_ENV}); see olm dev status")
    return address


def olm(plane: ControlPlane, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "olm.cli", *args],
        capture_output=True,
        text=True,
        env=plane.env(),
        timeout=120,
    )


def push_catalog(plane: ControlPlane, directory: Path, image: str) -> None:
    result = olm(plane, "catalog", "push", str(directory), image)
    assert result.returncode == 0, result.stderr


def catalog_source(plane: ControlPlane, namespace: str, image: str, interval: str = "3s") -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": SOURCE},
        "spec": {
            "sourceType": "grpc",
            "image": image,
            "displayName": "samples from an image",
            "publisher": "test",
            "updateStrategy": {"registryPoll": {"interval": interval}},
            # Accepted, and of no effect: olm-py runs no registry pod.
            "grpcPodConfig": {"securityContextConfig": "restricted", "memoryTarget": "30Mi"},
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def source_status(plane: ControlPlane, namespace: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.get_json("catsrc", SOURCE, "-n", namespace).get("status") or {}
    return found


def ready(plane: ControlPlane, namespace: str) -> dict[str, Any] | None:
    status = source_status(plane, namespace)
    state = (status.get("connectionState") or {}).get("lastObservedState")
    return status if state == "READY" and status.get("resolvedImage") else None


def wait_plan_phase(plane: ControlPlane, namespace: str, plan: dict[str, Any], wanted: str) -> None:
    name = plan["metadata"]["name"]
    wait_for(
        lambda: (
            (
                plane.get_json("installplan.operators.coreos.com", name, "-n", namespace).get(
                    "status"
                )
                or {}
            ).get("phase")
            == wanted
        ),
        timeout=120,
        what=f"InstallPlan {name} {wanted}",
    )


def test_the_memcached_story_from_a_catalog_image(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    registry: str,
    tmp_path: Path,
) -> None:
    """The samples catalog as an image, its memcached bundles as bundle images only (no inline
    objects): olm-py unpacks them in-process, with no unpack Job."""
    plane = control_plane
    image = f"{registry}/{namespace}/samples:v1"
    bundles = {}
    for version in ("0.0.1", "0.0.2"):
        bundle_image = f"{registry}/{namespace}/memcached-operator-bundle:v{version}"
        pushed = olm(plane, "bundle", "push", str(bundle_dir(tmp_path, version)), bundle_image)
        assert pushed.returncode == 0, pushed.stderr
        bundles[f"memcached-operator.v{version}"] = bundle_image
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "catalog.yaml").write_bytes(catalog_by_image(bundles))
    push_catalog(plane, tmp_path / "catalog", image)
    catalog_source(plane, namespace, image)
    status = wait_for(lambda: ready(plane, namespace), timeout=60, what="catalog image READY")
    assert status["connectionState"]["address"] == image
    assert status["resolvedImage"].startswith(f"{registry}/{namespace}/samples@sha256:")
    assert status.get("latestImageRegistryPoll")
    assert not status.get("reason") and not status.get("message")

    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD, source=SOURCE, sourceNamespace=namespace)
    try:
        first = plan_for(plane, namespace, OLD)
        wait_plan_phase(plane, namespace, first, "RequiresApproval")
        approve(plane, namespace, first)
        wait_for(
            lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
            timeout=120,
            what=f"{OLD} Succeeded",
        )
        second = plan_for(plane, namespace, NEW)
        wait_plan_phase(plane, namespace, second, "RequiresApproval")
        approve(plane, namespace, second)
        wait_for(
            lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
            timeout=120,
            what=f"{NEW} Succeeded",
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{namespace_report(plane, namespace)}") from exc
    final = wait_for(
        lambda: (
            (s := subscription(plane, namespace)["status"]).get("state") == "AtLatestKnown" and s
        ),
        what="AtLatestKnown",
    )
    assert final["installedCSV"] == NEW
    assert plan_for(plane, namespace, OLD)["status"]["catalogSources"] == [SOURCE]
    # No registry pod and no unpack Job: nothing but the operator's own workloads.
    pods = plane.get_json("pods", "-n", namespace)["items"]
    assert not [p for p in pods if "olm.catalogSource" in (p["metadata"].get("labels") or {})]
    assert not plane.get_json("jobs", "-n", namespace)["items"]


def test_a_new_image_under_the_same_tag_upgrades_within_the_poll_interval(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    registry: str,
    tmp_path: Path,
) -> None:
    plane = control_plane
    image = f"{registry}/{namespace}/samples:latest"
    write_catalog(tmp_path, with_v3=False)
    push_catalog(plane, tmp_path, image)
    catalog_source(plane, namespace, image, interval="3s")
    before = wait_for(lambda: ready(plane, namespace), timeout=60, what="catalog image READY")
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    wait_for(
        lambda: (subscription(plane, namespace).get("status") or {}).get("installedCSV") == NEW,
        timeout=120,
        what=f"{NEW} installed",
    )
    write_catalog(tmp_path, with_v3=True)
    push_catalog(plane, tmp_path, image)
    after = wait_for(
        lambda: (
            (s := ready(plane, namespace)) and s["resolvedImage"] != before["resolvedImage"] and s
        ),
        timeout=30,
        what="the new digest read within the poll interval",
    )
    assert after["latestImageRegistryPoll"] >= before["latestImageRegistryPoll"]
    try:
        wait_for(
            lambda: phase(plane, namespace, V3) == "Succeeded/InstallSucceeded",
            timeout=120,
            what=f"{V3} from the new image",
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{namespace_report(plane, namespace)}") from exc


def test_a_missing_tag_is_explained_and_recovers_once_pushed(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    registry: str,
    tmp_path: Path,
) -> None:
    plane = control_plane
    image = f"{registry}/{namespace}/samples:not-yet"
    catalog_source(plane, namespace, image, interval="30s")

    def explained() -> dict[str, Any] | None:
        status = source_status(plane, namespace)
        return status if status.get("reason") == "RegistryServerError" else None

    status = wait_for(explained, timeout=60, what="the missing tag explained")
    assert status["message"] == (
        f"CatalogSource {namespace}/{SOURCE} cannot read the catalog image {image}: registry "
        f"{registry} has no {namespace}/samples:not-yet. Check spec.image: push the catalog "
        "image (olm catalog push, opm, podman) or fix its name or tag."
    )
    assert status["connectionState"]["lastObservedState"] == "TRANSIENT_FAILURE"
    events = plane.get_json(
        "events", "-n", namespace, "--field-selector", f"involvedObject.name={SOURCE},type=Warning"
    )["items"]
    assert [e["reason"] for e in events] == ["RegistryServerError"]

    write_catalog(tmp_path, with_v3=False)
    push_catalog(plane, tmp_path, image)
    # Retried with backoff (1 s, 2 s, ...), well before the 30 s poll interval.
    recovered = wait_for(
        lambda: ready(plane, namespace), timeout=25, what="recovery after the push"
    )
    assert not recovered.get("reason") and not recovered.get("message")


def test_a_sqlite_index_image_is_served(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    registry: str,
    tmp_path: Path,
) -> None:
    """A legacy index image (`/database/index.db` built by `opm registry add`) is read with
    sqlite3 and serves the Subscription."""
    plane = control_plane
    image = push_sqlite_index(registry, tmp_path, f"{namespace}/sqlite-index")
    catalog_source(plane, namespace, image)
    wait_for(lambda: ready(plane, namespace), timeout=60, what="SQLite index image READY")
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    try:
        wait_for(
            lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
            timeout=180,
            what=f"{NEW} from the SQLite index image",
        )
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{namespace_report(plane, namespace)}") from exc
