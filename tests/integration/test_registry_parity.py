"""Parity with operator-registry's real `opm` (built from the Go module proxy by `make setup`):

- our client reads `opm serve` into the same graph our own parser reads from the files;
- our server answers every Registry RPC exactly as `opm serve` does on the same catalog;
- `olm catalog render` and `opm render` give the same blobs.
"""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from olm.catalog.formats import load
from olm.catalog.graph import GraphError, head
from olm.catalog.model import Catalog
from olm.catalog.samples import CATALOG
from olm.devcluster.build import ensure_binaries
from olm.packages.manifest import package_manifests
from olm.registry import registry_pb2 as pb
from olm.registry.client import RegistryClient
from olm.registry.index import RegistryIndex
from olm.registry.server import serve
from tests.support.paths import SHARED

FBC = SHARED / "fixtures" / "fbc-testdata"
CATALOGS = [
    FBC / "index-declcfgs-latest",
    FBC / "list-index",
    FBC / "webhook-operator",
    CATALOG.parent,
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def opm() -> Path:
    return ensure_binaries(build=False).path("opm")


class Served:
    def __init__(self, opm: Path, path: Path, tmp: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [
                str(opm),
                "serve",
                str(path),
                "-p",
                str(self.port),
                f"--pprof-addr=127.0.0.1:{free_port()}",
                f"--termination-log={tmp / 'termination.log'}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(tmp / "opm-serve.log").open("wb"),
        )
        self.client = RegistryClient(f"127.0.0.1:{self.port}", timeout=10)
        deadline = time.monotonic() + 30
        while not self.client.healthy():
            assert self.process.poll() is None, (tmp / "opm-serve.log").read_text()
            assert time.monotonic() < deadline, "opm serve did not become healthy"
            time.sleep(0.2)

    def close(self) -> None:
        self.client.close()
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture(params=CATALOGS, ids=lambda p: p.name)
def pair(
    request: pytest.FixtureRequest, opm: Path, tmp_path: Path
) -> Iterator[tuple[Path, RegistryClient, RegistryClient]]:
    path: Path = request.param
    theirs = Served(opm, path, tmp_path)
    port = free_port()
    server = serve(RegistryIndex(load(path)), f"127.0.0.1:{port}")
    ours = RegistryClient(f"127.0.0.1:{port}", timeout=10)
    yield path, theirs.client, ours
    ours.close()
    server.stop(0)
    theirs.close()


def graph(catalog: Catalog) -> dict[str, Any]:
    view: dict[str, Any] = {}
    for name, package in catalog.packages.items():
        channels = {}
        for channel_name, channel in package.channels.items():
            try:
                channel_head: str | None = head(channel)
            except GraphError:
                channel_head = None
            edges = sorted(
                (e.name, e.replaces, tuple(sorted(e.skips)), e.skip_range) for e in channel.entries
            )
            channels[channel_name] = {"head": channel_head, "edges": edges}
        versions = {b.name: b.version for b in package.bundles.values()}
        view[name] = {
            "default": package.default_channel,
            "channels": channels,
            "versions": versions,
        }
    return view


def test_our_client_reads_opm_serve_as_our_parser_reads_the_files(
    pair: tuple[Path, RegistryClient, RegistryClient],
) -> None:
    path, theirs, _ = pair
    assert graph(theirs.catalog()) == graph(load(path))


def _value(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _normal(value: Any) -> Any:
    """Messages as comparable data: JSON strings parsed, lists order-free."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in ("csvJson",) and item:
                out[key] = json.loads(item)
            elif key == "object":
                out[key] = sorted(json.dumps(json.loads(o), sort_keys=True) for o in item)
            elif key in ("properties", "dependencies"):
                out[key] = sorted(
                    json.dumps({"type": p["type"], "value": _value(p.get("value"))}, sort_keys=True)
                    for p in item
                )
            else:
                out[key] = _normal(item)
        return out
    if isinstance(value, list):
        return sorted((_normal(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _ask(client: RegistryClient, method: str, request: Any) -> Any:
    try:
        return ("ok", _normal(client.call(method, request)))
    except grpc.RpcError as exc:
        return ("error", exc.details())  # type: ignore[attr-defined]


def requests_for(catalog: Catalog) -> list[tuple[str, Any]]:
    asks: list[tuple[str, Any]] = [
        ("ListPackages", pb.ListPackageRequest()),
        ("ListBundles", pb.ListBundlesRequest()),
        ("GetPackage", pb.GetPackageRequest(name="no-such-package")),
    ]
    gvks = set()
    for package in catalog.packages.values():
        asks.append(("GetPackage", pb.GetPackageRequest(name=package.name)))
        for channel in package.channels.values():
            asks.append(
                (
                    "GetBundleForChannel",
                    pb.GetBundleInChannelRequest(pkgName=package.name, channelName=channel.name),
                )
            )
            for entry in channel.entries:
                asks.append(
                    (
                        "GetBundle",
                        pb.GetBundleRequest(
                            pkgName=package.name, channelName=channel.name, csvName=entry.name
                        ),
                    )
                )
                for target in [entry.replaces, *entry.skips]:
                    if target:
                        asks.append(
                            (
                                "GetChannelEntriesThatReplace",
                                pb.GetAllReplacementsRequest(csvName=target),
                            )
                        )
                        asks.append(
                            (
                                "GetBundleThatReplaces",
                                pb.GetReplacementRequest(
                                    csvName=target, pkgName=package.name, channelName=channel.name
                                ),
                            )
                        )
        asks.append(
            (
                "GetBundle",
                pb.GetBundleRequest(
                    pkgName=package.name, channelName="no-such-channel", csvName="x"
                ),
            )
        )
        for bundle in package.bundles.values():
            gvks.update(
                (v["group"], v["version"], v["kind"])
                for v in bundle.props("olm.gvk")
                if isinstance(v, dict)
            )
    for group, version, kind in [*sorted(gvks), ("no.such", "v1", "Thing")]:
        asks.append(
            (
                "GetChannelEntriesThatProvide",
                pb.GetAllProvidersRequest(group=group, version=version, kind=kind),
            )
        )
        asks.append(
            (
                "GetLatestChannelEntriesThatProvide",
                pb.GetLatestProvidersRequest(group=group, version=version, kind=kind),
            )
        )
        asks.append(
            (
                "GetDefaultBundleThatProvides",
                pb.GetDefaultProviderRequest(group=group, version=version, kind=kind),
            )
        )
    return asks


def test_our_server_answers_like_opm_serve(
    pair: tuple[Path, RegistryClient, RegistryClient],
) -> None:
    path, theirs, ours = pair
    differences = []
    asks = requests_for(load(path))
    catalog = load(path)
    for method, request in asks:
        expected, got = _ask(theirs, method, request), _ask(ours, method, request)
        if method == "GetBundleThatReplaces" and expected[0] == got[0] == "ok":
            # When several bundles replace the same one, opm's pick depends on Go map order
            # (it changes between runs); any of them is a correct answer.
            channel = catalog.packages[request.pkgName].channels[request.channelName]
            valid = {
                e.name
                for e in channel.entries
                if e.replaces == request.csvName or request.csvName in e.skips
            }
            assert expected[1]["csvName"] in valid and got[1]["csvName"] in valid
            continue
        if expected != got:
            differences.append((method, str(request).strip(), expected, got))
    assert not differences, (
        f"{len(differences)} of {len(asks)} answers differ; first: {differences[0]}"
    )


@pytest.mark.parametrize("path", CATALOGS, ids=lambda p: p.name)
def test_render_matches_opm_render(opm: Path, path: Path) -> None:
    def blobs(command: list[str]) -> list[str]:
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        decoder, text, found, position = json.JSONDecoder(), result.stdout, [], 0
        while text[position:].strip():
            value, end = decoder.raw_decode(text, len(text) - len(text[position:].lstrip()))
            found.append(json.dumps(_normal(value), sort_keys=True))
            position = end
        return sorted(found)

    import sys

    theirs = blobs([str(opm), "render", str(path), "-o", "json"])
    ours = blobs([sys.executable, "-m", "olm.cli", "catalog", "render", str(path), "-o", "json"])
    assert ours == theirs


def _image_bundle_catalog(root: Path) -> Path:
    """One package whose bundles have an image and their CSV inline: `opm serve` leaves the
    CSV out of ListBundles for such bundles (answering it only to GetBundle)."""
    docs: list[dict[str, Any]] = [
        {"schema": "olm.package", "name": "imaged", "defaultChannel": "stable"},
        {
            "schema": "olm.channel",
            "package": "imaged",
            "name": "stable",
            "entries": [
                {"name": "imaged.v1.0.0"},
                {"name": "imaged.v1.1.0", "replaces": "imaged.v1.0.0"},
            ],
        },
    ]
    for version in ("1.0.0", "1.1.0"):
        csv = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "ClusterServiceVersion",
            "metadata": {"name": f"imaged.v{version}"},
            "spec": {"version": version, "displayName": "Imaged", "provider": {"name": "Us"}},
        }
        data = base64.b64encode(json.dumps(csv).encode()).decode()
        docs.append(
            {
                "schema": "olm.bundle",
                "package": "imaged",
                "name": f"imaged.v{version}",
                "image": f"registry.invalid/imaged-bundle:{version}",
                "properties": [
                    {"type": "olm.package", "value": {"packageName": "imaged", "version": version}},
                    {"type": "olm.bundle.object", "value": {"data": data}},
                ],
            }
        )
    root.mkdir(parents=True, exist_ok=True)
    (root / "catalog.json").write_text("".join(json.dumps(d) + "\n" for d in docs))
    return root


def test_package_manifests_of_a_served_catalog_have_their_heads_csvs(
    opm: Path, tmp_path: Path
) -> None:
    # Found by the PackageManifest benchmark: a catalog of image bundles read over gRPC had no
    # CSVs (ListBundles omits them), so `kubectl get packagemanifests` listed none of it.
    path = _image_bundle_catalog(tmp_path / "catalog")
    theirs = Served(opm, path, tmp_path)
    try:
        listed = {b["csvName"]: b for b in theirs.client.list_bundles()}
        assert listed["imaged.v1.1.0"].get("csvJson", "") == ""  # what makes the read needed
        source = {"metadata": {"name": "c", "namespace": "olm"}, "spec": {}}
        served = package_manifests(source, theirs.client.catalog())
        assert served == package_manifests(source, load(path))
        assert [m["status"]["channels"][0]["currentCSV"] for m in served] == ["imaged.v1.1.0"]
    finally:
        theirs.close()
