"""How olm-py's PackageManifest server is registered with the cluster, as plain objects.

OLM v0's names, where users and tools look for them (docs/packagemanifests.md):
APIService `v1.packages.operators.coreos.com` (groupPriorityMinimum 2000, versionPriority 15)
backed by Service `packageserver-service` port 5443 in OLM's namespace, and the serving
certificate in Secret `packageserver-service-cert` (`tls.crt`, `tls.key`, the CA under
`olmCAKey`, annotation `olmcahash`), as OLM keeps an API service's certificate.

- In a pod (the chart), the chart's Service selects the olm-py pods; olm-py writes the Secret
  and the APIService.
- On the host (`olm run` beside the local cluster), olm-py also writes the Service, without a
  selector and with the local cluster's host-bridge annotation (docs/pod-network.md), which
  routes the aggregator to olm-py's loopback port.

Invariants: pure; the same material renders the same objects (nothing to write on a resync);
labels say olm-py manages them.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from olm.api.devbridge import HOST_BRIDGE_ANNOTATION
from olm.install.apiservices import availability
from olm.install.certs import ServingMaterial
from olm.packages.query import GROUP, VERSION

APISERVICE = f"{VERSION}.{GROUP}"
SERVICE = "packageserver-service"
SECRET = f"{SERVICE}-cert"
PORT = 5443
GROUP_PRIORITY_MINIMUM = 2000
VERSION_PRIORITY = 15
CA_KEY = "olmCAKey"
CA_HASH_ANNOTATION = "olmcahash"
MANAGED_BY = {"app.kubernetes.io/managed-by": "olm-py", "app.kubernetes.io/name": "packageserver"}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def secret(namespace: str, material: ServingMaterial) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "kubernetes.io/tls",
        "metadata": {
            "name": SECRET,
            "namespace": namespace,
            "labels": dict(MANAGED_BY),
            "annotations": {CA_HASH_ANNOTATION: material.ca_hash},
        },
        "data": {
            "tls.crt": _b64(material.cert_pem),
            "tls.key": _b64(material.key_pem),
            CA_KEY: _b64(material.ca_pem),
        },
    }


def apiservice(namespace: str, ca_pem: bytes) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": APISERVICE, "labels": dict(MANAGED_BY)},
        "spec": {
            "group": GROUP,
            "version": VERSION,
            "groupPriorityMinimum": GROUP_PRIORITY_MINIMUM,
            "versionPriority": VERSION_PRIORITY,
            "service": {"name": SERVICE, "namespace": namespace, "port": PORT},
            "caBundle": _b64(ca_pem),
        },
    }


def bridged_service(namespace: str, host_port: int) -> dict[str, Any]:
    """The Service of `olm run` on the host: no selector; the local cluster's pod runner gives
    it an endpoint that forwards to 127.0.0.1:`host_port`."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": SERVICE,
            "namespace": namespace,
            "labels": dict(MANAGED_BY),
            "annotations": {HOST_BRIDGE_ANNOTATION: json.dumps({str(PORT): host_port})},
        },
        "spec": {"ports": [{"name": "https", "port": PORT, "targetPort": PORT, "protocol": "TCP"}]},
    }


def available(apiservice_obj: dict[str, Any] | None) -> tuple[bool, str]:
    """Whether the aggregator reports the APIService Available, and why not."""
    ok, detail = availability(apiservice_obj)
    return ok, "not yet checked by the aggregator" if detail is None else detail
