"""OLM repairs what it installed: an edited operator Deployment is put back, a deleted one
goes through OLM's failure and reinstall path back to Succeeded."""

from __future__ import annotations

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.recorder import Recorder
from tests.support.stories import install_sample, phase

CSV = "memcached-operator.v0.0.1"


def test_an_edited_operator_deployment_is_put_back(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    install_sample(control_plane, namespace)
    recorder = Recorder(control_plane, namespace)
    recorder.wait_until_watching(CSV)
    try:
        control_plane.kubectl(
            "patch",
            "deployment",
            "memcached-operator",
            "-n",
            namespace,
            "--type=merge",
            "-p",
            '{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"operator","image":"evil/image:1"}]}}}}',
        )

        def restored() -> bool:
            spec = control_plane.get_json("deployment", "memcached-operator", "-n", namespace)[
                "spec"
            ]
            return (
                spec["replicas"] == 1
                and spec["template"]["spec"]["containers"][0]["image"]
                == "olm-py.local/memcached-operator:0.0.1"
            )

        wait_for(restored, what="the Deployment put back")
        # The rollout back to one replica goes through the controller-manager and kwok, which a
        # loaded machine (a whole CI run on 2 cores) slows down: allow it time.
        wait_for(
            lambda: phase(control_plane, namespace, CSV) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what="Succeeded again",
        )
    finally:
        recorder.close()
    states = recorder.phases(CSV)
    assert "InstallReady/ComponentUnhealthy" in states, states
    assert states[-1] == "Succeeded/InstallSucceeded", states


def test_a_deleted_operator_deployment_is_reinstalled(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    install_sample(control_plane, namespace)
    old_uid = control_plane.get_json("deployment", "memcached-operator", "-n", namespace)[
        "metadata"
    ]["uid"]
    recorder = Recorder(control_plane, namespace)
    recorder.wait_until_watching(CSV)
    try:
        control_plane.kubectl("delete", "deployment", "memcached-operator", "-n", namespace)
        wait_for(
            lambda: (
                control_plane.kubectl(
                    "get", "deployment", "memcached-operator", "-n", namespace, check=False
                ).returncode
                == 0
                and control_plane.get_json("deployment", "memcached-operator", "-n", namespace)[
                    "metadata"
                ]["uid"]
                != old_uid
            ),
            timeout=STEP_TIMEOUT,
            what="a new Deployment",
        )
        # A rollout from nothing, as slow on a loaded machine as the one above.
        wait_for(
            lambda: phase(control_plane, namespace, CSV) == "Succeeded/InstallSucceeded",
            timeout=STEP_TIMEOUT,
            what="Succeeded again",
        )
    finally:
        recorder.close()
    states = recorder.phases(CSV)
    expected = [
        "Failed/ComponentUnhealthy",
        "Pending/NeedsReinstall",
        "InstallReady/AllRequirementsMet",
        "Succeeded/InstallSucceeded",
    ]
    position = 0
    for state in states:
        if position < len(expected) and state == expected[position]:
            position += 1
    assert position == len(expected), states
