"""A gateway for a command a user runs (`olm install`, `olm uninstall-operator`, `olm
explain`), acting with the user's own kubeconfig, and the first request that proves the
cluster answers.

Invariant: every way of failing to connect (no kubeconfig, no in-cluster configuration,
connection refused, TLS, DNS, a refused request) is one `Unreachable` whose message is a single
line a user can act on, never a traceback.
"""

from __future__ import annotations

from olm.kube.client import api_client
from olm.kube.errors import GatewayError
from olm.kube.gateway import Gateway
from olm.kube.protocol import KubeGateway


class Unreachable(RuntimeError):
    """The cluster cannot be reached, or refused the first request."""


def user_gateway(kubeconfig: str | None, field_manager: str) -> Gateway:
    try:
        return Gateway(api_client(kubeconfig), field_manager=field_manager)
    except Exception as exc:  # no kubeconfig, no in-cluster config: say so, once
        raise Unreachable(f"cannot reach a cluster: {exc}") from exc


def reach(gateway: KubeGateway) -> str:
    """The cluster's Kubernetes version, or `Unreachable` saying why it cannot be had."""
    try:
        return gateway.server_version()
    except GatewayError as exc:
        raise Unreachable(f"the cluster refused a request: {exc}") from exc
    except Exception as exc:  # connection refused, TLS, DNS: one line, not a traceback
        configuration = getattr(getattr(gateway, "api", None), "configuration", None)
        host = getattr(configuration, "host", "?")
        reason = getattr(exc, "reason", None) or exc
        raise Unreachable(f"cannot reach the cluster at {host}: {reason}") from exc
