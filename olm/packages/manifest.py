"""One PackageManifest per package of a catalog, as OLM v0.38's packageserver builds it.

Invariants (docs/packagemanifests.md, read from OLM's package-server provider):
- `metadata.name` is the package, `metadata.namespace` the CatalogSource's; creationTimestamp
  is the CatalogSource's; no uid and no resourceVersion; `spec` is `{}`.
- channels are sorted by name; a channel whose head cannot be found or has no readable CSV is
  left out; a package left without channels is not listed at all; when the default channel was
  left out, the first remaining channel is the default.
- entries are the channel's bundles without an `olm.deprecated` property, by semver
  descending (an unparseable version sorts as 0.0.0); `null` when the channel has none.
- labels, later overwriting earlier: the CatalogSource's, `catalog`, `catalog-namespace`,
  `provider`, `provider-url`, then the labels of the default channel's head CSV, then the
  default `operatorframework.io/os.linux` / `arch.amd64: supported` unless a key with that
  prefix is present.
- icons are kept here (the icon subresource reads them); responses blank them
  (olm.packages.query).
Pure: plain dicts in, plain dicts out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olm.catalog.documents import (
    BUNDLE_SCHEMA,
    CHANNEL_SCHEMA,
    PACKAGE_SCHEMA,
    bundle_csv,
    deprecation,
)
from olm.catalog.graph import GraphError, head
from olm.catalog.model import Bundle, Catalog, Channel, Package
from olm.catalog.semver import SemverError, Version, parse_version

API_VERSION = "packages.operators.coreos.com/v1"
KIND = "PackageManifest"
OS_LABEL_PREFIX = "operatorframework.io/os"
ARCH_LABEL_PREFIX = "operatorframework.io/arch"
DEFAULT_OS_LABEL = "operatorframework.io/os.linux"
DEFAULT_ARCH_LABEL = "operatorframework.io/arch.amd64"
SUPPORTED = "supported"
DEPRECATED_PROPERTY = "olm.deprecated"
ZERO = Version(0, 0, 0)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _semver(text: str) -> Version:
    try:
        return parse_version(text)
    except (SemverError, ValueError):
        return ZERO


def _entries(package: Package, channel: Channel) -> list[dict[str, Any]] | None:
    found = []
    for entry in channel.entries:
        bundle = package.bundles.get(entry.name)
        if bundle is None or bundle.props(DEPRECATED_PROPERTY):
            continue
        item: dict[str, Any] = {"name": bundle.name}
        if bundle.version:
            item["version"] = bundle.version
        gone = deprecation(package, BUNDLE_SCHEMA, bundle.name)
        if gone is not None:
            item["deprecation"] = gone
        found.append(item)
    if not found:
        return None
    # A stable sort on the descending version: equal versions keep the channel's order.
    return sorted(found, key=lambda e: _semver(e.get("version", "")), reverse=True)


def _link(value: Any) -> dict[str, str]:
    link = _mapping(value)
    return {k: _text(link.get(k)) for k in ("name", "url") if _text(link.get(k))}


def _described(items: Any, keys: tuple[str, ...]) -> list[dict[str, Any]]:
    """CRD or API service descriptions cut to the fields packageserver keeps."""
    return [
        {k: item[k] for k in keys if item.get(k) not in (None, "")}
        for item in map(_mapping, _list(items))
    ]


def _definitions(spec: Mapping[str, Any], field: str, keys: tuple[str, ...]) -> dict[str, Any]:
    block = _mapping(spec.get(field))
    return {
        part: _described(block.get(part), keys)
        for part in ("owned", "required")
        if _described(block.get(part), keys)
    }


def related_images(csv: Mapping[str, Any]) -> list[str]:
    """The deployment strategy's container and init container images and spec.relatedImages,
    once each, in a stable order."""
    spec = _mapping(csv.get("spec"))
    strategy = _mapping(_mapping(spec.get("install")).get("spec"))
    images: dict[str, None] = {}
    for deployment in map(_mapping, _list(strategy.get("deployments"))):
        pod = _mapping(_mapping(_mapping(deployment.get("spec")).get("template")).get("spec"))
        for container in (*_list(pod.get("initContainers")), *_list(pod.get("containers"))):
            image = _text(_mapping(container).get("image"))
            if image:
                images[image] = None
    for related in map(_mapping, _list(spec.get("relatedImages"))):
        if _text(related.get("image")):
            images[_text(related.get("image"))] = None
    return sorted(images)


def csv_description(csv: Mapping[str, Any]) -> dict[str, Any]:
    """`currentCSVDesc`: what a console shows of a channel's head CSV."""
    spec = _mapping(csv.get("spec"))
    metadata = _mapping(csv.get("metadata"))
    desc: dict[str, Any] = {}
    if _text(spec.get("displayName")):
        desc["displayName"] = spec["displayName"]
    icons = [
        {
            k: v
            for k, v in (
                ("base64data", _text(icon.get("base64data"))),
                ("mediatype", _text(icon.get("mediatype"))),
            )
            if v
        }
        for icon in map(_mapping, _list(spec.get("icon")))
    ]
    if icons:
        desc["icon"] = icons
    desc["version"] = _text(spec.get("version")) or "0.0.0"
    desc["provider"] = _link(spec.get("provider"))
    annotations = {k: str(v) for k, v in _mapping(metadata.get("annotations")).items()}
    if annotations:
        desc["annotations"] = annotations
    for field in ("keywords", "installModes"):
        if _list(spec.get(field)):
            desc[field] = spec[field]
    # The CSV's `nativeAPIs`, as packageserver's `nativeApis`: GroupVersionKinds, all three
    # fields written (the core group as "").
    native = [
        {k: _text(api.get(k)) for k in ("group", "version", "kind")}
        for api in map(_mapping, _list(spec.get("nativeAPIs")))
    ]
    if native:
        desc["nativeApis"] = native
    links = [_link(link) for link in _list(spec.get("links"))]
    if links:
        desc["links"] = links
    maintainers = [
        {k: _text(m.get(k)) for k in ("name", "email") if _text(m.get(k))}
        for m in map(_mapping, _list(spec.get("maintainers")))
    ]
    if maintainers:
        desc["maintainers"] = maintainers
    for field in ("maturity", "description", "minKubeVersion"):
        if _text(spec.get(field)):
            desc[field] = spec[field]
    desc["customresourcedefinitions"] = _definitions(
        spec, "customresourcedefinitions", ("name", "version", "kind", "displayName", "description")
    )
    desc["apiservicedefinitions"] = _definitions(
        spec,
        "apiservicedefinitions",
        ("name", "group", "version", "kind", "displayName", "description"),
    )
    images = related_images(csv)
    if images:
        desc["relatedImages"] = images
    return desc


def _head_csv(package: Package, channel: Channel) -> dict[str, Any] | None:
    try:
        bundle: Bundle | None = package.bundles.get(head(channel))
    except GraphError:
        return None
    if bundle is None:
        return None
    csv = bundle_csv(package, bundle)
    if csv is None or not isinstance(csv.get("metadata"), Mapping):
        return None
    if not isinstance(csv.get("spec", {}), Mapping):
        return None
    return csv


def package_manifest(source: Mapping[str, Any], package: Package) -> dict[str, Any] | None:
    """The PackageManifest of `package` in CatalogSource `source`, or None (no channel left)."""
    meta = _mapping(source.get("metadata"))
    spec = _mapping(source.get("spec"))
    name, namespace = _text(meta.get("name")), _text(meta.get("namespace"))
    labels: dict[str, str] = {str(k): str(v) for k, v in _mapping(meta.get("labels")).items()}
    labels.update({"catalog": name, "catalog-namespace": namespace})
    status: dict[str, Any] = {
        "catalogSource": name,
        "catalogSourceDisplayName": _text(spec.get("displayName")),
        "catalogSourcePublisher": _text(spec.get("publisher")),
        "catalogSourceNamespace": namespace,
        "provider": {},
        "packageName": package.name,
    }
    gone = deprecation(package, PACKAGE_SCHEMA)
    if gone is not None:
        status["deprecation"] = gone
    default = package.default_channel
    channels: list[dict[str, Any]] = []
    default_csv: Mapping[str, Any] | None = None
    default_left_out = False
    provider_set = False
    for channel_name in sorted(package.channels):
        channel = package.channels[channel_name]
        csv = _head_csv(package, channel)
        if csv is None:
            default_left_out = default_left_out or channel_name == default
            continue
        if default_csv is None or channel_name == default:
            default_csv = csv
        item: dict[str, Any] = {
            "name": channel_name,
            "currentCSV": _text(_mapping(csv.get("metadata")).get("name")),
            "currentCSVDesc": csv_description(csv),
        }
        channel_gone = deprecation(package, CHANNEL_SCHEMA, channel_name)
        if channel_gone is not None:
            item["deprecation"] = channel_gone
        item["entries"] = _entries(package, channel)
        channels.append(item)
        if (default and channel_name == default) or not provider_set:
            provider = _link(_mapping(csv.get("spec")).get("provider"))
            status["provider"] = provider
            labels["provider"] = provider.get("name", "")
            labels["provider-url"] = provider.get("url", "")
            provider_set = True
    if not channels or default_csv is None:
        return None
    status["channels"] = channels
    status["defaultChannel"] = channels[0]["name"] if default_left_out else default
    labels.update(
        {
            str(k): str(v)
            for k, v in _mapping(_mapping(default_csv.get("metadata")).get("labels")).items()
        }
    )
    if not any(k.startswith(OS_LABEL_PREFIX) for k in labels):
        labels[DEFAULT_OS_LABEL] = SUPPORTED
    if not any(k.startswith(ARCH_LABEL_PREFIX) for k in labels):
        labels[DEFAULT_ARCH_LABEL] = SUPPORTED
    metadata: dict[str, Any] = {"name": package.name, "namespace": namespace, "labels": labels}
    created = meta.get("creationTimestamp")
    metadata["creationTimestamp"] = created if isinstance(created, str) and created else None
    return {
        "kind": KIND,
        "apiVersion": API_VERSION,
        "metadata": metadata,
        "spec": {},
        "status": status,
    }


def package_manifests(source: Mapping[str, Any], catalog: Catalog) -> list[dict[str, Any]]:
    """Every listable PackageManifest of one catalog, by package name."""
    found = (package_manifest(source, catalog.packages[name]) for name in sorted(catalog.packages))
    return [manifest for manifest in found if manifest is not None]
