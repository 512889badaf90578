"""Gateways that act with a user's bearer token (the web console, docs/console.md).

Invariants:
- A token gateway carries the user's token and nothing else of the kubeconfig's user: no
  client certificate, no basic auth, no exec plugin. Only the cluster's address and the CA
  that verifies it are taken from the kubeconfig (or from the pod's in-cluster configuration).
- `kubeconfig_token` reads a static `token` (or `tokenFile`) of the current context's user and
  never runs an exec plugin; None when the user has no token.
- Nothing here decides anything, nor logs a token.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config

from olm.kube.client import source
from olm.kube.errors import GatewayError, NotFound
from olm.kube.gateway import Gateway


@dataclass(frozen=True)
class Cluster:
    """Where the API server is, and how to verify it."""

    host: str
    ca_file: str | None
    verify: bool = True


def cluster_of(kubeconfig: Path | str | None = None) -> Cluster:
    """The API server of the kubeconfig's current context (or of the pod when in a cluster)."""
    configuration = client.Configuration()
    path = source(kubeconfig)
    if path is None:
        config.load_incluster_config(client_configuration=configuration)
    else:
        config.load_kube_config(config_file=path, client_configuration=configuration)
    return Cluster(configuration.host, configuration.ssl_ca_cert, bool(configuration.verify_ssl))


def _current_user(document: dict[str, Any]) -> dict[str, Any]:
    contexts = {c.get("name"): c.get("context") or {} for c in document.get("contexts") or []}
    context = contexts.get(document.get("current-context")) or {}
    users = {u.get("name"): u.get("user") or {} for u in document.get("users") or []}
    found = users.get(context.get("user")) or {}
    return found if isinstance(found, dict) else {}


def kubeconfig_token(kubeconfig: Path | str | None = None) -> str | None:
    """The static bearer token of the kubeconfig's current user, or None."""
    path = source(kubeconfig)
    if path is None:
        return None
    try:
        document = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError):
        return None
    user = _current_user(document if isinstance(document, dict) else {})
    token = user.get("token")
    if not token and user.get("tokenFile"):
        with contextlib.suppress(OSError):
            token = Path(str(user["tokenFile"])).read_text().strip()
    return str(token) if token else None


def token_gateway(cluster: Cluster, token: str, field_manager: str) -> Gateway:
    """A gateway whose every request carries `Authorization: Bearer <token>` and nothing else."""
    configuration = client.Configuration()
    configuration.host = cluster.host
    configuration.ssl_ca_cert = cluster.ca_file
    configuration.verify_ssl = cluster.verify
    configuration.api_key = {"BearerToken": f"Bearer {token}"}
    return Gateway(client.ApiClient(configuration), field_manager=field_manager)


def get_raw(gateway: Gateway, path: str) -> tuple[str, bytes]:
    """(content type, body) of a GET that does not answer JSON (a PackageManifest's icon)."""
    method, url, headers, _, _ = gateway.api.param_serialize(
        "GET", path, header_params={"Accept": "*/*"}, auth_settings=["BearerToken"]
    )
    try:
        response = gateway.api.call_api(method, url, header_params=headers)
    except Exception as exc:
        raise GatewayError(f"GET {path} failed: {exc}", 0) from exc
    data = response.read()
    if response.status == 404:
        raise NotFound(path)
    if response.status >= 400:
        raise GatewayError(f"GET {path} failed ({response.status})", response.status)
    content_type = response.getheader("Content-Type") or "application/octet-stream"
    return str(content_type), bytes(data)
