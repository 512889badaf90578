"""Building API clients, in controller-runtime's order: an explicit kubeconfig, else
$KUBECONFIG, else the in-cluster ServiceAccount when running in a pod
($KUBERNETES_SERVICE_HOST is set), else ~/.kube/config."""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes import client, config

from olm import __version__

DEFAULT_KUBECONFIG = "~/.kube/config"
# What the API server's audit log and metrics name olm-py's requests by (kopf's watches say
# `kopf/<version>`); the kubernetes client would otherwise say `OpenAPI-Generator/...`.
USER_AGENT = f"olm-py/{__version__}"
CONNECTIONS = 16  # kept-alive connections to the API server (workers + copy writers + spare)


def source(kubeconfig: Path | str | None = None) -> str | None:
    """The kubeconfig file to use, or None for the in-cluster configuration."""
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path:
        return str(path)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        return None
    default = Path(DEFAULT_KUBECONFIG).expanduser()
    return str(default) if default.is_file() else None


def api_client(kubeconfig: Path | str | None = None) -> client.ApiClient:
    """A client for the cluster, without touching the kubernetes package's global config."""
    path = source(kubeconfig)
    configuration = client.Configuration()
    if path is not None:
        config.load_kube_config(config_file=path, client_configuration=configuration)
    else:
        config.load_incluster_config(client_configuration=configuration)
    # Workers and copy writers share the pool; a connection beyond it would be opened (a TLS
    # handshake) and dropped for each request.
    configuration.connection_pool_maxsize = max(
        configuration.connection_pool_maxsize or 0, CONNECTIONS
    )
    api = client.ApiClient(configuration)
    api.user_agent = USER_AGENT
    return api


def context_namespace(kubeconfig: Path | str | None = None) -> str | None:
    """The namespace of the kubeconfig's current context (what kubectl uses without -n), or
    None (no kubeconfig, none set, or in a pod)."""
    path = source(kubeconfig)
    if path is None:
        return None
    try:
        _, active = config.list_kube_config_contexts(config_file=path)
    except Exception:  # unreadable kubeconfig: the caller's connection attempt says why
        return None
    namespace = ((active or {}).get("context") or {}).get("namespace")
    return str(namespace) if namespace else None
