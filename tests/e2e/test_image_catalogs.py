"""Catalog images: a CatalogSource with `spec.image` pointing at the local registry that
`olm dev up` runs (OLM_REGISTRY). olm-py pulls the image in-process (no registry pod), serves
its file-based catalog (unpacking bundles that come by image only), notices a new image pushed
under the same tag within the poll interval, and explains bad input (a registry that is down,
a tag that does not exist, credentials the registry refuses, a corrupt layer, a bundle image
that is not a bundle) until it is fixed, with the other catalogs and namespaces unaffected."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from olm.devcluster.ports import free_ports
from olm.devcluster.registry import SAMPLES_IMAGE_ENV
from olm.image.build import Blob, Image, scratch_image
from olm.image.cache import BlobCache
from olm.image.manifest import OCI_LAYER_GZIP
from olm.image.pull import Options, push
from olm.image.reference import parse
from tests.support.catalog_server import V3, write_catalog
from tests.support.cluster import (
    SESSION_ID,
    SESSION_LABEL,
    STEP_TIMEOUT,
    ControlPlane,
    wait_for,
)
from tests.support.olm_run import OlmOperator
from tests.support.registry import (
    PASSWORD,
    USER,
    bundle_dir,
    catalog_by_image,
    push_sqlite_index,
    secret,
    start_registry,
    stop_registry,
)
from tests.support.stories import operator_group, phase
from tests.support.subscriptions import NEW, OLD, approve, plan_for, plans, subscribe, subscription

SOURCE = "images"


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
        timeout=STEP_TIMEOUT,
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
    objects): olm-py unpacks them in-process, with no unpack Job, and only the ones a
    Subscription needs (reading the catalog pulls no bundle image)."""
    plane = control_plane
    image = f"{registry}/{namespace}/samples:v1"
    bundles = {}
    for version in ("0.0.1", "0.0.2"):
        bundle_image = f"{registry}/{namespace}/memcached-operator-bundle:v{version}"
        pushed = olm(plane, "bundle", "push", str(bundle_dir(tmp_path, version)), bundle_image)
        assert pushed.returncode == 0, pushed.stderr
        bundles[f"memcached-operator.v{version}"] = bundle_image
    # v0.0.3 (channels beta and webhooks, which nobody here subscribes to) by an image whose
    # layer exists only in this test: it must never reach olm-py's blob cache.
    unused = scratch_image({"manifests/unused.yaml": f"# {namespace}\n".encode()}, {})
    unused_ref = f"{registry}/{namespace}/memcached-operator-bundle:v0.0.3"
    push(
        parse(unused_ref),
        unused,
        Options(cache=BlobCache(tmp_path / "push"), use_local_configs=False),
    )
    bundles["memcached-operator.v0.0.3"] = unused_ref
    env = plane.env()
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "olm-py" / "images"
    unused_blob = BlobCache(cache).path(unused.layers[0].digest)
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "catalog.yaml").write_bytes(catalog_by_image(bundles))
    push_catalog(plane, tmp_path / "catalog", image)
    catalog_source(plane, namespace, image)
    status = wait_for(
        lambda: ready(plane, namespace), timeout=STEP_TIMEOUT, what="catalog image READY"
    )
    # Served behind a registry Service where the cluster lets olm-py be one's endpoint
    # (test_registry_services.py), as OLM's registry pod is; otherwise the image itself.
    served = f"{SOURCE}.{namespace}.svc:50051" if status.get("registryService") else image
    assert status["connectionState"]["address"] == served
    assert status["resolvedImage"].startswith(f"{registry}/{namespace}/samples@sha256:")
    assert status.get("latestImageRegistryPoll")
    assert not status.get("reason") and not status.get("message")
    assert not unused_blob.exists(), "reading the catalog pulled a bundle nobody subscribed to"

    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD, source=SOURCE, sourceNamespace=namespace)
    first = plan_for(plane, namespace, OLD)
    wait_plan_phase(plane, namespace, first, "RequiresApproval")
    approve(plane, namespace, first)
    wait_for(
        lambda: phase(plane, namespace, OLD) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded",
    )
    second = plan_for(plane, namespace, NEW)
    wait_plan_phase(plane, namespace, second, "RequiresApproval")
    approve(plane, namespace, second)
    wait_for(
        lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{NEW} Succeeded",
    )
    final = wait_for(
        lambda: (
            (s := subscription(plane, namespace)["status"]).get("state") == "AtLatestKnown" and s
        ),
        what="AtLatestKnown",
    )
    assert final["installedCSV"] == NEW
    assert plan_for(plane, namespace, OLD)["status"]["catalogSources"] == [SOURCE]
    assert not unused_blob.exists(), "a bundle image no resolution chose was pulled"
    # No registry pod and no unpack Job: nothing but the operator's own workloads.
    pods = plane.get_json("pods", "-n", namespace)["items"]
    assert not [p for p in pods if "olm.catalogSource" in (p["metadata"].get("labels") or {})]
    assert not plane.get_json("jobs", "-n", namespace)["items"]


def test_the_samples_that_olm_dev_up_publishes_serve_a_subscription(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    """`olm dev up` publishes the samples catalog (bundles by image only) and `olm dev env`
    names it: a CatalogSource of that image installs the memcached-operator."""
    plane = control_plane
    image = plane.env().get(SAMPLES_IMAGE_ENV)
    if not image:
        pytest.fail(f"`olm dev env` names no samples image ({SAMPLES_IMAGE_ENV}); see olm dev up")
    catalog_source(plane, namespace, image, interval="30s")
    status = wait_for(
        lambda: ready(plane, namespace), timeout=STEP_TIMEOUT, what="samples image READY"
    )
    assert status["resolvedImage"].startswith(image.rsplit(":", 1)[0] + "@sha256:")
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    wait_for(
        lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{NEW} Succeeded",
    )


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
    before = wait_for(
        lambda: ready(plane, namespace), timeout=STEP_TIMEOUT, what="catalog image READY"
    )
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    wait_for(
        lambda: (subscription(plane, namespace).get("status") or {}).get("installedCSV") == NEW,
        timeout=STEP_TIMEOUT,
        what=f"{NEW} installed",
    )
    write_catalog(tmp_path, with_v3=True)
    push_catalog(plane, tmp_path, image)
    after = wait_for(
        lambda: (
            (s := ready(plane, namespace)) and s["resolvedImage"] != before["resolvedImage"] and s
        ),
        timeout=60,  # a few 3 s polls on a loaded machine; the default interval is 10 min
        what="the new digest read at the next polls",
    )
    assert after["latestImageRegistryPoll"] >= before["latestImageRegistryPoll"]
    wait_for(
        lambda: phase(plane, namespace, V3) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{V3} from the new image",
    )


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
    # The Event is written after the status: waited for, then it must be the only one.
    events = wait_for(
        lambda: plane.get_json(
            "events",
            "-n",
            namespace,
            "--field-selector",
            f"involvedObject.name={SOURCE},type=Warning",
        )["items"],
        what="the Warning event",
    )
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
    wait_for(lambda: ready(plane, namespace), timeout=STEP_TIMEOUT, what="SQLite index image READY")
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    wait_for(
        lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{NEW} from the SQLite index image",
    )


# ----- bad input -----------------------------------------------------------------------------


def image_source(
    plane: ControlPlane, namespace: str, name: str, image: str, secrets: tuple[str, ...] = ()
) -> None:
    spec: dict[str, Any] = {
        "sourceType": "grpc",
        "image": image,
        "updateStrategy": {"registryPoll": {"interval": "3s"}},
    }
    if secrets:
        spec["secrets"] = list(secrets)
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": name},
        "spec": spec,
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def pull_secret(plane: ControlPlane, namespace: str, config: dict[str, Any]) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "pull"},
        "type": "kubernetes.io/dockerconfigjson",
        "data": {".dockerconfigjson": base64.b64encode(json.dumps(config).encode()).decode()},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def status_of(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.get_json("catsrc", name, "-n", namespace).get("status") or {}
    return found


def explained(plane: ControlPlane, namespace: str, name: str, fragment: str) -> str:
    def said() -> str | None:
        status = status_of(plane, namespace, name)
        message = str(status.get("message") or "")
        state = (status.get("connectionState") or {}).get("lastObservedState")
        if status.get("reason") == "RegistryServerError" and state == "TRANSIENT_FAILURE":
            return message if fragment in message else None
        return None

    message: str = wait_for(said, timeout=60, what=f"catsrc {name} explained ({fragment!r})")
    return message


def recovered(plane: ControlPlane, namespace: str, name: str) -> None:
    def back() -> bool:
        status = status_of(plane, namespace, name)
        state = (status.get("connectionState") or {}).get("lastObservedState")
        return state == "READY" and not status.get("message") and bool(status.get("resolvedImage"))

    wait_for(back, timeout=STEP_TIMEOUT, what=f"catsrc {name} READY again")


def corrupt_image() -> Image:
    """A catalog image whose layer is not a tar archive (the registry checks digests only)."""
    good = scratch_image(
        {"configs/x.yaml": b"{}"}, {"operators.operatorframework.io.index.configs.v1": "/configs"}
    )
    garbage = Blob(OCI_LAYER_GZIP, gzip.compress(b"not a tar archive" * 40))
    manifest = json.loads(good.manifest)
    manifest["layers"] = [garbage.descriptor()]
    return Image(good.config, (garbage,), json.dumps(manifest).encode())


def test_bad_catalog_images_are_explained_and_recover_when_fixed(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    registry: str,
    token_registry: str,
    tmp_path: Path,
) -> None:
    """Four broken catalog images side by side in one namespace - a registry that is down,
    credentials the registry refuses, a corrupt layer, a bundle image that is not a bundle -
    each explained on its own status, each recovering once fixed; meanwhile the ordinary
    story in another namespace installs as usual."""
    plane = control_plane
    options = Options(cache=BlobCache(tmp_path / "push"), use_local_configs=False)
    other = f"t-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", other)
    plane.kubectl("label", "namespace", other, f"{SESSION_LABEL}={SESSION_ID}")
    down_port = free_ports(1)[0]
    down_image = f"127.0.0.1:{down_port}/olm/samples:v1"
    private_image = f"{token_registry}/olm/private:v1"
    corrupt = f"{registry}/{namespace}/corrupt:v1"
    push(parse(corrupt), corrupt_image(), options)
    # The bundles catalog: 0.0.1 a real bundle image, 0.0.2 an image that is not a bundle.
    bundles = {}
    for version in ("0.0.1", "0.0.2"):
        bundles[f"memcached-operator.v{version}"] = (
            f"{registry}/{namespace}/memcached-operator-bundle:v{version}"
        )
    pushed = olm(plane, "bundle", "push", str(bundle_dir(tmp_path, "0.0.1")), bundles[OLD])
    assert pushed.returncode == 0, pushed.stderr
    push(parse(bundles[NEW]), scratch_image({"etc/x": b"x"}, {}), options)
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "catalog.yaml").write_bytes(catalog_by_image(bundles))
    push_catalog(plane, tmp_path / "catalog", f"{registry}/{namespace}/bundles:v1")

    pull_secret(plane, namespace, secret(USER, "wrong", token_registry))
    image_source(plane, namespace, "down", down_image)
    image_source(plane, namespace, "private", private_image, secrets=("pull",))
    image_source(plane, namespace, "corrupt", corrupt)
    image_source(plane, namespace, SOURCE, f"{registry}/{namespace}/bundles:v1")
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Automatic", source=SOURCE, sourceNamespace=namespace)
    operator_group(plane, other)
    subscribe(plane, other, "Automatic")
    registry_process = None
    try:
        assert "nothing is listening there" in explained(plane, namespace, "down", down_image)
        assert "refused the credentials" in explained(plane, namespace, "private", "credentials")
        assert "not a readable tar archive" in explained(plane, namespace, "corrupt", corrupt)

        def unpack_failed() -> dict[str, Any] | None:
            conditions = (subscription(plane, namespace).get("status") or {}).get("conditions")
            return next((c for c in conditions or [] if c["type"] == "BundleUnpackFailed"), None)

        condition = wait_for(unpack_failed, timeout=STEP_TIMEOUT, what="BundleUnpackFailed")
        assert condition["status"] == "True" and condition["reason"] == "BundleUnpackFailed"
        assert condition["message"].startswith(
            f"bundle image {bundles[NEW]} of {NEW} could not be unpacked: "
        )
        assert "it is not a registry+v1 bundle image" in condition["message"]
        assert not plans(plane, namespace), "no InstallPlan for a bundle with no objects"
        # Another namespace, the ordinary story: unaffected.
        wait_for(
            lambda: phase(plane, other, NEW) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what=f"{NEW} in another namespace",
        )

        # Fix each one; each recovers within a few seconds (backoff, poll interval 3 s).
        (tmp_path / "down").mkdir()
        registry_process = start_registry(tmp_path / "down", down_port)
        (tmp_path / "fbc").mkdir()
        write_catalog(tmp_path / "fbc", with_v3=False)
        push_catalog(plane, tmp_path / "fbc", down_image)
        pull_secret(plane, namespace, secret(USER, PASSWORD, token_registry))
        push_catalog(plane, tmp_path / "fbc", corrupt)
        pushed = olm(
            plane, "bundle", "push", str(bundle_dir(tmp_path / "fixed", "0.0.2")), bundles[NEW]
        )
        assert pushed.returncode == 0, pushed.stderr
        for name in ("down", "private", "corrupt"):
            recovered(plane, namespace, name)
        wait_for(
            lambda: phase(plane, namespace, NEW) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what=f"{NEW} once its bundle image is a bundle",
        )
        assert unpack_failed() is None
    finally:
        if registry_process is not None:
            stop_registry(registry_process)
        plane.kubectl("delete", "namespace", other, "--wait=false", check=False)
