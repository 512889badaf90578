"""The local dev cluster's host bridge: the names a host process uses to ask for one.

A process on the host (e.g. `olm run` serving an aggregated API) cannot be an endpoint of a
Service: the kube-apiserver calls APIServices and webhooks at a Service's endpoint, and
endpoints refuse loopback. In the local cluster (and only there), the pod runner gives a
Service without a selector that carries HOST_BRIDGE_ANNOTATION an address the kube-apiserver
reaches, relaying to the host's 127.0.0.1 (docs/pod-network.md, "Host bridges").

- The annotation's value is a JSON object mapping each Service port's targetPort (a string) to
  a host port on 127.0.0.1: `{"5443": 40123}`.
- While the pod runner offers bridges, ConfigMap ADVERTISEMENT_NAMESPACE/ADVERTISEMENT_NAME
  exists with `data[ADVERTISEMENT_KEY] == HOST_BRIDGE_ANNOTATION`; without it (a real cluster,
  or a local one without the pod network), asking for a bridge does nothing.
- The EndpointSlice of a bridged Service carries the standard `kubernetes.io/service-name`
  label and `endpointslice.kubernetes.io/managed-by: BRIDGE_MANAGER`.
"""

from __future__ import annotations

HOST_BRIDGE_ANNOTATION = "olm-py.io/host-bridge"
ADVERTISEMENT_NAMESPACE = "kube-system"
ADVERTISEMENT_NAME = "olm-py-host-bridge"
ADVERTISEMENT_KEY = "annotation"
# Kubernetes' own EndpointSlice labels (discovery/v1 well-known labels).
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"
# The managed-by value of bridge EndpointSlices (the local pod runner writes them).
BRIDGE_MANAGER = "pod-runner.olm-py.io"
