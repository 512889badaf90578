"""Building API clients from a kubeconfig."""

from __future__ import annotations

from pathlib import Path

from kubernetes import client, config


def api_client(kubeconfig: Path | str) -> client.ApiClient:
    """A client for the cluster named by `kubeconfig`, without touching global state."""
    return config.new_client_from_config(config_file=str(kubeconfig))
