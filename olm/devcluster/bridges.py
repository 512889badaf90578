"""Host bridges of the local cluster, the I/O part: the pod runner's Service watch.

For each Service that `hostbridge.decide` gives a `Bridge` (docs/pod-network.md, "Host
bridges"), this keeps, level-based:

- a namespace `olmpy<slot>b<i>` at bridge address `.1.<i>` of the node /24 (network.py);
- a forwarder listener at `<address>:<targetPort>` per port, relaying to the host's
  `127.0.0.1:<host port>`;
- the EndpointSlice `<service>-host-bridge` pointing at `<address>` (owned by the Service).

A Service that stops asking (annotation removed, or a bad value: logged once, the Service
itself is never written) or is deleted loses all three. Bridges of Services gone while the watch
was down are removed at the next listing; EndpointSlices of ours whose Service no longer asks
are deleted then too. At start the namespaces of a previous runner are removed; while the runner
runs, ConfigMap `kube-system/olm-py-host-bridge` advertises the bridge (deleted at stop).
A step that fails (the API or the kernel refused) is retried by `retry_failed`.
"""

from __future__ import annotations

import logging
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.devbridge import BRIDGE_MANAGER, MANAGED_BY_LABEL, SERVICE_NAME_LABEL
from olm.devcluster import hostbridge, network
from olm.devcluster.netns import Forwarder
from olm.kube.errors import GatewayError
from olm.kube.gateway import Gateway
from olm.kube.pods import PodWatcher

log = logging.getLogger("pod-runner.bridges")

Key = tuple[str, str]  # (namespace, Service name)


@dataclass(frozen=True)
class Active:
    bridge: hostbridge.Bridge | None  # None until every listener and the slice are in place
    index: int


class HostBridges:
    def __init__(
        self,
        plan: network.ClusterNetwork,
        forwarder: Forwarder,
        watcher: PodWatcher,
        gateway: Gateway,
    ) -> None:
        self.plan = plan
        self.forwarder = forwarder
        self.watcher = watcher
        self.gateway = gateway
        self.active: dict[Key, Active] = {}
        self.refused: dict[Key, str] = {}  # the message logged for each refused Service
        # Services whose last step failed, and why (logged once per reason).
        self.failed: dict[Key, tuple[dict[str, Any], str]] = {}
        self.lock = threading.Lock()

    # ----- one Service -----------------------------------------------------------------------

    def handle(self, event_type: str, service: dict[str, Any]) -> None:
        meta = body.meta(service)
        key = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        with self.lock:
            previous = self.failed.pop(key, None)
            try:
                self._reconcile(key, None if event_type == "DELETED" else service)
            except Exception as exc:  # one Service's trouble stays its own; retried
                if previous is None or previous[1] != str(exc):
                    log.warning("host bridge of Service %s/%s: %s; retrying", *key, exc)
                if event_type != "DELETED":
                    self.failed[key] = (service, str(exc))

    def _reconcile(self, key: Key, service: dict[str, Any] | None) -> None:
        wanted = hostbridge.decide(service) if service is not None else None
        if isinstance(wanted, hostbridge.Refused):
            if self.refused.get(key) != wanted.message:
                log.warning("%s", wanted.message)
                self.refused[key] = wanted.message
            wanted = None
        else:
            self.refused.pop(key, None)
        current = self.active.get(key)
        if wanted is None:
            if current is not None:
                self._remove(key, current)
            return
        if current is not None and current.bridge == wanted:
            return
        if current is None:
            used = {active.index for active in self.active.values()}
            index = hostbridge.choose_index(used, network.BRIDGE_INDEXES)
            if index is None:
                raise network.NetworkError(
                    f"all {len(network.BRIDGE_INDEXES)} host bridge addresses are in use"
                )
            netns = network.add_bridge(self.plan, index)
            self.active[key] = current = Active(None, index)
        else:
            netns = self.plan.bridge_names(current.index)[0]
        address = self.plan.bridge_address(current.index)
        relays = wanted.relays
        for (_, port), target in self.forwarder.listeners(netns).items():
            if relays.get(port) != target:
                self.forwarder.close(netns, port)
        for port, target in relays.items():
            self.forwarder.open(netns, port, address=address, target=target)
        self.gateway.apply(hostbridge.endpoint_slice(wanted, address))
        self.active[key] = Active(wanted, current.index)
        log.info(
            "Service %s/%s: host bridge %s (%s) relays %s",
            *key,
            address,
            netns,
            ", ".join(f"{port} -> 127.0.0.1:{target}" for port, target in sorted(relays.items())),
        )

    def _remove(self, key: Key, current: Active) -> None:
        netns = self.plan.bridge_names(current.index)[0]
        self.forwarder.close(netns)
        network.remove_bridge(self.plan, current.index)
        del self.active[key]
        log.info("Service %s/%s: host bridge %s removed", *key, netns)
        self._delete_slice(key)

    def _delete_slice(self, key: Key) -> None:
        name = hostbridge.slice_name(key[1])
        self.gateway.delete("discovery.k8s.io/v1", "EndpointSlice", key[0], name)

    # ----- the watch -------------------------------------------------------------------------

    def listed(self, services: list[dict[str, Any]]) -> None:
        """After a (re)listing: forget bridges of Services that are gone, and delete our
        EndpointSlices whose Service does not ask for a bridge."""
        present = {
            (str(s["metadata"].get("namespace", "")), str(s["metadata"]["name"])): s
            for s in services
        }
        with self.lock:
            for key in [k for k in self.active if k not in present]:
                self._remove(key, self.active[key])
            selector = urllib.parse.quote(f"{MANAGED_BY_LABEL}={BRIDGE_MANAGER}")
            for item in self.gateway.list_path(
                f"/apis/discovery.k8s.io/v1/endpointslices?labelSelector={selector}"
            ):
                meta = item["metadata"]
                key = (str(meta["namespace"]), str(meta["labels"].get(SERVICE_NAME_LABEL, "")))
                if key not in self.active:
                    self.gateway.delete(
                        "discovery.k8s.io/v1", "EndpointSlice", meta["namespace"], meta["name"]
                    )

    def retry_failed(self) -> None:
        for service, _ in list(self.failed.values()):
            self.handle("MODIFIED", service)

    def run(self, stop: threading.Event) -> None:
        network.remove_bridges(self.plan)  # a previous runner's namespaces
        while not stop.is_set():
            try:
                self.gateway.apply(hostbridge.advertisement())
                for event_type, service in self.watcher.service_events(stop, self.listed):
                    self.handle(event_type, service)
            except Exception:  # a broken watch is retried; the runner must not die
                log.exception("Service watch for host bridges failed; retrying")
                stop.wait(1.0)

    def stop_all(self) -> None:
        """Remove every bridge and the advertisement (the kernel's part first: the API may be
        going away too)."""
        with self.lock:
            for current in list(self.active.values()):
                self.forwarder.close(self.plan.bridge_names(current.index)[0])
                network.remove_bridge(self.plan, current.index)
            keys, self.active = list(self.active), {}
            try:
                withdraw(self.gateway)
                for key in keys:
                    self._delete_slice(key)
            except (GatewayError, OSError) as exc:
                log.warning("removing the host bridges' API objects failed: %s", exc)


def withdraw(gateway: Gateway) -> None:
    """Delete the ConfigMap that advertises host bridges."""
    meta = hostbridge.advertisement()["metadata"]
    gateway.delete("v1", "ConfigMap", meta["namespace"], meta["name"])
