"""The local OCI registry on a cluster: its processes, started as part of `olm dev up`.

First a plain-HTTP docker-registry, then a TLS listener over the same storage (the cluster's
CA signs it), then the samples catalog and its bundles published there as images
(registry.py holds the registry's configuration, health probe and publishing).

Invariants:
- Each registry process is added to the cluster's record (and the record saved) as soon as it
  is spawned, so `olm dev down` stops it even after a crash half-way through `up`.
- The cluster works without a registry: one that cannot be installed or started is a warning,
  not a failed `up`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from olm.devcluster import pki, registry
from olm.devcluster.components import Layout
from olm.devcluster.ports import LOOPBACK, free_ports
from olm.devcluster.process import SpawnError, is_running, spawn, stop, wait_for
from olm.progress import Progress


def start_registries(
    record: dict[str, Any],
    layout: Layout,
    save: Callable[[dict[str, Any]], None],
    progress: Progress,
) -> None:
    """The local OCI registry (olm/devcluster/registry.py), plain HTTP, then its TLS
    listener over the same storage. The cluster works without them: a registry that cannot
    be installed or started is a warning, not a failed `up`."""
    try:
        binary = registry.ensure_registry_binary()
    except registry.RegistryUnavailable as exc:
        progress.say(f"No local image registry: {exc}")
        return
    storage = layout.state_dir / "registry"
    storage.mkdir(exist_ok=True)
    address = _spawn_registry(record, save, progress, layout, binary, storage, None)
    if address is None:
        return
    record["registry"] = address
    save(record)
    keys = pki.Pki.of(layout.pki_dir)
    tls = _spawn_registry(
        record, save, progress, layout, binary, storage, (keys.registry_cert, keys.registry_key)
    )
    if tls is not None:
        record["registry_tls"] = tls
        record["registry_ca"] = str(keys.ca_cert)
        save(record)
    samples, problem = registry.try_publish_samples(record["registry"], layout.state_dir / "images")
    if samples is None:
        progress.say(f"The samples catalog was not published as images: {problem}")
        return
    record["samples_image"] = samples
    save(record)
    progress.say(f"Published the samples catalog and its bundles as {samples}")


def _spawn_registry(
    record: dict[str, Any],
    save: Callable[[dict[str, Any]], None],
    progress: Progress,
    layout: Layout,
    binary: Path,
    storage: Path,
    tls: tuple[Path, Path] | None,
) -> str | None:
    """One docker-registry over `storage` (TLS with `tls` = (cert, key)): its address once
    healthy, or None after saying why it is missing."""
    name = registry.REGISTRY if tls is None else registry.REGISTRY_TLS
    port = free_ports(1)[0]
    config_path = layout.state_dir / f"{name}.json"
    config_path.write_text(registry.config(storage, port, tls))
    progress.say(f"Starting {name}")
    try:
        _, proc = spawn(name, registry.argv(binary, config_path), layout.log(name))
    except SpawnError as exc:
        progress.say(f"No local image registry ({name}): {exc}")
        return None
    record["processes"].append(proc.to_json())
    save(record)
    ca = None if tls is None else pki.Pki.of(layout.pki_dir).ca_cert
    ok, detail = wait_for(
        lambda: registry.healthy(port, ca=ca), timeout=20, alive=lambda: is_running(proc)
    )
    if not ok:
        stop(proc)
        progress.say(
            f"No local image registry ({name}): it did not start ({detail}); see {layout.log(name)}"
        )
        return None
    progress.say(f"{name} is healthy at {LOOPBACK}:{port}")
    return f"{LOOPBACK}:{port}"
