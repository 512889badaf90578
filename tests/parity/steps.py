"""Building blocks of the parity scenarios: what an admin types (namespaces, OperatorGroups,
Subscriptions, approvals) and the observable states the scenarios wait for.

Invariants: every wait polls an observable state with a bound (`TIMEOUT`); the only writes
are the admin's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from tests.parity.harness import Side, wait
from tests.support.paths import REPO

SAMPLE = REPO / "manifests" / "samples" / "memcached-operator"
OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
MEMCACHED_API = "memcacheds.cache.example.com"
TIMEOUT = 180.0  # the real OLM is slower than olm-py; generous, but a stall still fails
COPY_TIMEOUT = 420.0

Snapshots = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class Scenario:
    name: str
    run: Callable[[Side], Snapshots]


# --- building blocks ---------------------------------------------------------------------


def namespace(side: Side, name: str) -> None:
    side.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def operator_group(side: Side, ns: str, targets: list[str] | None, name: str = "og") -> None:
    spec: dict[str, Any] = {} if targets is None else {"targetNamespaces": targets}
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": name, "namespace": ns},
            "spec": spec,
        }
    )


def csv_state(side: Side, ns: str, name: str) -> str:
    csv = side.get("clusterserviceversions.operators.coreos.com", name, ns)
    if csv is None:
        return "absent"
    status = csv.get("status") or {}
    return f"{status.get('phase', '')}/{status.get('reason', '')}"


def wait_csv(side: Side, ns: str, name: str, state: str = "Succeeded/InstallSucceeded") -> None:
    wait(lambda: csv_state(side, ns, name) == state, TIMEOUT, f"{ns}/{name} {state}")


def sample_csv(name: str) -> dict[str, Any]:
    version = name.rsplit(".v", 1)[-1]
    loaded: dict[str, Any] = yaml.safe_load(
        (SAMPLE / f"memcached-operator.v{version}.csv.yaml").read_text()
    )
    return loaded


def subscribe(side: Side, ns: str, approval: str, sub: str = "memcached", **spec: str) -> None:
    body: dict[str, Any] = {
        "name": "memcached-operator",
        "channel": "alpha",
        "source": "samples",
        "sourceNamespace": "olm",
        "installPlanApproval": approval,
    }
    body.update(spec)
    side.apply(
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": sub, "namespace": ns},
            "spec": body,
        }
    )


def subscription_status(side: Side, ns: str, name: str = "memcached") -> dict[str, Any]:
    sub = side.get("subscriptions.operators.coreos.com", name, ns) or {}
    status: dict[str, Any] = sub.get("status") or {}
    return status


def plan_for(side: Side, ns: str, csv: str, phase: str) -> dict[str, Any]:
    def find() -> dict[str, Any] | None:
        for plan in side.items("installplans.operators.coreos.com", ns):
            if csv in plan["spec"]["clusterServiceVersionNames"] and (
                (plan.get("status") or {}).get("phase") == phase
            ):
                return plan
        return None

    found: dict[str, Any] = wait(find, TIMEOUT, f"an InstallPlan for {csv} in phase {phase}")
    return found


def approve(side: Side, ns: str, plan: dict[str, Any]) -> None:
    side.kubectl(
        "patch",
        "installplans.operators.coreos.com",
        plan["metadata"]["name"],
        "-n",
        ns,
        "--type=merge",
        "-p",
        json.dumps({"spec": {"approved": True}}),
    )


def condition(side: Side, ns: str, kind: str, name: str, type_: str) -> dict[str, Any]:
    obj = side.get(kind, name, ns) or {}
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            found: dict[str, Any] = cond
            return found
    return {}


def gone(side: Side, ns: str, csv: str) -> bool:
    """The CSV is deleted and so is what the garbage collector takes with it: its
    OperatorCondition and that one's Role and RoleBinding (named after the CSV). Waiting for
    all of it keeps the snapshot from catching the collector half-way on one side."""
    return csv_state(side, ns, csv) == "absent" and all(
        side.get(kind, csv, ns) is None
        for kind in (
            "operatorconditions.operators.coreos.com",
            "roles.rbac.authorization.k8s.io",
            "rolebindings.rbac.authorization.k8s.io",
        )
    )
