"""Image registries for tests: the local docker-registry (start/stop), a bearer-token registry
and a CDN-redirecting one (`TokenRegistry`, `Cdn`, behind the `token_registry` fixture),
and the images the stories push to them (bundles, catalogs by image, an opm sqlite index)."""

from __future__ import annotations

import base64
import json
import subprocess
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from olm.catalog.samples import CATALOG
from olm.controllers.catalogimage import INDEX_LABEL
from olm.devcluster import pki, registry
from olm.devcluster.build import ensure_binaries
from olm.image.build import Image, files_under, scratch_image
from olm.image.cache import BlobCache
from olm.image.pull import Options, push
from olm.image.reference import parse
from tests.support.paths import SHARED

USER, PASSWORD, TOKEN = "olm", "s3cret", "token-123"
BUNDLE = SHARED / "fixtures" / "operator-sdk-memcached" / "bundle"


def start_registry(
    work: Path, port: int, tls: pki.Pki | None = None, storage: Path | None = None
) -> subprocess.Popen[bytes]:
    """docker-registry on 127.0.0.1:port, as `olm dev up` runs it (over TLS with `tls`'s
    registry certificate), storing into `storage` (default: work/storage)."""
    binary = registry.find_binary()
    if binary is None:
        pytest.skip("docker-registry is not installed (olm dev up installs it)")
    config = work / ("config-tls.json" if tls else "config.json")
    keys = (tls.registry_cert, tls.registry_key) if tls else None
    config.write_text(registry.config(storage or work / "storage", port, keys))
    process = subprocess.Popen(
        registry.argv(binary, config), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 20
    while not registry.healthy(port, ca=tls.ca_cert if tls else None)[0]:
        assert process.poll() is None, "docker-registry exited"
        assert time.monotonic() < deadline, "docker-registry did not start"
        time.sleep(0.1)
    return process


def stop_registry(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    process.wait(10)


def catalog_image() -> Image:
    return scratch_image(files_under(CATALOG.parent, "configs"), {INDEX_LABEL: "/configs"})


class TokenRegistry(BaseHTTPRequestHandler):
    """/v2/* wants `Bearer token-123`, issued by /token to olm:s3cret."""

    image: Image
    requests: list[tuple[str, str, str]] = []  # noqa: RUF012 - shared on purpose

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        authorization = self.headers.get("Authorization") or ""
        self.requests.append((self.command, self.path, authorization.split(" ")[0]))
        port = self.server.server_address[1]
        if self.path.startswith("/token"):
            expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if (
                authorization != expected
                or "scope=repository%3Aolm%2Fprivate%3Apull" not in self.path
            ):
                return self._send(401)
            return self._send(200, json.dumps({"token": TOKEN}).encode())
        if authorization != f"Bearer {TOKEN}":
            challenge = f'Bearer realm="http://127.0.0.1:{port}/token",service="test",scope="repository:olm/private:pull"'
            return self._send(
                401, b'{"errors":[{"code":"UNAUTHORIZED"}]}', {"WWW-Authenticate": challenge}
            )
        image = self.image
        blobs = {b.digest: b.data for b in (*image.layers, image.config)}
        if self.path == "/v2/olm/private/manifests/v1":
            return self._send(
                200,
                image.manifest,
                {"Content-Type": image.media_type, "Docker-Content-Digest": image.digest},
            )
        if self.path.startswith("/v2/olm/private/manifests/sha256:"):
            return self._send(200, image.manifest, {"Content-Type": image.media_type})
        digest = self.path.rsplit("/", 1)[-1]
        if digest in blobs:
            # Blobs come from "elsewhere", as from a CDN: a redirect to an unauthenticated path.
            return (
                self._send(307, b"", {"Location": f"http://localhost:{port}/cdn/{digest}"})
                if "cdn" not in self.path
                else None
            )
        return self._send(404, b'{"errors":[{"code":"BLOB_UNKNOWN"}]}')


class Cdn(TokenRegistry):
    def do_GET(self) -> None:
        if self.path.startswith("/cdn/"):
            authorization = self.headers.get("Authorization") or ""
            self.requests.append((self.command, self.path, authorization.split(" ")[0]))
            blobs = {b.digest: b.data for b in (*self.image.layers, self.image.config)}
            return self._send(200, blobs[self.path.rsplit("/", 1)[-1]])
        return super().do_GET()


def secret(user: str, password: str, host: str) -> dict[str, Any]:
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"auths": {host: {"auth": auth}}}


def bundle_dir(root: Path, version: str) -> Path:
    """A registry+v1 bundle directory of the sample memcached operator."""
    from tests.support.stories import SAMPLE

    directory = root / f"bundle-{version}"
    (directory / "manifests").mkdir(parents=True)
    (directory / "metadata").mkdir()
    csv = SAMPLE / f"memcached-operator.v{version}.csv.yaml"
    (directory / "manifests" / csv.name).write_bytes(csv.read_bytes())
    (directory / "manifests" / "crd.yaml").write_bytes((SAMPLE / "crd.yaml").read_bytes())
    prefix = "operators.operatorframework.io.bundle."
    annotations = {
        f"{prefix}mediatype.v1": "registry+v1",
        f"{prefix}manifests.v1": "manifests/",
        f"{prefix}metadata.v1": "metadata/",
        f"{prefix}package.v1": "memcached-operator",
        f"{prefix}channels.v1": "alpha",
        f"{prefix}channel.default.v1": "alpha",
    }
    (directory / "metadata" / "annotations.yaml").write_text(
        json.dumps({"annotations": annotations})
    )
    return directory


def catalog_by_image(images: dict[str, str]) -> bytes:
    """The samples catalog with the memcached bundles named in `images` by image only (no
    inline objects); the others (the webhook samples) stay inline."""
    from olm.catalog.render import to_yaml
    from olm.catalog.samples import build

    catalog = build()
    for bundle in catalog.packages["memcached-operator"].bundles.values():
        if bundle.name not in images:
            continue
        bundle.image = images[bundle.name]
        bundle.properties = [p for p in bundle.properties if p["type"] != "olm.bundle.object"]
    return to_yaml(catalog).encode()


DATABASE_LABEL = "operators.operatorframework.io.index.database.v1"


def push_sqlite_index(registry_address: str, tmp_path: Path, repository: str) -> str:
    """Bundle images of the samples pushed, added to an index.db by the real `opm registry
    add`, and that database pushed as a SQLite index image; its reference."""
    from olm.cli import main

    opm = ensure_binaries(build=False).path("opm")
    if not opm.is_file():
        pytest.skip("opm is not built (make setup)")
    database = tmp_path / "index.db"
    for version in ("0.0.1", "0.0.2"):
        ref = f"{registry_address}/{repository}-bundle:v{version}"
        assert main(["bundle", "push", str(bundle_dir(tmp_path, version)), ref]) == 0
        added = subprocess.run(
            [str(opm), "registry", "add", "-b", ref, "-d", str(database), "--use-http"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert added.returncode == 0, added.stderr
    image = scratch_image(
        {"database/index.db": database.read_bytes()}, {DATABASE_LABEL: "/database/index.db"}
    )
    reference = f"{registry_address}/{repository}:v1"
    options = Options(cache=BlobCache(tmp_path / "push"), use_local_configs=False)
    push(parse(reference), image, options)
    return reference
