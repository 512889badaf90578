"""The local registry `olm dev up` starts: its configuration, and `olm dev env` naming it."""

from __future__ import annotations

import json
from pathlib import Path

from olm.devcluster import registry
from olm.devcluster.cluster import DevCluster


def test_the_registry_listens_on_loopback_and_stores_in_the_state_dir(tmp_path: Path) -> None:
    config = json.loads(registry.config(tmp_path / "registry", 5123))
    assert config["http"]["addr"] == "127.0.0.1:5123"
    assert config["storage"]["filesystem"]["rootdirectory"] == str(tmp_path / "registry")
    assert config["storage"]["delete"]["enabled"] is True
    assert registry.argv(Path("/usr/bin/docker-registry"), tmp_path / "c.json") == [
        "/usr/bin/docker-registry",
        "serve",
        str(tmp_path / "c.json"),
    ]
    assert registry.APT_INSTALL[:3] == ["apt-get", "-o", "DPkg::Lock::Timeout=600"]


def test_dev_env_names_the_registry_only_when_one_runs(tmp_path: Path) -> None:
    cluster = DevCluster(tmp_path)
    tmp_path.mkdir(exist_ok=True)
    record = {"bin_dir": "/bin", "processes": [], "ports": {}}
    cluster.record_path.write_text(json.dumps(record))
    assert registry.REGISTRY_ENV not in cluster.env()
    cluster.record_path.write_text(json.dumps({**record, "registry": "127.0.0.1:5123"}))
    assert cluster.env()[registry.REGISTRY_ENV] == "127.0.0.1:5123"


def test_a_port_with_nothing_listening_is_not_healthy() -> None:
    from olm.devcluster.ports import free_ports

    ok, detail = registry.healthy(free_ports(1)[0], timeout=0.5)
    assert not ok and detail
