"""A stand-in for `quay.io/operator-framework/mock-extension-apiserver`, run by the pod runner.

OLM's e2e suite installs CSVs that own an APIService served by pods of that image
(`/bin/mock-extension-apiserver --mock-kinds K1,K2 --mock-group-version group/version
--secure-port N`); the kube-apiserver then calls it through the APIService's Service, and the
CSV succeeds only once the APIService is Available. kwok only simulates pods and the image is
out of reach, so the pod runner runs this program for such a container instead, in the pod's
network namespace: HTTPS on `$POD_IP:<secure port>` with the serving certificate OLM (or
olm-py) mounts for an owned APIService (`/apiserver.local.config/certificates`), answering the
discovery documents of the mocked group (`/apis`, `/apis/<group>`, `/apis/<group>/<version>`
listing one namespaced resource per kind), `/healthz`, and an empty list for any resource.

Invariant: it serves only what discovery and availability need; it stores nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

CERT_DIR = "/apiserver.local.config/certificates"
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"]


def resource_of(kind: str) -> dict[str, Any]:
    name = kind.lower() + "s"
    return {
        "name": name,
        "singularName": kind.lower(),
        "namespaced": True,
        "kind": kind,
        "verbs": VERBS,
    }


def answer(path: str, group: str, version: str, kinds: Sequence[str]) -> dict[str, Any] | None:
    """The JSON document for a GET of `path`, or None (404) (pure)."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    group_version = {"groupVersion": f"{group}/{version}", "version": version}
    api_group = {
        "name": group,
        "versions": [group_version],
        "preferredVersion": group_version,
    }
    if parts == ["healthz"] or parts == ["readyz"] or parts == ["livez"]:
        return {"status": "ok"}
    if parts == ["apis"]:
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group]}
    if parts == ["apis", group]:
        return {"kind": "APIGroup", "apiVersion": "v1", **api_group}
    if parts[:3] == ["apis", group, version]:
        if len(parts) == 3:
            return {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{group}/{version}",
                "resources": [resource_of(kind) for kind in kinds],
            }
        return {"kind": "List", "apiVersion": f"{group}/{version}", "items": []}
    return None


def cert_dir() -> Path:
    mounts: dict[str, str] = json.loads(os.environ.get("OLM_PY_MOUNTS") or "{}")
    return Path(mounts.get(CERT_DIR, CERT_DIR))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="mock-extension-apiserver",
        description=(
            "Stand in for OLM's e2e mock-extension-apiserver in a pod of the local pod runner:"
            " serve the mocked group's discovery over HTTPS on $POD_IP (else 127.0.0.1)."
        ),
        epilog="Takes until killed. Writes nothing (reads its TLS pair from the pod's cert dir).",
    )
    parser.add_argument("--mock-kinds", default="")
    parser.add_argument("--mock-group-version", required=True)
    parser.add_argument("--secure-port", type=int, default=443)
    args, _ = parser.parse_known_args(argv)  # -v=4, --debug: nothing to do here
    group, _, version = args.mock_group_version.partition("/")
    kinds = [k for k in args.mock_kinds.split(",") if k]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            document = answer(self.path, group, version, kinds)
            body = json.dumps(document or {"kind": "Status", "code": 404}).encode()
            self.send_response(200 if document is not None else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *values: Any) -> None:
            return

    directory = cert_dir()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "apiserver.crt", directory / "apiserver.key")
    address = os.environ.get("POD_IP") or "127.0.0.1"
    server = ThreadingHTTPServer((address, args.secure_port), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(
        f"serving {group}/{version} ({', '.join(kinds)}) on https://{address}:{args.secure_port}",
        flush=True,
    )
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
