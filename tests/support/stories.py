"""Small building blocks the e2e stories share (what an admin would type)."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support.catalog_server import Server, catalog_source
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.paths import REPO
from tests.support.subscriptions import subscribe

SAMPLE = REPO / "manifests" / "samples" / "memcached-operator"

INSTALL_MODES_OWN = [
    {"type": "OwnNamespace", "supported": True},
    {"type": "SingleNamespace", "supported": True},
    {"type": "MultiNamespace", "supported": False},
    {"type": "AllNamespaces", "supported": False},
]


def operator_group(
    plane: ControlPlane, namespace: str, name: str = "og", targets: list[str] | None = None
) -> None:
    # targets=[] means an all-namespaces group: no spec at all, as admins usually write it.
    spec = (
        {}
        if targets == []
        else {"targetNamespaces": targets if targets is not None else [namespace]}
    )
    plane.kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": name},
                "spec": spec,
            }
        ),
    )


def minimal_csv(name: str, **spec: Any) -> dict[str, Any]:
    """A CSV with no requirements: one Deployment of a (kwok-simulated) image."""
    labels = {"app": name}
    base: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name},
        "spec": {
            "displayName": "Tiny operator",
            "version": "1.0.0",
            "installModes": INSTALL_MODES_OWN,
            "install": {
                "strategy": "deployment",
                "spec": {
                    "deployments": [
                        {
                            "name": f"{name}-controller",
                            "spec": {
                                "replicas": 1,
                                "selector": {"matchLabels": labels},
                                "template": {
                                    "metadata": {"labels": labels},
                                    "spec": {
                                        "containers": [
                                            {"name": "manager", "image": "registry.invalid/tiny:1"}
                                        ]
                                    },
                                },
                            },
                        }
                    ]
                },
            },
        },
    }
    base["spec"].update(spec)
    return base


def with_deployment_spec(csv: dict[str, Any], **changes: Any) -> dict[str, Any]:
    csv = copy.deepcopy(csv)
    csv["spec"]["install"]["spec"]["deployments"][0]["spec"].update(changes)
    return csv


def apply(plane: ControlPlane, namespace: str, obj: dict[str, Any]) -> None:
    plane.kubectl("create", "-n", namespace, "-f", "-", stdin=json.dumps(obj))


def phase(plane: ControlPlane, namespace: str, name: str) -> str:
    result = plane.kubectl(
        "get",
        "csv",
        name,
        "-n",
        namespace,
        "-o",
        "jsonpath={.status.phase}/{.status.reason}",
        check=False,
    )
    return result.stdout if result.returncode == 0 else "absent"


def wait_phase(
    plane: ControlPlane, namespace: str, name: str, expected: str, timeout: float = STEP_TIMEOUT
) -> dict[str, Any]:
    wait_for(
        lambda: phase(plane, namespace, name) == expected,
        timeout=timeout,
        what=f"{name} {expected} (now {phase(plane, namespace, name)})",
    )
    csv: dict[str, Any] = plane.get_json("csv", name, "-n", namespace)
    return csv


def install_sample(plane: ControlPlane, namespace: str) -> None:
    """The sample operator 0.0.1, with its CRD and RBAC, installed and Succeeded."""
    operator_group(plane, namespace)
    plane.kubectl("apply", "-f", str(SAMPLE / "crd.yaml"))
    plane.kubectl("apply", "-n", namespace, "-f", str(SAMPLE / "rbac.yaml"))
    csv = yaml.safe_load((SAMPLE / "memcached-operator.v0.0.1.csv.yaml").read_text())
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(csv))
    wait_phase(plane, namespace, "memcached-operator.v0.0.1", "Succeeded/InstallSucceeded")


def warning_events(plane: ControlPlane, namespace: str, name: str) -> list[tuple[str, str]]:
    events = plane.get_json(
        "events", "-n", namespace, "--field-selector", f"involvedObject.name={name},type=Warning"
    )["items"]
    return [(e["reason"], e["message"]) for e in events]


FIRST = "memcached-operator.v0.0.1"


def write_first_bundle_catalog(
    directory: Path,
    extra: tuple[dict[str, Any], ...] = (),
    change_csv: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """A catalog (for `olm catalog serve DIRECTORY`) of the samples package with memcached-operator
    0.0.1 alone, so an Automatic Subscription stays on it: `extra` objects added to its bundle,
    its CSV changed by `change_csv`."""
    from olm.catalog.model import Bundle
    from olm.catalog.registryv1 import bundle_properties
    from olm.catalog.render import to_yaml
    from olm.catalog.samples import build

    catalog = build()
    package = catalog.packages["memcached-operator"]
    for version in [v for v in package.bundles if v != FIRST]:
        del package.bundles[version]
    for name, channel in list(package.channels.items()):
        channel.entries = [e for e in channel.entries if e.name == FIRST]
        if not channel.entries:
            del package.channels[name]
    objects = [*copy.deepcopy(package.bundles[FIRST].objects), *extra]
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    if change_csv is not None:
        change_csv(csv)
    package.bundles[FIRST] = Bundle(
        FIRST, package.name, properties=bundle_properties(package.name, csv, objects, [])
    )
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


def exists(plane: ControlPlane, *args: str) -> bool:
    """`kubectl get ARGS` finds the object."""
    return plane.kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip() != ""


@contextlib.contextmanager
def subscribed_to_first_bundle(
    plane: ControlPlane,
    namespace: str,
    directory: Path,
    extra: tuple[dict[str, Any], ...] = (),
    change_csv: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[None]:
    """`write_first_bundle_catalog(directory, extra, change_csv)` served by `olm catalog serve`
    as CatalogSource `updating` of `namespace` (READY), the namespace's OperatorGroup, and an
    Automatic Subscription `memcached` to its 0.0.1; the catalog server stops at the end."""
    write_first_bundle_catalog(directory, extra, change_csv)
    server = Server(directory)
    server.start()
    try:
        catalog_source(plane, namespace, server.port)
        operator_group(plane, namespace)
        subscribe(
            plane,
            namespace,
            "Automatic",
            source="updating",
            sourceNamespace=namespace,
            startingCSV=FIRST,
        )
        yield
    finally:
        server.stop()
