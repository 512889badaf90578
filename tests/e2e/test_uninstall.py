"""`olm uninstall-operator`, as a user runs it with their own kubeconfig: the Subscription,
CSV and InstallPlans go; the CRD goes only when asked (olm-py.io/cleanup=crds-when-unused)
and only once no Memcached remains; the operands are never touched (docs/uninstall.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group
from tests.support.subscriptions import NEW, OLD, approve, memcached, plan_for, plans, subscribe

PACKAGE = "memcached-operator"
CRD = "memcacheds.cache.example.com"
SUB = "memcached"


def olm_uninstall(plane: ControlPlane, *args: str) -> str:
    """`olm uninstall-operator ARGS` with the test cluster's kubeconfig; its output. A non-zero
    exit fails the test."""
    result = subprocess.run(
        [sys.executable, "-m", "olm.cli", "uninstall-operator", *args],
        capture_output=True,
        text=True,
        env=plane.env(),
        timeout=STEP_TIMEOUT,
    )
    assert result.returncode == 0, f"exit {result.returncode}:\n{result.stdout}{result.stderr}"
    return result.stdout


def install_old(plane: ControlPlane, namespace: str) -> None:
    """memcached-operator 0.0.1 from the samples catalog (Manual: the 0.0.2 plan then waits)."""
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", startingCSV=OLD)
    approve(plane, namespace, plan_for(plane, namespace, OLD))
    wait_for(
        lambda: (
            exists(plane, "csv", OLD, namespace)
            and plane.get_json("csv", OLD, "-n", namespace).get("status", {}).get("phase")
            == "Succeeded"
        ),
        timeout=STEP_TIMEOUT,
        what=f"{OLD} Succeeded",
    )
    plan_for(plane, namespace, NEW)  # the upgrade's plan, waiting for approval: ours too


def exists(plane: ControlPlane, kind: str, name: str, namespace: str | None = None) -> bool:
    where = ["-n", namespace] if namespace else []
    found = plane.kubectl("get", kind, name, *where, "-o", "name", check=False)
    if found.returncode != 0 and "NotFound" not in found.stderr:
        raise AssertionError(found.stderr)
    return found.returncode == 0


def package_gone(plane: ControlPlane, namespace: str) -> bool:
    return not (
        exists(plane, "subscription.operators.coreos.com", SUB, namespace)
        or exists(plane, "csv", OLD, namespace)
        or plans(plane, namespace)
        or exists(plane, "operatorcondition", OLD, namespace)
    )


def test_uninstall_deletes_the_crd_only_once_no_memcached_remains(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    install_old(plane, namespace)
    memcached(plane, namespace, "memcached-sample")
    plane.kubectl(
        "annotate",
        "subscription.operators.coreos.com",
        SUB,
        "-n",
        namespace,
        "olm-py.io/cleanup=crds-when-unused",
    )

    # 1. The operator goes; the CRD stays while a Memcached remains, and the output names it.
    said = olm_uninstall(plane, PACKAGE, "-n", namespace)
    assert f"deleted   Subscription {namespace}/{SUB}" in said
    assert f"deleted   ClusterServiceVersion {namespace}/{OLD}" in said
    assert said.count("deleted   InstallPlan") == 2, said  # 0.0.1's and the waiting 0.0.2's
    assert f"gc        OperatorCondition {namespace}/{OLD}" in said
    kept = next(line for line in said.splitlines() if line.startswith("kept"))
    assert kept.startswith(f"kept      CustomResourceDefinition {CRD}: "), said
    assert "Memcached remain" in kept and f"{namespace}/memcached-sample" in kept, said
    assert f"olm uninstall-operator {PACKAGE} -n {namespace}" in said.splitlines()[-1]
    wait_for(lambda: package_gone(plane, namespace), timeout=STEP_TIMEOUT, what="the package gone")
    crd = plane.get_json("crd", CRD)
    assert crd["metadata"]["annotations"]["olm-py.io/cleanup"] == "crds-when-unused"
    assert exists(plane, "memcached", "memcached-sample", namespace), "operands are never deleted"

    # 2. Again while it remains: idempotent, still kept.
    again = olm_uninstall(plane, PACKAGE, "-n", namespace)
    assert "deleted   " not in again and f"{namespace}/memcached-sample" in again, again

    # 3. The Memcached deleted, the same command deletes the CRD (it finds it by its mark).
    plane.kubectl("delete", "memcached", "memcached-sample", "-n", namespace)
    outputs: list[str] = []

    def crd_deleted() -> bool:
        # Memcacheds or CSVs of other tests' namespaces may still be going: run it again.
        outputs.append(olm_uninstall(plane, PACKAGE, "-n", namespace))
        return f"deleted   CustomResourceDefinition {CRD}" in outputs[-1]

    wait_for(crd_deleted, timeout=STEP_TIMEOUT, interval=2, what=f"{CRD} deleted ({outputs[-1:]})")
    wait_for(lambda: not exists(plane, "crd", CRD), timeout=STEP_TIMEOUT, what=f"{CRD} gone")
    assert "nothing to do" in olm_uninstall(plane, PACKAGE, "-n", namespace)


def test_uninstall_keeps_the_crd_by_default_and_a_dry_run_changes_nothing(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    install_old(plane, namespace)

    dry = olm_uninstall(plane, PACKAGE, "-n", namespace, "--dry-run")
    assert f"would delete Subscription {namespace}/{SUB}" in dry
    assert f"would delete ClusterServiceVersion {namespace}/{OLD}" in dry
    assert exists(plane, "subscription.operators.coreos.com", SUB, namespace)
    assert exists(plane, "csv", OLD, namespace)

    said = olm_uninstall(plane, PACKAGE, "-n", namespace)
    assert f"kept      CustomResourceDefinition {CRD}: cleanup policy keep" in said, said
    assert "--crds-when-unused" in said.splitlines()[-1]
    wait_for(lambda: package_gone(plane, namespace), timeout=STEP_TIMEOUT, what="the package gone")
    crd = plane.get_json("crd", CRD)
    assert "olm-py.io/cleanup" not in (crd["metadata"].get("annotations") or {})


def test_uninstall_wait_deletes_the_crd_once_the_last_memcached_is_gone(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    namespace: str,
    tmp_path: Path,
) -> None:
    plane = control_plane
    install_old(plane, namespace)
    memcached(plane, namespace, "last-one")
    log = tmp_path / "uninstall.log"
    with log.open("w") as out:
        waiting = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "olm.cli",
                "uninstall-operator",
                PACKAGE,
                "-n",
                namespace,
                "--crds-when-unused",
                "--wait",
                f"--timeout={STEP_TIMEOUT:.0f}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=plane.env(),
        )
    try:
        wait_for(
            lambda: "waiting   for what blocks the CRDs" in log.read_text(),
            timeout=STEP_TIMEOUT,
            what=f"the uninstall waiting ({log.read_text()})",
        )
        said = log.read_text()
        assert f"{namespace}/last-one" in said and waiting.poll() is None, said
        assert exists(plane, "crd", CRD)
        plane.kubectl("delete", "memcached", "last-one", "-n", namespace)
        assert waiting.wait(STEP_TIMEOUT + 30) == 0, log.read_text()
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    assert f"deleted   CustomResourceDefinition {CRD}" in log.read_text()
    wait_for(lambda: not exists(plane, "crd", CRD), timeout=STEP_TIMEOUT, what=f"{CRD} gone")
