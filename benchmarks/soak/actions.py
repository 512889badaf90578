"""The soak's user: random actions in many namespaces, each recorded with what it asked for.

A namespace `soak-NNN` starts with an OperatorGroup `og` targeting itself (and has a peer
`soak-NNN-t` the group may target instead). `choices` (pure) says which actions make sense for
what was asked of a namespace so far (`Desired`); `Actor.act` runs one with kubectl, as a user
would, and returns the new `Desired`:

- subscribe-automatic / subscribe-manual: a Subscription `memcached` to olm/soak, channel
  alpha or stable; approve: a waiting InstallPlan of a Manual Subscription approved;
- apply-csv: rbac.yaml and CSV 0.0.1 applied by hand, then 0.0.2 (replaces it);
- create-operand / delete-operand: the Memcached instance `cache-a`;
- retarget: the OperatorGroup's targetNamespaces flipped between the namespace and its peer;
- recreate-namespace: the namespace deleted, waited gone, created again with its group;
- config: the Subscription's `config.env` SOAK_CONFIG set to a new value;
- switch-channel: alpha <-> stable; uninstall: the Subscription and the CSVs deleted.

Every kubectl step is idempotent (apply, patch, delete --ignore-not-found) and retried a few
times: an API server that is stopped or restarting makes a step fail, not the soak.
"""

from __future__ import annotations

import dataclasses
import json
import random
import time
from collections.abc import Callable
from typing import Any

from benchmarks.fault_stories import SAMPLE, csv_manifest, memcached
from benchmarks.soak.catalog import CHANNELS, PACKAGE, SOURCE, SOURCE_NAMESPACE
from benchmarks.soak.converge import CONFIG_ENV, GROUP, OPERAND, SUBSCRIPTION, Desired
from benchmarks.watching import Kube, KubectlError, Observer

V1, V2 = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
RETRIES = 5


def choices(desired: Desired) -> list[str]:
    """The actions that make sense now for a namespace asked `desired` (pure)."""
    if desired.mode == "deleted":
        return []
    found = ["create-operand" if not desired.operand else "delete-operand", "retarget"]
    found.append("recreate-namespace")
    if desired.mode == "empty":
        found += ["subscribe-automatic", "subscribe-manual", "apply-csv"]
    elif desired.mode == "kubectl":
        found += ["uninstall"] + (["apply-csv"] if desired.csv == V1 else [])
    elif desired.mode == "subscription":
        found += ["config", "switch-channel", "uninstall"]
        if desired.approval == "Manual":
            found += ["approve"] * 3
    return found


def peer(namespace: str) -> str:
    return f"{namespace}-t"


def namespace_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def group_manifest(target: str) -> dict[str, Any]:
    return {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": GROUP},
        "spec": {"targetNamespaces": [target]},
    }


class Actor:
    """Runs actions against the cluster; knows nothing of faults."""

    def __init__(self, kube: Kube, observer: Observer, rng: random.Random) -> None:
        self.kube, self.observer, self.rng = kube, observer, rng

    def _step(self, *args: str, stdin: str | None = None) -> str:
        for attempt in range(RETRIES):
            try:
                return self.kube.run(*args, stdin=stdin, timeout=45)
            except (KubectlError, OSError) as exc:
                if attempt == RETRIES - 1:
                    raise KubectlError(str(exc)) from exc
                time.sleep(2.0 * (attempt + 1))
        raise AssertionError("unreachable")

    def _apply(self, obj: dict[str, Any], namespace: str | None = None) -> None:
        where = ["-n", namespace] if namespace else []
        self._step("apply", *where, "-f", "-", stdin=json.dumps(obj))

    def _patch(self, resource: str, namespace: str, patch: dict[str, Any]) -> None:
        self._step("patch", resource, "-n", namespace, "--type=merge", "-p", json.dumps(patch))

    def prepare(self, namespace: str) -> None:
        """The namespace, its peer and its OperatorGroup (before the clock)."""
        self._apply(namespace_manifest(namespace))
        self._apply(namespace_manifest(peer(namespace)))
        self._apply(group_manifest(namespace), namespace)

    def act(self, name: str, namespace: str, desired: Desired) -> Desired:
        """Run action `name` in `namespace`; returns what is asked from then on."""
        handler: Callable[[str, Desired], Desired] = getattr(self, "_" + name.replace("-", "_"))
        return handler(namespace, desired)

    # ----- the actions ----------------------------------------------------------------------

    def _subscribe(self, namespace: str, desired: Desired, approval: str) -> Desired:
        channel = self.rng.choice(CHANNELS)
        self._apply(
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "Subscription",
                "metadata": {"name": SUBSCRIPTION},
                "spec": {
                    "name": PACKAGE,
                    "channel": channel,
                    "source": SOURCE,
                    "sourceNamespace": SOURCE_NAMESPACE,
                    "installPlanApproval": approval,
                },
            },
            namespace,
        )
        return dataclasses.replace(
            desired,
            mode="subscription",
            approval=approval,
            channel=channel,
            config="",
            approved=frozenset(),
        )

    def _subscribe_automatic(self, namespace: str, desired: Desired) -> Desired:
        return self._subscribe(namespace, desired, "Automatic")

    def _subscribe_manual(self, namespace: str, desired: Desired) -> Desired:
        return self._subscribe(namespace, desired, "Manual")

    def _approve(self, namespace: str, desired: Desired) -> Desired:
        waiting = [
            p["metadata"]["name"]
            for p in self.observer.items("installplan", namespace)
            if (p.get("spec") or {}).get("approved") is False
            and (p.get("status") or {}).get("phase") == "RequiresApproval"
            and p["metadata"]["name"] not in desired.approved
        ]
        if not waiting:
            return desired
        plan = self.rng.choice(waiting)
        self._patch(
            "installplans.operators.coreos.com/" + plan, namespace, {"spec": {"approved": True}}
        )
        return dataclasses.replace(desired, approved=desired.approved | {plan})

    def _apply_csv(self, namespace: str, desired: Desired) -> Desired:
        if desired.mode == "empty":
            self._step("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
            self._apply(csv_manifest("0.0.1"), namespace)
            return dataclasses.replace(desired, mode="kubectl", csv=V1)
        self._apply(csv_manifest("0.0.2"), namespace)
        return dataclasses.replace(desired, csv=V2)

    def _create_operand(self, namespace: str, desired: Desired) -> Desired:
        self._apply(memcached(OPERAND, self.rng.randint(1, 2)), namespace)
        return dataclasses.replace(desired, operand=True)

    def _delete_operand(self, namespace: str, desired: Desired) -> Desired:
        self._step(
            "delete",
            "memcacheds.cache.example.com",
            OPERAND,
            "-n",
            namespace,
            "--ignore-not-found",
            "--wait=false",
        )
        return dataclasses.replace(desired, operand=False)

    def _retarget(self, namespace: str, desired: Desired) -> Desired:
        target = "peer" if desired.target == "own" else "own"
        self._patch(
            "operatorgroups.operators.coreos.com/" + GROUP,
            namespace,
            {"spec": {"targetNamespaces": [namespace if target == "own" else peer(namespace)]}},
        )
        return dataclasses.replace(desired, target=target)

    def _recreate_namespace(self, namespace: str, desired: Desired) -> Desired:
        """Deletes the namespace and waits until it is gone (the caller records `deleted` in
        between through `deleting`); then creates it again with its group."""
        self._step("delete", "namespace", namespace, "--wait=false", "--ignore-not-found")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                self.kube.run("get", "namespace", namespace, timeout=30)
            except KubectlError as exc:
                if "NotFound" in str(exc) or "not found" in str(exc):
                    break
            except OSError:
                pass
            time.sleep(1.0)
        else:
            raise KubectlError(f"namespace {namespace} still there after 300 s")
        self._apply(namespace_manifest(namespace))
        self._apply(group_manifest(namespace), namespace)
        return Desired()

    def _config(self, namespace: str, desired: Desired) -> Desired:
        value = str(self.rng.randint(1, 10**6))
        self._patch(
            "subscriptions.operators.coreos.com/" + SUBSCRIPTION,
            namespace,
            {"spec": {"config": {"env": [{"name": CONFIG_ENV, "value": value}]}}},
        )
        return dataclasses.replace(desired, config=value)

    def _switch_channel(self, namespace: str, desired: Desired) -> Desired:
        channel = next(c for c in CHANNELS if c != desired.channel)
        self._patch(
            "subscriptions.operators.coreos.com/" + SUBSCRIPTION,
            namespace,
            {"spec": {"channel": channel}},
        )
        return dataclasses.replace(desired, channel=channel)

    def _uninstall(self, namespace: str, desired: Desired) -> Desired:
        """As OLM's docs say: the Subscription, then the CSVs (every one of the namespace's
        own: the one installed, and one still replacing)."""
        if desired.mode == "subscription":
            self._step(
                "delete",
                "subscriptions.operators.coreos.com",
                SUBSCRIPTION,
                "-n",
                namespace,
                "--ignore-not-found",
            )
        listed = json.loads(
            self._step(
                "get", "clusterserviceversions.operators.coreos.com", "-n", namespace, "-o", "json"
            )
        )
        own = [
            c["metadata"]["name"]
            for c in listed["items"]
            if "olm.copiedFrom" not in (c["metadata"].get("labels") or {})
        ]
        if own:
            self._step(
                "delete",
                "clusterserviceversions.operators.coreos.com",
                *own,
                "-n",
                namespace,
                "--ignore-not-found",
                "--wait=false",
            )
        return dataclasses.replace(desired, mode="empty", csv="", config="", approved=frozenset())
