"""`olm run` can die at any moment: killed (SIGKILL) at random points during install and
upgrade, it always converges to the same end state, with no duplicate Deployments and no
orphaned RBAC or OperatorConditions."""

from __future__ import annotations

import json
import random
import time

import yaml

from tests.conftest import ControlPlane, OlmOperator, wait_for
from tests.e2e.stories import SAMPLE, operator_group, phase

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
ROUNDS = 10


def apply_csv(plane: ControlPlane, namespace: str, version: str) -> None:
    csv = yaml.safe_load((SAMPLE / f"memcached-operator.v{version}.csv.yaml").read_text())
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(csv))


def kill_soon(operator: OlmOperator, rng: random.Random) -> float:
    delay = rng.uniform(0.0, 2.5)
    time.sleep(delay)
    operator.kill()
    time.sleep(rng.uniform(0.0, 0.5))
    operator.start()
    return delay


def test_olm_run_converges_after_being_killed_at_random(
    control_plane: ControlPlane, olm_operator: OlmOperator
) -> None:
    seed = int(time.time())
    rng = random.Random(seed)
    plane = control_plane
    plane.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    for round_number in range(ROUNDS):
        namespace = f"restart-{round_number}-{seed % 10000}"
        plane.kubectl("create", "namespace", namespace)
        operator_group(plane, namespace)
        plane.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
        apply_csv(plane, namespace, "0.0.1")
        kill_soon(olm_operator, rng)
        wait_for(
            lambda ns=namespace: phase(plane, ns, OLD) == "Succeeded/InstallSucceeded",
            timeout=90,
            what=f"round {round_number} (seed {seed}): {OLD} Succeeded",
        )
        apply_csv(plane, namespace, "0.0.2")
        kill_soon(olm_operator, rng)
        wait_for(
            lambda ns=namespace: (
                phase(plane, ns, NEW) == "Succeeded/InstallSucceeded"
                and phase(plane, ns, OLD) == "absent"
            ),
            timeout=90,
            what=f"round {round_number} (seed {seed}): upgrade done",
        )

        deployments = plane.get_json("deployments", "-n", namespace)["items"]
        assert [d["metadata"]["name"] for d in deployments] == ["memcached-operator"], (
            f"seed {seed}"
        )
        assert deployments[0]["metadata"]["labels"]["olm.owner"] == NEW
        wait_for(
            lambda ns=namespace: (
                [
                    c["metadata"]["name"]
                    for c in plane.get_json("operatorcondition", "-n", ns)["items"]
                ]
                == [NEW]
            ),
            what=f"round {round_number}: only {NEW}'s OperatorCondition left",
        )
        csvs = plane.get_json("csv", "-n", namespace)["items"]
        assert [c["metadata"]["name"] for c in csvs] == [NEW]
        for kind in ("clusterroles", "clusterrolebindings"):
            orphans = [
                item["metadata"]["name"]
                for item in plane.get_json(kind)["items"]
                if (item["metadata"].get("labels") or {}).get("olm.owner.namespace") == namespace
                and (item["metadata"].get("labels") or {}).get("olm.owner") != NEW
            ]
            assert orphans == [], f"seed {seed}: orphaned {kind}: {orphans}"
        plane.kubectl("delete", "namespace", namespace, "--wait=false")
