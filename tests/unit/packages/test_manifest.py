"""PackageManifests built from plain catalogs, as OLM v0.38's packageserver builds them."""

from __future__ import annotations

import base64
import json
from typing import Any

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package
from olm.packages.manifest import package_manifest, package_manifests, related_images

SOURCE = {
    "metadata": {
        "name": "community",
        "namespace": "olm",
        "labels": {"team": "a", "catalog": "overwritten"},
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "resourceVersion": "7",
    },
    "spec": {"displayName": "Community Operators", "publisher": "Example"},
}


def _csv(name: str, version: str, **spec: Any) -> dict[str, Any]:
    labels = spec.pop("labels", {})
    return {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {
            "name": name,
            "annotations": {"capabilities": "Basic Install"},
            "labels": labels,
        },
        "spec": {"version": version, **spec},
    }


def _bundle(package: str, csv: dict[str, Any] | None, *, deprecated: bool = False) -> Bundle:
    name = csv["metadata"]["name"] if csv else "ghost.v1.0.0"
    version = csv["spec"]["version"] if csv else "1.0.0"
    properties: list[dict[str, Any]] = [
        {"type": "olm.package", "value": {"packageName": package, "version": version}}
    ]
    if csv is not None:
        data = base64.b64encode(json.dumps(csv).encode()).decode()
        properties.append({"type": "olm.bundle.object", "value": {"data": data}})
    if deprecated:
        properties.append({"type": "olm.deprecated", "value": {}})
    return Bundle(name, package, properties=properties)


def _package() -> Package:
    v1 = _csv("etcd.v1.0.0", "1.0.0")
    v2 = _csv(
        "etcd.v2.0.0",
        "2.0.0",
        displayName="etcd",
        provider={"name": "Alpha Corp"},
        icon=[{"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"}],
        customresourcedefinitions={
            "owned": [
                {
                    "name": "etcds.example.com",
                    "version": "v1",
                    "kind": "Etcd",
                    "displayName": "Etcd",
                    "specDescriptors": [{"path": "size"}],
                }
            ]
        },
        install={
            "strategy": "deployment",
            "spec": {
                "deployments": [
                    {
                        "name": "etcd",
                        "spec": {
                            "template": {
                                "spec": {
                                    "containers": [{"image": "quay.io/etcd:2"}],
                                    "initContainers": [{"image": "quay.io/init:1"}],
                                }
                            }
                        },
                    }
                ]
            },
        },
        relatedImages=[{"name": "etcd", "image": "quay.io/etcd:2"}],
    )
    v15 = _csv(
        "etcd.v1.5.0",
        "1.5.0",
        provider={"name": "Stable Corp", "url": "https://stable.example"},
        labels={"operatorframework.io/arch.arm64": "supported"},
    )
    package = Package("etcd", default_channel="stable")
    package.bundles = {
        "etcd.v1.0.0": _bundle("etcd", v1),
        "etcd.v1.5.0": _bundle("etcd", v15, deprecated=True),
        "etcd.v2.0.0": _bundle("etcd", v2),
    }
    package.channels = {
        "stable": Channel(
            "stable", "etcd", [Entry("etcd.v1.0.0"), Entry("etcd.v1.5.0", replaces="etcd.v1.0.0")]
        ),
        "alpha": Channel(
            "alpha", "etcd", [Entry("etcd.v1.0.0"), Entry("etcd.v2.0.0", replaces="etcd.v1.0.0")]
        ),
    }
    package.deprecations = {
        "entries": [
            {"reference": {"schema": "olm.package"}, "message": "use etcd-ng"},
            {"reference": {"schema": "olm.channel", "name": "alpha"}, "message": "alpha ends"},
            {"reference": {"schema": "olm.bundle", "name": "etcd.v1.0.0"}, "message": "old"},
        ]
    }
    return package


def test_metadata_labels_and_status_as_packageserver_writes_them() -> None:
    manifest = package_manifest(SOURCE, _package())
    assert manifest is not None
    meta = manifest["metadata"]
    assert (meta["name"], meta["namespace"]) == ("etcd", "olm")
    assert meta["creationTimestamp"] == "2026-01-01T00:00:00Z"
    assert "resourceVersion" not in meta and "uid" not in meta
    # the catalog's own labels first, then catalog/catalog-namespace over them
    assert meta["labels"]["team"] == "a"
    assert meta["labels"]["catalog"] == "community"
    assert meta["labels"]["catalog-namespace"] == "olm"
    status = manifest["status"]
    assert status["catalogSourceDisplayName"] == "Community Operators"
    assert status["catalogSourcePublisher"] == "Example"
    assert status["deprecation"] == {"message": "use etcd-ng"}
    assert [c["name"] for c in status["channels"]] == ["alpha", "stable"]
    assert status["defaultChannel"] == "stable"
    assert manifest["spec"] == {}


def test_provider_and_labels_come_from_the_default_channel_head() -> None:
    manifest = package_manifest(SOURCE, _package())
    assert manifest is not None
    assert manifest["status"]["provider"] == {
        "name": "Stable Corp",
        "url": "https://stable.example",
    }
    labels = manifest["metadata"]["labels"]
    assert labels["provider"] == "Stable Corp"
    assert labels["provider-url"] == "https://stable.example"
    # the default head names an arch, so no default arch label; no os label, so linux
    assert "operatorframework.io/arch.amd64" not in labels
    assert labels["operatorframework.io/arch.arm64"] == "supported"
    assert labels["operatorframework.io/os.linux"] == "supported"


def test_entries_leave_out_deprecated_bundles_and_sort_by_version() -> None:
    manifest = package_manifest(SOURCE, _package())
    assert manifest is not None
    channels = {c["name"]: c for c in manifest["status"]["channels"]}
    assert channels["alpha"]["entries"] == [
        {"name": "etcd.v2.0.0", "version": "2.0.0"},
        {"name": "etcd.v1.0.0", "version": "1.0.0", "deprecation": {"message": "old"}},
    ]
    # the stable head is v1.5.0 (deprecated as a bundle property: not an entry, still head)
    assert channels["stable"]["currentCSV"] == "etcd.v1.5.0"
    assert channels["stable"]["entries"] == [
        {"name": "etcd.v1.0.0", "version": "1.0.0", "deprecation": {"message": "old"}}
    ]
    assert channels["alpha"]["deprecation"] == {"message": "alpha ends"}
    assert "deprecation" not in channels["stable"]


def test_current_csv_description_is_cut_as_packageserver_cuts_it() -> None:
    manifest = package_manifest(SOURCE, _package())
    assert manifest is not None
    alpha = next(c for c in manifest["status"]["channels"] if c["name"] == "alpha")
    desc = alpha["currentCSVDesc"]
    assert desc["displayName"] == "etcd"
    assert desc["version"] == "2.0.0"
    assert desc["icon"] == [{"base64data": "PHN2Zy8+", "mediatype": "image/svg+xml"}]
    assert desc["customresourcedefinitions"] == {
        "owned": [
            {"name": "etcds.example.com", "version": "v1", "kind": "Etcd", "displayName": "Etcd"}
        ]
    }
    assert desc["apiservicedefinitions"] == {}
    assert desc["relatedImages"] == ["quay.io/etcd:2", "quay.io/init:1"]
    assert desc["annotations"] == {"capabilities": "Basic Install"}


def test_a_channel_without_a_readable_head_is_left_out_and_the_default_moves() -> None:
    package = _package()
    package.bundles["etcd.v1.5.0"] = _bundle("etcd", None)  # no CSV at all
    package.bundles["etcd.v1.5.0"].name = "etcd.v1.5.0"
    manifest = package_manifest(SOURCE, package)
    assert manifest is not None
    assert [c["name"] for c in manifest["status"]["channels"]] == ["alpha"]
    assert manifest["status"]["defaultChannel"] == "alpha"
    assert manifest["status"]["provider"] == {"name": "Alpha Corp"}


def test_a_package_without_channels_or_bundles_is_not_listed() -> None:
    empty = Package("empty", default_channel="stable")
    no_bundles = Package(
        "nobundles", channels={"stable": Channel("stable", "nobundles", [Entry("x.v1")])}
    )
    catalog = Catalog(packages={"empty": empty, "nobundles": no_bundles, "etcd": _package()})
    assert [m["metadata"]["name"] for m in package_manifests(SOURCE, catalog)] == ["etcd"]


def test_a_package_without_a_default_channel_keeps_it_empty() -> None:
    package = _package()
    package.default_channel = ""
    manifest = package_manifest(SOURCE, package)
    assert manifest is not None
    assert manifest["status"]["defaultChannel"] == ""
    # the provider is the first channel's (by name)
    assert manifest["status"]["provider"] == {"name": "Alpha Corp"}


def test_csv_metadata_bundles_are_described_from_the_property() -> None:
    package = Package("meta", default_channel="stable", description="From the package")
    package.bundles["meta.v1.0.0"] = Bundle(
        "meta.v1.0.0",
        "meta",
        image="quay.io/meta-bundle:1",
        properties=[
            {"type": "olm.package", "value": {"packageName": "meta", "version": "1.0.0"}},
            {
                "type": "olm.csv.metadata",
                "value": {"displayName": "Meta", "provider": {"name": "M"}},
            },
        ],
    )
    package.channels["stable"] = Channel("stable", "meta", [Entry("meta.v1.0.0")])
    manifest = package_manifest(SOURCE, package)
    assert manifest is not None
    desc = manifest["status"]["channels"][0]["currentCSVDesc"]
    assert (desc["displayName"], desc["version"], desc["description"]) == (
        "Meta",
        "1.0.0",
        "From the package",
    )


def test_related_images_are_unique() -> None:
    csv = _csv("x.v1", "1.0.0", relatedImages=[{"image": "a"}, {"image": "a"}, {"image": ""}])
    assert related_images(csv) == ["a"]


def test_native_apis_are_read_from_the_csvs_native_apis_field() -> None:
    # The CSV spells it `nativeAPIs`; packageserver writes `nativeApis`, every field of a
    # GroupVersionKind present (the core group as ""). Found by the parity suite.
    csv = _csv(
        "plain.v1.0.0",
        "1.0.0",
        nativeAPIs=[{"version": "v1", "kind": "ConfigMap"}, {"group": "apps", "kind": "X", "y": 1}],
    )
    package = Package(
        "plain",
        "stable",
        channels={"stable": Channel("stable", "plain", [Entry("plain.v1.0.0")])},
        bundles={"plain.v1.0.0": _bundle("plain", csv)},
    )
    manifest = package_manifest(SOURCE, package)
    assert manifest is not None
    desc = manifest["status"]["channels"][0]["currentCSVDesc"]
    assert desc["nativeApis"] == [
        {"group": "", "version": "v1", "kind": "ConfigMap"},
        {"group": "apps", "version": "", "kind": "X"},
    ]
    no_native = _csv("plain.v1.0.0", "1.0.0", nativeApis=[{"kind": "Ignored"}])
    package.bundles["plain.v1.0.0"] = _bundle("plain", no_native)
    manifest = package_manifest(SOURCE, package)
    assert manifest is not None
    assert "nativeApis" not in manifest["status"]["channels"][0]["currentCSVDesc"]
