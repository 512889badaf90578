"""Service names for the reference OLM's processes (olm/devcluster/service_hosts.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from olm.devcluster.service_hosts import (
    hosts_text,
    service_addresses,
    with_service_hosts,
    write_if_changed,
)


def _slice(namespace: str, service: str, *endpoints: tuple[str, bool | None]) -> dict[str, Any]:
    return {
        "metadata": {
            "namespace": namespace,
            "labels": {"kubernetes.io/service-name": service},
        },
        "addressType": "IPv4",
        "endpoints": [
            {"addresses": [address], **({} if ready is None else {"conditions": {"ready": ready}})}
            for address, ready in endpoints
        ],
    }


def test_a_service_is_named_by_its_first_ready_endpoint() -> None:
    slices = [
        _slice("ns", "cat", ("10.1.128.4", False), ("10.1.128.5", True)),
        _slice("ns", "other", ("10.1.128.6", None)),  # no conditions: ready
        _slice("ns", "empty"),
        {**_slice("ns", "v6", ("fd00::1", True)), "addressType": "IPv6"},
        {"metadata": {"namespace": "ns"}, "addressType": "IPv4", "endpoints": []},
    ]
    assert service_addresses(slices) == {("ns", "cat"): "10.1.128.5", ("ns", "other"): "10.1.128.6"}


def test_the_hosts_file_keeps_the_machines_lines_and_adds_both_names() -> None:
    text = hosts_text("127.0.0.1 localhost\n", {("ns", "cat"): "10.1.128.5"})
    assert text.splitlines()[0] == "127.0.0.1 localhost"
    assert text.splitlines()[-1] == "10.1.128.5 cat.ns.svc cat.ns.svc.cluster.local"


def test_the_file_is_rewritten_in_place_and_only_when_it_changes(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    assert write_if_changed(hosts, "a\n")
    inode = hosts.stat().st_ino
    assert not write_if_changed(hosts, "a\n")
    assert write_if_changed(hosts, "b\n")
    assert hosts.stat().st_ino == inode and hosts.read_text() == "b\n"


def test_a_process_gets_the_file_over_etc_hosts_in_its_own_mount_namespace() -> None:
    argv = with_service_hosts(Path("/s/hosts"), ["catalog", "--x"])
    assert argv[:2] == ["unshare", "--mount"]
    assert argv[-3:] == ["/s/hosts", "catalog", "--x"]
