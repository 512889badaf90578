"""The health of a local cluster's components, for `olm dev status`.

Each recorded process is probed as its kind allows: etcd and the kube-apiserver by their
health endpoints (the admin client certificate), the controller-manager and scheduler by
theirs, the image registries by their API, the reference OLM's processes by
reference.health_checks; any other running process (kwok, the pod runner, `olm run`) is
reported as running. A process that is not running is never probed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from olm.devcluster import health, reference, registry
from olm.devcluster.components import APISERVER, CONTROLLER_MANAGER, ETCD, SCHEDULER, START_ORDER
from olm.devcluster.process import ProcessRecord, is_running


@dataclass(frozen=True)
class ComponentStatus:
    """One row of `olm dev status`: a recorded process, whether it runs and answers."""

    name: str
    pid: int | None
    running: bool
    healthy: bool
    detail: str


def component_statuses(
    data: dict[str, Any],
    records: list[ProcessRecord],
    admin_context: Callable[[], Any],
    reference_info: object = None,
) -> list[ComponentStatus]:
    """Each component's health, the control plane's first in start order, then the rest
    (registries, the reference OLM's processes, `olm run`) as recorded. `data` is the
    cluster's record, `reference_info` what it records of the reference OLM (if it runs)."""
    ports = data["ports"]
    by_name = {r.name: r for r in records}
    reference_checks: dict[str, Callable[[], tuple[bool, str]]] = {}
    if isinstance(reference_info, dict):
        reference_checks = reference.health_checks(reference_info)
    result = []
    for name in [*START_ORDER, *(n for n in by_name if n not in START_ORDER)]:
        record = by_name.get(name)
        running = record is not None and is_running(record)
        healthy, detail = False, "not started" if record is None else "not running"
        if running:
            if name == ETCD:
                healthy, detail = health.etcd_healthy(ports["etcd_client"])
            elif name == APISERVER:
                healthy, detail = health.apiserver_ready(data["api_url"], admin_context())
            elif name == CONTROLLER_MANAGER:
                healthy, detail = health.component_healthy(ports["controller_manager"])
            elif name == SCHEDULER:
                healthy, detail = health.component_healthy(ports["scheduler"])
            elif name == registry.REGISTRY and data.get("registry"):
                port = int(str(data["registry"]).rsplit(":", 1)[1])
                healthy, detail = registry.healthy(port)
            elif name == registry.REGISTRY_TLS and data.get("registry_tls"):
                port = int(str(data["registry_tls"]).rsplit(":", 1)[1])
                healthy, detail = registry.healthy(port, ca=Path(data["registry_ca"]))
            elif name in reference_checks:
                healthy, detail = reference_checks[name]()
            else:
                healthy, detail = True, "running (no health endpoint)"
        result.append(
            ComponentStatus(name, record.pid if record else None, running, healthy, detail)
        )
    return result
