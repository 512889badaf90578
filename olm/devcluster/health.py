"""Health probes of the control plane's components over plain HTTP(S), stdlib only.

Kept free of the Kubernetes client so `olm dev up` can tell "already up" in well under 2 s.
"""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from pathlib import Path

from olm.devcluster.ports import LOOPBACK


def _get(url: str, context: ssl.SSLContext | None, timeout: float) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, context=context, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return 0, str(exc)


def admin_context(ca_cert: Path, client_cert: Path, client_key: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca_cert))
    context.load_cert_chain(str(client_cert), str(client_key))
    return context


def _unverified_context() -> ssl.SSLContext:
    # The controller-manager and scheduler serve health with a self-signed certificate they
    # make at start; only the loopback address is probed.
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def etcd_healthy(client_port: int, timeout: float = 1.0) -> tuple[bool, str]:
    status, body = _get(f"http://{LOOPBACK}:{client_port}/health", None, timeout)
    return status == 200 and '"health":"true"' in body.replace(" ", ""), body.strip()[:200]


def apiserver_ready(
    api_url: str, context: ssl.SSLContext, timeout: float = 2.0
) -> tuple[bool, str]:
    status, body = _get(f"{api_url}/readyz", context, timeout)
    return status == 200 and body.strip() == "ok", body.strip()[:300]


def component_healthy(port: int, timeout: float = 1.0) -> tuple[bool, str]:
    status, body = _get(f"https://{LOOPBACK}:{port}/healthz", _unverified_context(), timeout)
    return status == 200 and body.strip() == "ok", body.strip()[:200]
