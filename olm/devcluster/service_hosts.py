"""Service names for the reference OLM's host processes: a hosts file of `<svc>.<ns>.svc`.

The real OLM's catalog operator and package-server dial a registry pod's Service by its cluster
DNS name (`<service>.<namespace>.svc:50051`). They run here as processes of this machine, which
has no cluster DNS and no Service routing (kube-proxy), while the pod runner does give such
pods real, reachable pod IPs (docs/pod-network.md). So:

- `python -m olm.devcluster.service_hosts --kubeconfig K --out FILE` keeps FILE equal to this
  machine's /etc/hosts plus one line per Service with a ready endpoint: its first ready
  endpoint address, named `<service>.<namespace>.svc` and `<service>.<namespace>.svc.cluster.local`
  (read from EndpointSlices every second; the file is rewritten in place, and only when it
  changes, so a bind mount of it stays valid);
- `with_service_hosts(FILE, argv)` runs `argv` in a mount namespace of its own in which FILE is
  mounted over /etc/hosts (Go's resolver re-reads it when it changes). Nothing outside that
  process sees it; nothing on the machine is changed.

Limit: an address is an endpoint, not a ClusterIP, so a Service's `port` must equal its
`targetPort` (true of OLM's registry Services: 50051 to 50051).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from olm.api import body

PROCESS = "service-hosts"  # its name among a cluster's processes
SYSTEM_HOSTS = Path("/etc/hosts")
SERVICE_LABEL = "kubernetes.io/service-name"
POLL_SECONDS = 1.0

_BIND_SCRIPT = 'set -e; mount --bind "$1" /etc/hosts; shift; exec "$@"'


def in_own_mounts(script: str, label: str, *args: str) -> list[str]:
    """`sh -c script label args...` in a mount namespace of its own (its mounts private to it):
    the script prepares its files, then `exec "$@"` runs the command at the end of `args`."""
    return [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        label,
        *args,
    ]


def with_service_hosts(hosts: Path, argv: list[str]) -> list[str]:
    """`argv`, run with `hosts` mounted over /etc/hosts in a mount namespace of its own."""
    return in_own_mounts(_BIND_SCRIPT, "service-hosts", str(hosts), *argv)


def service_addresses(slices: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(namespace, service) -> the first ready endpoint address of its EndpointSlices (pure)."""
    found: dict[tuple[str, str], str] = {}
    for item in slices:
        service = body.labels(item).get(SERVICE_LABEL)
        if not service or item.get("addressType") != "IPv4":
            continue
        key = (str(body.meta(item).get("namespace", "")), str(service))
        for endpoint in item.get("endpoints") or []:
            ready = (endpoint.get("conditions") or {}).get("ready")
            if ready is False or not endpoint.get("addresses"):
                continue
            found.setdefault(key, str(endpoint["addresses"][0]))
            break
    return found


def hosts_text(base: str, addresses: Mapping[tuple[str, str], str]) -> str:
    """`base` (the machine's hosts file) and one line per Service (pure, sorted)."""
    lines = [base.rstrip("\n"), "# Services of the local cluster (olm/devcluster/service_hosts.py)"]
    for (namespace, service), address in sorted(addresses.items()):
        name = f"{service}.{namespace}.svc"
        lines.append(f"{address} {name} {name}.cluster.local")
    return "\n".join(lines) + "\n"


def write_if_changed(path: Path, text: str) -> bool:
    """Rewrite `path` in place (same inode: a bind mount of it stays valid) when it differs."""
    if path.is_file() and path.read_text() == text:
        return False
    with path.open("w") as out:
        out.write(text)
    return True


def prepare(path: Path) -> None:
    """The file before any Service is known, so a process can mount it at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_if_changed(path, hosts_text(SYSTEM_HOSTS.read_text(), {}))


def keep_named(
    start_process: Callable[[str, list[str]], object], kubeconfig: Path, path: Path
) -> None:
    """Start the process (with a cluster's `start_process`) that keeps `path` naming the
    cluster's Services (see above)."""
    prepare(path)
    argv = [
        sys.executable,
        "-m",
        "olm.devcluster.service_hosts",
        f"--kubeconfig={kubeconfig}",
        f"--out={path}",
    ]
    start_process(PROCESS, argv)


def main(argv: list[str] | None = None) -> int:
    from olm.kube.client import api_client
    from olm.kube.gateway import Gateway

    parser = argparse.ArgumentParser(
        prog="python -m olm.devcluster.service_hosts",
        description=(
            "Keep OUT equal to this machine's /etc/hosts plus a `<service>.<namespace>.svc`"
            " line per Service with a ready endpoint (read from the cluster's EndpointSlices)."
        ),
        epilog=f"Takes until killed (polls every {POLL_SECONDS} s). Writes OUT only.",
    )
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    base = SYSTEM_HOSTS.read_text()
    gateway = Gateway(api_client(args.kubeconfig))
    prepare(args.out)
    while True:
        try:
            slices = gateway.list_path("/apis/discovery.k8s.io/v1/endpointslices")
        except Exception as exc:  # the API server restarting: say so, try again
            print(f"cannot list EndpointSlices: {exc}", file=sys.stderr, flush=True)
        else:
            addresses = service_addresses(slices)
            if write_if_changed(args.out, hosts_text(base, addresses)):
                print(f"{len(addresses)} Services named in {args.out}", flush=True)
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
