"""The reference OLM: `olm dev up --reference-olm` runs the real OLM v0.38.0 on a local cluster
of its own, and the real OLM drives olm-py's getting-started story there.

The real OLM binds the fixed ports :8080 and :8443, so this module needs them free (only one
reference cluster runs at a time on a machine).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from olm.devcluster.cluster import DevCluster
from olm.devcluster.process import ProcessRecord, is_running
from olm.devcluster.reference import wait_for_health_ports
from olm.devcluster.reference_build import (
    OLM_VERSION,
    build_inputs,
    cache_problems,
    ensure_reference_olm,
    go_available,
    reference_dir,
)
from tests.support.cluster import ControlPlane, wait_for
from tests.support.paths import REPO

SAMPLE = REPO / "manifests" / "samples" / "memcached-operator"

pytestmark = pytest.mark.skipif(
    not go_available() and bool(cache_problems(reference_dir(), build_inputs())),
    reason="the Go toolchain is missing, so the reference OLM cannot be built (install Go "
    ">= 1.24 and run `make reference-olm`)",
)


def olm_dev(state_dir: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "olm.cli", "dev", f"--state-dir={state_dir}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    state = tmp_path_factory.mktemp("reference") / "cluster"
    wait_for_health_ports(1200)  # a benchmark or the parity suite may run a reference OLM
    up = olm_dev(state, "up", "--reference-olm")
    assert up.returncode == 0, up.stderr
    try:
        yield state
    finally:
        DevCluster(state).down()


@pytest.fixture(scope="module")
def plane(state_dir: Path) -> ControlPlane:
    return ControlPlane(DevCluster(state_dir), None)


@pytest.fixture
def namespace(plane: ControlPlane) -> Iterator[str]:
    name = f"ref-{uuid.uuid4().hex[:8]}"
    plane.kubectl("create", "namespace", name)
    yield name
    plane.kubectl("delete", "namespace", name, "--wait=false", check=False)


def apply(plane: ControlPlane, namespace: str, obj: dict[str, object]) -> None:
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(obj))


def operator_group(plane: ControlPlane, namespace: str) -> None:
    apply(
        plane,
        namespace,
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og"},
            "spec": {"targetNamespaces": [namespace]},
        },
    )


def jsonpath(plane: ControlPlane, *args: str) -> str:
    result = plane.kubectl("get", *args[:-1], "-o", f"jsonpath={args[-1]}", check=False)
    return result.stdout if result.returncode == 0 else "absent"


def test_a_taken_olm_port_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            taken.bind(("0.0.0.0", 8443))
        except OSError:
            pytest.skip("port 8443 is in use by another program: no reference cluster can start")
        taken.listen()
        result = olm_dev(tmp_path / "cluster", "up", "--reference-olm", timeout=120)
    assert result.returncode == 1
    assert "Port :8443 (all interfaces) is already in use" in result.stderr
    assert "only one reference cluster" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "cluster" / "cluster.json").exists()


def test_the_cluster_runs_the_real_olm_prepared_as_its_chart_does(
    state_dir: Path, plane: ControlPlane
) -> None:
    version = subprocess.run(
        [str(ensure_reference_olm().olm), "--version"], capture_output=True, text=True, timeout=30
    )
    assert OLM_VERSION in version.stdout, version
    status = olm_dev(state_dir, "status", timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    for component in ("olm-operator", "catalog-operator", "samples-catalog"):
        assert any(
            line.split()[:1] == [component] and "healthy" in line
            for line in status.stdout.splitlines()
        ), status.stdout
    env = olm_dev(state_dir, "env", timeout=60).stdout
    assert f"KUBECONFIG={state_dir / 'kubeconfig'}" in env
    assert f"OLM_REFERENCE_OLM={OLM_VERSION}" in env
    # OLM's own CRDs (olm-py does not ship OLMConfig), its namespaces and global group.
    plane.kubectl("get", "crd", "olmconfigs.operators.coreos.com")
    assert plane.get_json("operatorgroup", "global-operators", "-n", "operators")["spec"] in (
        {},
        {"upgradeStrategy": {"name": "Default"}},
        {"upgradeStrategy": "Default"},
    )
    catalog = plane.get_json("catalogsource", "samples", "-n", "olm")
    assert catalog["spec"]["address"].startswith("127.0.0.1:")
    assert catalog["status"]["connectionState"]["lastObservedState"] == "READY"
    # Nothing may start olm-py on it.
    with pytest.raises(Exception, match="must not run on it"):
        DevCluster(state_dir).start_process("olm-run", [sys.executable, "-m", "olm.cli", "run"])
    again = olm_dev(state_dir, "up", "--reference-olm", timeout=300)
    assert again.returncode == 0 and "already up" in again.stderr, again.stderr


def test_the_real_olm_installs_the_sample_csv_applied_with_kubectl(
    plane: ControlPlane, namespace: str
) -> None:
    operator_group(plane, namespace)
    plane.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    plane.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
    csv = yaml.safe_load((SAMPLE / "memcached-operator.v0.0.1.csv.yaml").read_text())
    apply(plane, namespace, csv)
    name = "memcached-operator.v0.0.1"
    wait_for(
        lambda: jsonpath(plane, "csv", name, "-n", namespace, "{.status.phase}") == "Succeeded",
        timeout=180,
        what=f"{name} Succeeded (now {jsonpath(plane, 'csv', name, '-n', namespace, '{.status.phase}/{.status.reason}')})",
    )
    deployment = plane.get_json("deployment", "memcached-operator", "-n", namespace)
    assert deployment["metadata"]["labels"]["olm.owner"] == name


def test_a_subscription_to_the_samples_catalog_succeeds(
    plane: ControlPlane, namespace: str
) -> None:
    operator_group(plane, namespace)
    apply(
        plane,
        namespace,
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": "memcached-operator"},
            "spec": {
                "channel": "alpha",
                "name": "memcached-operator",
                "source": "samples",
                "sourceNamespace": "olm",
                "installPlanApproval": "Automatic",
            },
        },
    )

    def installed() -> str:
        return jsonpath(
            plane, "subscription", "memcached-operator", "-n", namespace, "{.status.installedCSV}"
        )

    wait_for(lambda: installed() not in ("", "absent"), timeout=180, what="an installed CSV")
    name = installed()
    wait_for(
        lambda: jsonpath(plane, "csv", name, "-n", namespace, "{.status.phase}") == "Succeeded",
        timeout=180,
        what=f"{name} Succeeded",
    )
    wait_for(
        lambda: (
            jsonpath(
                plane, "subscription", "memcached-operator", "-n", namespace, "{.status.state}"
            )
            == "AtLatestKnown"
        ),
        timeout=120,
        what="the Subscription AtLatestKnown",
    )
    assert name == channel_head("memcached-operator", "alpha")


def channel_head(package: str, channel: str) -> str:
    """The entry of `channel` in the samples catalog that no other entry replaces."""
    documents = yaml.safe_load_all((REPO / "catalogs" / "samples" / "catalog.yaml").read_text())
    (entries,) = [
        d["entries"]
        for d in documents
        if d
        and d.get("schema") == "olm.channel"
        and (d["package"], d["name"]) == (package, channel)
    ]
    replaced = {e.get("replaces") for e in entries}
    (head,) = [e["name"] for e in entries if e["name"] not in replaced]
    return str(head)


def test_down_stops_every_process(state_dir: Path) -> None:
    records = [r for r in DevCluster(state_dir).processes() if is_running(r)]
    names = {r.name for r in records}
    assert {"olm-operator", "catalog-operator", "samples-catalog", "kube-apiserver"} <= names
    down = olm_dev(state_dir, "down", timeout=120)
    assert down.returncode == 0, down.stderr
    assert "olm-operator" in down.stdout and "catalog-operator" in down.stdout
    left: list[ProcessRecord] = [r for r in records if is_running(r)]
    assert left == [], left
    assert not state_dir.exists()
