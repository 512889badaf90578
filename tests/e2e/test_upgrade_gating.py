"""An operator can hold back its own upgrade: Upgradeable=False on the running CSV's
OperatorCondition keeps the replacement Pending until it is lifted."""

from __future__ import annotations

import json

import yaml

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import SAMPLE, install_sample, phase, wait_phase

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"


def test_upgradeable_false_holds_back_the_replacement(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    install_sample(control_plane, namespace)
    condition = control_plane.get_json("operatorcondition", OLD, "-n", namespace)
    assert condition["metadata"]["ownerReferences"][0]["name"] == OLD
    override = {
        "spec": {
            "overrides": [
                {
                    "type": "Upgradeable",
                    "status": "False",
                    "reason": "Migrating",
                    "message": "a data migration is running",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ]
        }
    }
    control_plane.kubectl(
        "patch",
        "operatorcondition",
        OLD,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        json.dumps(override),
    )

    new_csv = yaml.safe_load((SAMPLE / "memcached-operator.v0.0.2.csv.yaml").read_text())
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(new_csv))
    held = wait_phase(control_plane, namespace, NEW, "Pending/OperatorConditionNotUpgradeable")
    assert "a data migration is running" in held["status"]["message"]
    # As in OLM, the old CSV steps aside at once; its operator keeps running meanwhile. (It does
    # so on its own next decision, which may come after the new CSV's: waited for, not read.)
    wait_for(
        lambda: phase(control_plane, namespace, OLD) == "Replacing/BeingReplaced",
        what=f"{OLD} Replacing",
    )
    deployment = control_plane.get_json("deployment", "memcached-operator", "-n", namespace)
    assert deployment["metadata"]["labels"]["olm.owner"] == OLD

    control_plane.kubectl(
        "patch",
        "operatorcondition",
        OLD,
        "-n",
        namespace,
        "--type=merge",
        "-p",
        '{"spec":{"overrides":[]}}',
    )
    wait_phase(control_plane, namespace, NEW, "Succeeded/InstallSucceeded")
    wait_for(
        lambda: phase(control_plane, namespace, OLD) == "absent",
        timeout=STEP_TIMEOUT,
        what=f"{OLD} deleted",
    )
