"""olm-py driven by the `kubectl operator` plugin (kubectl-operator v0.6.0), as OLM users run
it: the commands that need only OLM v0's CatalogSources, Subscriptions, InstallPlans and CSVs
work unchanged (docs/kubectl-operator.md says which commands need PackageManifests or
Operator objects, which olm-py does not serve yet)."""

from __future__ import annotations

import json

from tests.conftest import ControlPlane, KubectlOperator, OlmOperator, wait_for
from tests.e2e.stories import operator_group, wait_phase
from tests.e2e.test_subscriptions import NEW, OLD, approve, plan_for, subscribe, subscription


def rows(output: str) -> list[list[str]]:
    """The table `kubectl operator` prints, split into words (AGE varies: callers skip it)."""
    return [line.split() for line in output.strip().splitlines()]


def test_kubectl_finds_the_plugin_and_it_lists_the_catalogs(
    control_plane: ControlPlane, olm_operator: OlmOperator, kubectl_operator: KubectlOperator
) -> None:
    assert 'GitVersion:"v0.6.0"' in kubectl_operator("version").stdout
    wait_for(
        lambda: any(
            row[:2] == ["samples", "olm"]
            for row in rows(kubectl_operator("catalog", "list", "-A").stdout)
        ),
        what="the samples catalog in `kubectl operator catalog list -A`",
    )
    table = rows(kubectl_operator("catalog", "list", "-A").stdout)
    assert table[0] == ["NAME", "NAMESPACE", "DISPLAY", "TYPE", "PUBLISHER", "AGE"]
    samples = next(row for row in table if row[:2] == ["samples", "olm"])
    assert samples[2:-1] == ["olm-py", "samples", "grpc", "olm-py"]


def test_catalog_remove_deletes_the_catalog_source_and_waits_for_it(
    control_plane: ControlPlane, kubectl_operator: KubectlOperator, namespace: str
) -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "extra"},
        "spec": {"sourceType": "grpc", "address": "127.0.0.1:1", "publisher": "me"},
    }
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))
    table = rows(kubectl_operator("catalog", "list", "-n", namespace).stdout)
    assert table[1][:3] == ["extra", "grpc", "me"]
    removed = kubectl_operator("catalog", "remove", "extra", "-n", namespace)
    assert 'catalogsource "extra" removed' in removed.stdout + removed.stderr
    gone = control_plane.kubectl("get", "catsrc", "extra", "-n", namespace, check=False)
    assert "NotFound" in gone.stderr


def test_upgrade_approves_the_pending_plan_and_waits_for_the_new_csv(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    kubectl_operator: KubectlOperator,
    namespace: str,
) -> None:
    # What `kubectl operator install --version 0.0.1` would create (it needs PackageManifests
    # to find the catalog): an OperatorGroup, a Manual Subscription, the first plan approved.
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, "Manual", name_="memcached-operator", startingCSV=OLD)
    approve(plane, namespace, plan_for(plane, namespace, OLD))
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")
    plan_for(plane, namespace, NEW)
    wait_for(
        lambda: (
            (subscription(plane, namespace, "memcached-operator").get("status") or {}).get("state")
            == "UpgradePending"
        ),
        what="the Subscription UpgradePending",
    )
    # `list` lists every namespace's Subscriptions whatever -n says (v0.6.0): find ours.
    listed = rows(kubectl_operator("list", "-A").stdout)
    assert listed[0][:3] == ["PACKAGE", "NAMESPACE", "SUBSCRIPTION"]
    ours = [row for row in listed[1:] if row[1] == namespace]
    assert [row[:-1] for row in ours] == [
        ["memcached-operator", namespace, "memcached-operator", OLD, NEW, "UpgradePending"]
    ]

    upgraded = kubectl_operator("upgrade", "memcached-operator", "-n", namespace)
    assert f'installed csv is "{NEW}"' in upgraded.stdout + upgraded.stderr
    wait_phase(plane, namespace, NEW, "Succeeded/InstallSucceeded")
    again = kubectl_operator("upgrade", "memcached-operator", "-n", namespace, check=False)
    assert again.returncode != 0
    assert "operator is already at latest version" in again.stdout + again.stderr
