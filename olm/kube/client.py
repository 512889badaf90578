"""Building API clients: from a kubeconfig, else $KUBECONFIG / ~/.kube/config, else in-cluster."""

from __future__ import annotations

import os
from pathlib import Path

from kubernetes import client, config


def api_client(kubeconfig: Path | str | None = None) -> client.ApiClient:
    """A client for the cluster, without touching the kubernetes package's global config."""
    path = kubeconfig or os.environ.get("KUBECONFIG")
    if path or Path("~/.kube/config").expanduser().is_file():
        return config.new_client_from_config(config_file=str(path) if path else None)
    configuration = client.Configuration()
    config.load_incluster_config(client_configuration=configuration)
    return client.ApiClient(configuration)
