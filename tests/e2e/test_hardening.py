"""Hardening of olm-py itself (issue 25, item 5; docs/security-hardening.md), on the real local
control plane, with olm-py as `olm run --log-level=debug` (the most it ever logs):

1. The PackageManifest API's serving certificate, found near its expiry (a certificate valid
   for one hour, inside OLM's one-day rotation window, written over olm-py's), is replaced by a
   fresh one: new Secret, new caBundle on the APIService, `kubectl get packagemanifests` answers.
   No waiting for real time: the short-lived certificate is made by the test.
2. No Secret value reaches a log, an Event or a status: a random marker is put into a bundle's
   Secret (an InstallPlan step), a CatalogSource's pull secret (spec.secrets) and a Secret in the
   namespace of the installed operator; after the install, olm-py's log, every Event in the
   cluster and the status of every operators.coreos.com object are searched for it. The one
   place it is expected is where OLM v0 keeps it too: the InstallPlan step that writes the
   bundle's Secret carries that Secret's manifest (the plan is executed from its steps).
"""

from __future__ import annotations

import base64
import copy
import datetime
import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from olm.install import certs
from olm.packages import registration
from tests.support.catalog_server import V1, Server
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase, write_first_bundle_catalog
from tests.support.subscriptions import subscribe

OLM_NAMESPACE = "olm"  # where the host's `olm run` registers the PackageManifest API


class DebugOperator:
    """`olm run --log-level=debug` in place of the session's `olm run` (one OLM at a time)."""

    def __init__(self, plane: ControlPlane, log: Path) -> None:
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olm.cli", "run", "--resync=30", "--log-level=debug"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=plane.env(),
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="module")
def debug_operator(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[DebugOperator]:
    olm_operator.stop()
    operator = DebugOperator(control_plane, tmp_path_factory.mktemp("debug") / "olm-run.log")
    try:
        wait_for(
            lambda: "caches synced" in operator.text(),
            timeout=STEP_TIMEOUT,
            what="the debug olm run's caches",
        )
        yield operator
    finally:
        operator.stop()
        synced = olm_operator.log_path.read_text(errors="replace").count("caches synced")
        olm_operator.start()
        wait_for(
            lambda: (
                olm_operator.log_path.read_text(errors="replace").count("caches synced") > synced
            ),
            timeout=STEP_TIMEOUT,
            what="the session's olm run back",
        )


# ----- 1. the PackageManifest API's certificate --------------------------------------------


def serving_secret(plane: ControlPlane) -> dict[str, bytes]:
    result = plane.kubectl(
        "get", "secret", registration.SECRET, "-n", OLM_NAMESPACE, "-o", "json", check=False
    )
    if result.returncode != 0:
        return {}
    data = json.loads(result.stdout).get("data") or {}
    return {key: base64.b64decode(value) for key, value in data.items()}


def ca_bundle(plane: ControlPlane) -> bytes:
    found = plane.get_json("apiservice", registration.APISERVICE)
    return base64.b64decode(found["spec"].get("caBundle") or "")


def packagemanifests_answer(plane: ControlPlane) -> bool:
    result = plane.kubectl("get", "packagemanifests", "-n", "default", check=False)
    return result.returncode == 0 and "memcached-operator" in result.stdout


def test_a_packagemanifest_certificate_near_expiry_is_replaced(
    control_plane: ControlPlane, debug_operator: DebugOperator, pod_network: None
) -> None:
    plane = control_plane
    wait_for(
        lambda: packagemanifests_answer(plane),
        timeout=STEP_TIMEOUT,
        what="the PackageManifest API served by olm-py",
    )
    now = datetime.datetime.now(datetime.UTC)
    hosts = certs.service_hosts(registration.SERVICE, OLM_NAMESPACE)
    # Valid one more hour: inside OLM's one-day rotation window (certs.DEFAULT_ROTATE_BEFORE).
    short = certs.issue(hosts, now, certs.CertSettings(validity=datetime.timedelta(hours=1)))
    plane.kubectl(
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=hardening-test",
        "-f",
        "-",
        stdin=json.dumps(registration.secret(OLM_NAMESPACE, short)),
    )
    assert serving_secret(plane)["tls.crt"] == short.cert_pem

    def replaced() -> dict[str, bytes] | None:
        data = serving_secret(plane)
        if not data or data.get("tls.crt") in (None, short.cert_pem):
            return None
        return data

    fresh = wait_for(replaced, timeout=STEP_TIMEOUT, what="olm-py to replace the certificate")
    cert = x509.load_pem_x509_certificate(fresh["tls.crt"])
    assert cert.not_valid_after_utc - now > certs.DEFAULT_ROTATE_BEFORE, "a fresh certificate"
    assert fresh[registration.CA_KEY] != short.ca_pem
    wait_for(
        lambda: ca_bundle(plane) == fresh[registration.CA_KEY],
        timeout=STEP_TIMEOUT,
        what="the APIService to trust the new CA",
    )
    wait_for(
        lambda: packagemanifests_answer(plane),
        timeout=STEP_TIMEOUT,
        what="kubectl get packagemanifests through the new certificate",
    )
    assert "issued the PackageManifest API's serving certificate" in debug_operator.text()


# ----- 2. no Secret value in a log, an Event or a status ------------------------------------


def b64(value: str) -> str:
    return base64.b64encode(value.encode()).decode()


def bundle_secret(token: str) -> dict[str, Any]:
    """A Secret a bundle ships: an InstallPlan step creates it."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "bundled-token"},
        "type": "Opaque",
        "data": {"token": b64(token)},
    }


def apply(plane: ControlPlane, namespace: str, body: dict[str, Any]) -> None:
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def statuses(plane: ControlPlane) -> dict[str, Any]:
    """`<resource>/<namespace>/<name>` -> status, of every object of OLM's API group."""
    names = plane.kubectl(
        "api-resources", "--api-group=operators.coreos.com", "-o", "name"
    ).stdout.split()
    assert "installplans.operators.coreos.com" in names, names
    found: dict[str, Any] = {}
    for resource in names:
        for item in plane.get_json(resource, "--all-namespaces")["items"]:
            meta = item["metadata"]
            found[f"{resource}/{meta.get('namespace', '')}/{meta['name']}"] = item.get("status")
    return found


def test_no_secret_value_reaches_a_log_an_event_or_a_status(
    control_plane: ControlPlane,
    debug_operator: DebugOperator,
    namespace: str,
    registry: str,
    tmp_path: Path,
) -> None:
    plane = control_plane
    token = f"leak-{secrets.token_hex(16)}"
    auth = b64(f"{token}-user:{token}")
    needles = {token, b64(token), auth}

    # A Secret in the namespace the operator is installed in (olm.managed: olm-py watches it).
    apply(
        plane,
        namespace,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "tenant-token", "labels": {"olm.managed": "true"}},
            "data": {"token": b64(token)},
        },
    )
    # A pull secret named by an image CatalogSource (olm-py reads it to pull), for an image
    # that is not there: its status says so, and must not say more.
    dockerconfig = json.dumps({"auths": {registry: {"auth": auth}}})
    apply(
        plane,
        namespace,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "pull-token"},
            "type": "kubernetes.io/dockerconfigjson",
            "data": {".dockerconfigjson": b64(dockerconfig)},
        },
    )
    needles.add(b64(dockerconfig))
    missing = f"{registry}/{namespace}/missing:v1"
    apply(
        plane,
        namespace,
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": "pulled"},
            "spec": {"sourceType": "grpc", "image": missing, "secrets": ["pull-token"]},
        },
    )
    # A bundle that ships a Secret: an InstallPlan step creates it.
    write_first_bundle_catalog(tmp_path, (bundle_secret(token),))
    server = Server(tmp_path)
    server.start()
    try:
        apply(
            plane,
            namespace,
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "CatalogSource",
                "metadata": {"name": "bundled"},
                "spec": {"sourceType": "grpc", "address": f"127.0.0.1:{server.port}"},
            },
        )
        operator_group(plane, namespace)
        subscribe(plane, namespace, "Automatic", source="bundled", sourceNamespace=namespace)
        wait_for(
            lambda: phase(plane, namespace, V1) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what=f"{V1} installed from the catalog whose bundle ships a Secret",
        )
    finally:
        server.stop()
    installed = plane.get_json("secret", "bundled-token", "-n", namespace)
    assert base64.b64decode(installed["data"]["token"]).decode() == token

    def pull_failed() -> str:
        status = plane.get_json("catsrc", "pulled", "-n", namespace).get("status") or {}
        return str(status.get("message") or "")

    said = wait_for(pull_failed, timeout=STEP_TIMEOUT, what="the pull failure on CatalogSource")
    assert "missing" in said, said
    # olm-py's own secrets too: the PackageManifest API's private key, when it serves one.
    key = serving_secret(plane).get("tls.key")
    if key:
        body = "".join(line for line in key.decode().splitlines() if "-----" not in line)
        needles |= {body[:48], b64(key.decode())[:48]}

    def leaks(text: str) -> list[str]:
        return sorted(n for n in needles if n in text)

    log = debug_operator.text()
    assert log.count("\n") > 100, "olm-py's debug log is there to search"
    assert leaks(log) == [], "olm-py's log holds a Secret value"
    events = plane.kubectl("get", "events", "--all-namespaces", "-o", "json").stdout
    assert json.loads(events)["items"], "Events are there to search"
    assert leaks(events) == [], "an Event holds a Secret value"

    expected = []
    for where, status in statuses(plane).items():
        status = copy.deepcopy(status) or {}
        if where.startswith("installplans.") and f"/{namespace}/" in where:
            # As in OLM v0: the step that writes the bundle's Secret (step kind BundleSecret)
            # carries its manifest.
            for step in status.get("plan") or []:
                if step.get("resource", {}).get("kind") == "BundleSecret":
                    expected.append(step["resource"].pop("manifest"))
        assert leaks(json.dumps(status)) == [], f"the status of {where} holds a Secret value"
    assert [m for m in expected if b64(token) in m], "the bundle's Secret step was not found"
