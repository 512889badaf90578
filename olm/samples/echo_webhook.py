"""A tiny validating webhook, run by the local pod runner for `olm-py.local/echo-webhook` pods.

It proves the pod network end to end (docs/pod-network.md): it serves HTTPS with the
certificate of its mounted Secret (`OLM_PY_MOUNTS`, the controller-runtime path
`/tmp/k8s-webhook-server/serving-certs`), listens on `POD_IP` (its pod IP; 127.0.0.1 on the host's network) at
`PORT` (default 8443), and answers every AdmissionReview: an object whose
`metadata.annotations["echo-webhook/refuse"]` is set is refused with that text, anything else is
allowed. A GET of `/apis/<group>/<version>` answers an empty APIResourceList (so it can back
an APIService); other GETs answer `echo-webhook <namespace>/<pod>: <path>` (Service proxy).
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from olm.api import body

CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
REFUSE_ANNOTATION = "echo-webhook/refuse"


def review_response(review: dict[str, Any], who: str) -> dict[str, Any]:
    """The AdmissionReview answer to `review` (pure)."""
    request = review.get("request") or {}
    obj = request.get("object") or {}
    reason = body.annotations(obj).get(REFUSE_ANNOTATION)
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": reason is None}
    if reason is not None:
        name = body.meta(obj).get("name", "")
        response["status"] = {"code": 403, "message": f"{who} refuses {name}: {reason}"}
    return {
        "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
        "kind": "AdmissionReview",
        "response": response,
    }


def discovery(path: str) -> dict[str, Any] | None:
    """The APIResourceList of `/apis/<group>/<version>` (no resources), else None (pure)."""
    parts = path.split("?", 1)[0].strip("/").split("/")
    if len(parts) != 3 or parts[0] != "apis":
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{parts[1]}/{parts[2]}",
        "resources": [],
    }


def cert_dir() -> Path:
    mounts: dict[str, str] = json.loads(os.environ.get("OLM_PY_MOUNTS") or "{}")
    return Path(mounts.get(CERT_DIR, CERT_DIR))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="echo-webhook",
        description=(
            "The echo-webhook sample: a validating webhook that allows every AdmissionReview"
            " (refuses one annotated echo-webhook/refuse), over HTTPS on $POD_IP (else"
            " 127.0.0.1), port $PORT (8443)."
        ),
        epilog="Takes until killed. Writes nothing (reads its TLS pair from the pod's cert dir).",
    )
    parser.add_argument("--version", default="latest")
    parser.parse_args(argv)
    who = f"echo-webhook {os.environ.get('POD_NAMESPACE', '')}/{os.environ.get('POD_NAME', '')}"

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                review = json.loads(self.rfile.read(length))
            except ValueError:
                self._answer(400, b"not an AdmissionReview", "text/plain")
                return
            body = json.dumps(review_response(review, who)).encode()
            self._answer(200, body, "application/json")

        def do_GET(self) -> None:
            listing = discovery(self.path)
            if listing is not None:
                self._answer(200, json.dumps(listing).encode(), "application/json")
                return
            self._answer(200, f"{who}: {self.path}".encode(), "text/plain")

    directory = cert_dir()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "tls.crt", directory / "tls.key")
    address = os.environ.get("POD_IP") or "127.0.0.1"
    server = ThreadingHTTPServer((address, int(os.environ.get("PORT", "8443"))), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"{who} serving https://{address}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
