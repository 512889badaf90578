"""The local cluster's pod network: addresses the kube-apiserver can reach, all on this machine.

Design (docs/pod-network.md):
- Each cluster claims one block `10.<192+slot>.0.0/16` of POOL (slot 0..63) by adding an
  `unreachable` route for it: the kernel refuses a second identical route, so two clusters never
  get the same block, and no address of the block can ever leave the machine (more specific
  routes to live pods win). A block that overlaps any other route or address of the machine is
  never used, so a real network is never shadowed.
- The block holds the Service range (first /24), the fake nodes' address (`.1.1`), the host end
  of every pod link (`.1.254`, the gateway) and the pod range (upper /17, kwok's `--cidr`).
- A pod that the pod runner runs gets a network namespace `olmpy<slot>-<n>` (n = the pod IP's
  offset in the pod range) with a veth pair: the host end `olmpy<slot>-<n>` has the gateway
  address and a /32 route to the pod; the pod end is `eth0` with the pod IP and a route to the
  gateway only (no default route: pod programs reach nothing but the host end).
- A host bridge (a selectorless Service asking for one, docs/pod-network.md) gets an address
  `.1.<i>` of the node /24 between the node (`.1`) and the gateway (`.254`), i in 2..253, and a
  namespace `olmpy<slot>b<i>` linked the same way (pod end created as `olmpy<slot>q<i>`).
  kwok never hands these out: it allocates from the pod range only.
- What a cluster created is recorded in `<state>/network.json` and in a machine-wide registry
  (`/run/olm-py/net/slot-<slot>.json`, on tmpfs like the kernel state it mirrors); `release`
  removes every namespace, link and route of the slot. `allocate` first releases slots whose
  owner's state directory no longer records them (a crashed cluster whose state was deleted).
"""

from __future__ import annotations

import contextlib
import fcntl
import ipaddress
import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

POOL = ipaddress.IPv4Network("10.192.0.0/10")
SLOTS = 64
REGISTRY_DIR = Path(os.environ.get("OLM_PY_NET_REGISTRY", "/run/olm-py/net"))
STATE_FILE = "network.json"
ENABLE_ENV = "OLM_PY_POD_NETWORK"  # "0" turns the pod network off
NAME_PREFIX = "olmpy"
# Host bridge addresses: `.1.<i>` of the node /24, strictly between the node and the gateway.
BRIDGE_INDEXES = range(2, 254)


class NetworkError(RuntimeError):
    """The pod network could not be set up or removed; the message says why."""


@dataclass(frozen=True)
class ClusterNetwork:
    """The address plan of one cluster's block (pure)."""

    slot: int

    @property
    def block(self) -> ipaddress.IPv4Network:
        return ipaddress.IPv4Network((int(POOL.network_address) + (self.slot << 16), 16))

    def _address(self, offset: int) -> ipaddress.IPv4Address:
        return self.block.network_address + offset

    @property
    def service_cidr(self) -> str:
        return str(ipaddress.IPv4Network((self.block.network_address, 24)))

    @property
    def node_ip(self) -> str:
        return str(self._address(256 + 1))

    @property
    def gateway(self) -> str:
        return str(self._address(256 + 254))

    @property
    def pod_cidr(self) -> str:
        return str(ipaddress.IPv4Network((self._address(1 << 15), 17)))

    @property
    def prefix(self) -> str:
        """Every link and namespace name of this cluster starts with it."""
        return f"{NAME_PREFIX}{self.slot:02d}"

    def owns_name(self, name: str) -> bool:
        """Pod (`-`, `p`) and host bridge (`b`, `q`) namespaces and links of this cluster."""
        return re.fullmatch(rf"{self.prefix}[-pbq]\d+", name) is not None

    def pod_index(self, pod_ip: str) -> int:
        address = ipaddress.IPv4Address(pod_ip)
        network = ipaddress.IPv4Network(self.pod_cidr)
        if address not in network or address == network.network_address:
            raise NetworkError(f"pod IP {pod_ip} is outside this cluster's pod range {network}")
        return int(address) - int(network.network_address)

    def pod_names(self, pod_ip: str) -> tuple[str, str]:
        """(namespace and host link name, temporary name of the pod end); at most 15 chars."""
        index = self.pod_index(pod_ip)
        return f"{self.prefix}-{index}", f"{self.prefix}p{index}"

    def bridge_address(self, index: int) -> str:
        if index not in BRIDGE_INDEXES:
            raise NetworkError(f"host bridge index {index} is outside {BRIDGE_INDEXES}")
        return str(self._address(256 + index))

    def bridge_names(self, index: int) -> tuple[str, str]:
        """(namespace and host link name, temporary name of the bridge end); at most 11 chars."""
        self.bridge_address(index)
        return f"{self.prefix}b{index}", f"{self.prefix}q{index}"

    def to_json(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "block": str(self.block),
            "service_cidr": self.service_cidr,
            "pod_cidr": self.pod_cidr,
            "node_ip": self.node_ip,
            "gateway": self.gateway,
            "prefix": self.prefix,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClusterNetwork:
        return cls(int(data["slot"]))


def overlaps(block: ipaddress.IPv4Network, routes: list[dict[str, Any]]) -> bool:
    """True when `block` overlaps a route destination of the machine (the default route aside)."""
    for route in routes:
        destination = str(route.get("dst", ""))
        if destination in ("", "default"):
            continue
        try:
            network = ipaddress.IPv4Network(destination, strict=False)
        except ValueError:
            continue
        if network.overlaps(block):
            return True
    return False


def free_slots(routes: list[dict[str, Any]], addresses: list[str]) -> list[int]:
    """Slots whose block overlaps no route and no address of the machine (pure)."""
    result = []
    for slot in range(SLOTS):
        block = ClusterNetwork(slot).block
        if overlaps(block, routes):
            continue
        if any(ipaddress.IPv4Address(a) in block for a in addresses):
            continue
        result.append(slot)
    return result


# ----- talking to the kernel through `ip` ---------------------------------------------------


def _ip(*args: str, check: bool = True) -> str:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and result.returncode != 0:
        raise NetworkError(f"`ip {' '.join(args)}` failed: {result.stderr.strip()}")
    return result.stdout


def _ip_json(*args: str) -> list[dict[str, Any]]:
    output = _ip("-j", *args).strip()
    data = json.loads(output) if output else []
    return data if isinstance(data, list) else []


APT_INSTALL = [
    "apt-get",
    "-o",
    "DPkg::Lock::Timeout=600",
    "install",
    "-y",
    "--no-install-recommends",
    "iproute2",
]


def _install_ip() -> str | None:
    """Install iproute2 from Debian (as the project's other install steps do); None when done."""
    if shutil.which("apt-get") is None:
        return "the `ip` command (iproute2) is missing and there is no apt-get to install it"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        result = subprocess.run(APT_INSTALL, capture_output=True, text=True, timeout=900, env=env)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"installing iproute2 failed ({exc}); run {' '.join(APT_INSTALL)}"
    if shutil.which("ip") is None:
        tail = result.stderr.strip().splitlines()[-1:] or ["no output"]
        return f"installing iproute2 failed ({tail[0]}); run {' '.join(APT_INSTALL)}"
    return None


def unavailable_reason(install: bool = True) -> str | None:
    """Why this machine cannot have a pod network (None when it can); installs `ip` if asked."""
    if os.geteuid() != 0:
        return "it needs root (network namespaces and routes)"
    if shutil.which("ip") is None:
        problem = (
            _install_ip()
            if install
            else "the `ip` command (iproute2) is missing: apt-get install iproute2"
        )
        if problem is not None:
            return problem
    try:
        _ip("netns", "list")
    except (NetworkError, OSError) as exc:
        return f"network namespaces are not usable here ({exc})"
    return None


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    REGISTRY_DIR.mkdir(parents=True, exist_ok=True)
    with (REGISTRY_DIR / "lock").open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _registry_file(slot: int) -> Path:
    return REGISTRY_DIR / f"slot-{slot:02d}.json"


def _owner_holds(slot: int) -> bool:
    """True while the state directory that claimed `slot` still records it."""
    try:
        owner = Path(json.loads(_registry_file(slot).read_text())["state_dir"])
        recorded = json.loads((owner / STATE_FILE).read_text())
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return isinstance(recorded, dict) and recorded.get("slot") == slot


def allocate(state_dir: Path) -> ClusterNetwork:
    """Claim a free block for the cluster in `state_dir` and record it there."""
    with _machine_lock():
        for registered in sorted(REGISTRY_DIR.glob("slot-*.json")):
            slot = int(registered.stem.split("-")[1])
            if not _owner_holds(slot):
                _teardown(ClusterNetwork(slot))
        routes = _ip_json("-4", "route", "show", "table", "all")
        addresses = [
            str(info["local"])
            for link in _ip_json("-4", "addr", "show")
            for info in link.get("addr_info", [])
            if "local" in info
        ]
        for slot in free_slots(routes, addresses):
            network = ClusterNetwork(slot)
            _remove_names(network)  # leftovers of a crash between creating them and recording
            claimed = subprocess.run(
                ["ip", "route", "add", "unreachable", str(network.block)],
                capture_output=True,
                text=True,
                timeout=30,
            )
            if claimed.returncode != 0:
                continue
            _registry_file(slot).write_text(json.dumps({"state_dir": str(state_dir)}))
            (state_dir / STATE_FILE).write_text(json.dumps(network.to_json(), indent=2))
            return network
    raise NetworkError(f"no free /16 block is left in {POOL} for another cluster's pod network")


def load(state_dir: Path) -> ClusterNetwork | None:
    try:
        data = json.loads((state_dir / STATE_FILE).read_text())
    except (OSError, ValueError):
        return None
    return ClusterNetwork.from_json(data) if isinstance(data, dict) and "slot" in data else None


def release(state_dir: Path) -> ClusterNetwork | None:
    """Remove everything of the network recorded in `state_dir`; returns what was removed."""
    network = load(state_dir)
    if network is None:
        return None
    with _machine_lock():
        try:
            owner = json.loads(_registry_file(network.slot).read_text()).get("state_dir")
        except (OSError, ValueError, AttributeError):
            owner = None
        if owner not in (None, str(state_dir)):
            # Another cluster claimed the slot after ours was released by an orphan sweep.
            (state_dir / STATE_FILE).unlink(missing_ok=True)
            return None
        _teardown(network)
    (state_dir / STATE_FILE).unlink(missing_ok=True)
    return network


def _remove_names(network: ClusterNetwork) -> None:
    # Deleting the host end of a veth pair removes the pod end and the /32 route at once
    # (deleting a namespace alone frees its links only asynchronously).
    for link in _ip_json("link", "show"):
        name = str(link.get("ifname", ""))
        if network.owns_name(name):
            _ip("link", "del", name, check=False)
    for name in _netns_names():
        if network.owns_name(name):
            _ip("netns", "del", name, check=False)


def _netns_names() -> list[str]:
    return [str(entry.get("name", "")) for entry in _ip_json("netns", "list")]


def _teardown(network: ClusterNetwork) -> None:
    _remove_names(network)
    _ip("route", "del", "unreachable", str(network.block), check=False)
    _registry_file(network.slot).unlink(missing_ok=True)


def leftovers(network: ClusterNetwork) -> list[str]:
    """Namespaces, links and routes of `network` still present (empty after `release`)."""
    found = [f"netns {name}" for name in _netns_names() if network.owns_name(name)]
    found += [
        f"link {link['ifname']}"
        for link in _ip_json("link", "show")
        if network.owns_name(str(link.get("ifname", "")))
    ]
    for route in _ip_json("-4", "route", "show", "table", "all"):
        destination = str(route.get("dst", ""))
        if destination in ("", "default"):
            continue
        with contextlib.suppress(ValueError):
            if ipaddress.IPv4Network(destination, strict=False).overlaps(network.block):
                found.append(f"route {route.get('type', 'unicast')} {destination}")
    return found


# ----- one pod's or host bridge's namespace ------------------------------------------------


def add_pod(network: ClusterNetwork, pod_ip: str) -> str:
    """Create the namespace and veth pair of the pod with `pod_ip`; returns the namespace."""
    name, peer = network.pod_names(pod_ip)
    remove_pod(network, pod_ip)  # a previous pod with this (recycled) IP
    return _add_namespace(network, name, peer, pod_ip)


def remove_pod(network: ClusterNetwork, pod_ip: str) -> None:
    _remove_namespace(*network.pod_names(pod_ip))


def add_bridge(network: ClusterNetwork, index: int) -> str:
    """Create the namespace of host bridge `index` (a leftover of that name is replaced)."""
    name, peer = network.bridge_names(index)
    _remove_namespace(name, peer)
    return _add_namespace(network, name, peer, network.bridge_address(index))


def remove_bridge(network: ClusterNetwork, index: int) -> None:
    _remove_namespace(*network.bridge_names(index))


def remove_bridges(network: ClusterNetwork) -> None:
    """Every host bridge namespace and link of `network` (a previous pod runner's)."""
    present = set(_netns_names())
    for index in BRIDGE_INDEXES:
        name, peer = network.bridge_names(index)
        if name in present:
            _remove_namespace(name, peer)


def _add_namespace(network: ClusterNetwork, name: str, peer: str, address: str) -> str:
    """Namespace `name` whose `eth0` has `address`/32 and a route to the gateway only, linked
    to the host end `name` (gateway address, a /32 route to `address`)."""
    gateway = network.gateway
    steps = [
        ("netns", "add", name),
        ("link", "add", name, "type", "veth", "peer", "name", peer, "netns", name),
        ("-n", name, "link", "set", peer, "name", "eth0"),
        ("-n", name, "addr", "add", f"{address}/32", "dev", "eth0"),
        ("-n", name, "link", "set", "lo", "up"),
        ("-n", name, "link", "set", "eth0", "up"),
        ("-n", name, "route", "add", f"{gateway}/32", "dev", "eth0", "scope", "link"),
        ("addr", "add", f"{gateway}/32", "dev", name),
        ("link", "set", name, "up"),
        ("route", "add", f"{address}/32", "dev", name, "src", gateway),
    ]
    try:
        for step in steps:
            _ip(*step)
    except NetworkError:
        _remove_namespace(name, peer)
        raise
    return name


def _remove_namespace(name: str, peer: str) -> None:
    links = {str(link.get("ifname", "")) for link in _ip_json("link", "show")}
    for link in (name, peer):
        if link in links:
            _ip("link", "del", link, check=False)
    if name in _netns_names():
        _ip("netns", "del", name, check=False)
