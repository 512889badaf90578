"""The registry view of a catalog (catalog-formats.md §5.2), as plain dicts shaped like the
gRPC messages. Pure: the server only converts these to protobuf.

Invariants: one record per (package, channel, bundle); `GetBundle`-style answers blank
`replaces`/`skips`; `ListBundles` omits `csvJson`/`object` when the bundle has an image.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from olm.catalog.documents import HIDDEN_PROPERTIES, bundle_csv, deprecation
from olm.catalog.graph import GraphError, entries_in_order, head
from olm.catalog.model import Bundle, Catalog, Channel, Package


class LookupFailed(LookupError):
    pass


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _gvk(value: Any) -> dict[str, str]:
    value = value if isinstance(value, dict) else {}
    return {
        "group": str(value.get("group", "")),
        "version": str(value.get("version", "")),
        "kind": str(value.get("kind", "")),
        "plural": "",
    }


def _csv_json(package: Package, bundle: Bundle) -> str:
    csv = bundle_csv(package, bundle)
    return _compact(csv) if csv is not None else ""


def bundle_record(package: Package, channel: Channel, bundle: Bundle) -> dict[str, Any]:
    entry = channel.entry(bundle.name)
    dependencies = []
    for prop in bundle.properties:
        if prop.get("type") == "olm.gvk.required":
            dependencies.append({"type": "olm.gvk", "value": _compact(prop.get("value"))})
        elif prop.get("type") == "olm.package.required":
            value = prop.get("value") or {}
            dependencies.append(
                {
                    "type": "olm.package",
                    "value": _compact(
                        {
                            "packageName": value.get("packageName", ""),
                            "version": value.get("versionRange", ""),
                        }
                    ),
                }
            )
    csv_json = _csv_json(package, bundle)
    objects = [_compact(o) for o in bundle.objects] or ([csv_json] if csv_json else [])
    return {
        "csvName": bundle.name,
        "packageName": package.name,
        "channelName": channel.name,
        "csvJson": csv_json,
        "object": objects,
        "bundlePath": bundle.image,
        "providedApis": [_gvk(v) for v in bundle.props("olm.gvk")],
        "requiredApis": [_gvk(v) for v in bundle.props("olm.gvk.required")],
        "version": bundle.version,
        "skipRange": entry.skip_range if entry else "",
        "dependencies": dependencies,
        "properties": [
            {"type": str(p.get("type", "")), "value": _compact(p.get("value"))}
            for p in bundle.properties
            if p.get("type") not in HIDDEN_PROPERTIES
        ],
        "replaces": entry.replaces if entry else "",
        "skips": list(entry.skips) if entry else [],
        "deprecation": deprecation(package, "olm.bundle", bundle.name),
    }


def _q(text: str) -> str:
    """Go's %q for plain strings."""
    return json.dumps(text)


def _blanked(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "replaces": "", "skips": []}


class RegistryIndex:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.records: list[dict[str, Any]] = []
        self.heads: dict[tuple[str, str], str] = {}
        self.order: dict[tuple[str, str], dict[str, int]] = {}
        for package in sorted(catalog.packages.values(), key=lambda p: p.name):
            for channel in sorted(package.channels.values(), key=lambda c: c.name):
                with contextlib.suppress(GraphError):
                    self.heads[(package.name, channel.name)] = head(channel)
                self.order[(package.name, channel.name)] = {
                    n: i for i, n in enumerate(entries_in_order(channel))
                }
                for entry in channel.entries:
                    if entry.name in package.bundles:
                        self.records.append(
                            bundle_record(package, channel, package.bundles[entry.name])
                        )

    def list_packages(self) -> list[str]:
        return sorted(self.catalog.packages)

    def get_package(self, name: str) -> dict[str, Any]:
        package = self.catalog.packages.get(name)
        if package is None:
            raise LookupFailed(f'package "{name}" not found')
        return {
            "name": name,
            "channels": [
                {
                    "name": c,
                    "csvName": self.heads.get((name, c), ""),
                    "deprecation": deprecation(package, "olm.channel", c),
                }
                for c in sorted(package.channels)
            ],
            "defaultChannelName": package.default_channel,
            "deprecation": deprecation(package, "olm.package", ""),
        }

    def _find(self, package: str, channel: str, name: str) -> dict[str, Any]:
        if (package, channel) not in {(r["packageName"], r["channelName"]) for r in self.records}:
            raise LookupFailed(f'package "{package}", channel "{channel}" not found')
        for record in self.records:
            if (record["packageName"], record["channelName"], record["csvName"]) == (
                package,
                channel,
                name,
            ):
                return record
        raise LookupFailed(f'package "{package}", channel "{channel}", bundle "{name}" not found')

    def get_bundle(self, package: str, channel: str, name: str) -> dict[str, Any]:
        return _blanked(self._find(package, channel, name))

    def get_bundle_for_channel(self, package: str, channel: str) -> dict[str, Any]:
        if (package, channel) not in self.heads:
            raise LookupFailed(f'package "{package}", channel "{channel}" not found')
        return _blanked(self._find(package, channel, self.heads[(package, channel)]))

    def list_bundles(self) -> list[dict[str, Any]]:
        return [{**r, "csvJson": "", "object": []} if r["bundlePath"] else r for r in self.records]

    def entries_that_replace(self, name: str) -> list[dict[str, str]]:
        found = []
        for record in self.records:
            base = {
                "packageName": record["packageName"],
                "channelName": record["channelName"],
                "bundleName": record["csvName"],
            }
            # opm reports the bundle's own `replaces`, whether it matched by replaces or skips.
            if record["replaces"] == name:
                found.append({**base, "replaces": record["replaces"]})
            found.extend(
                {**base, "replaces": record["replaces"]}
                for skip in record["skips"]
                if skip == name and skip != record["replaces"]
            )
        if not found:
            raise LookupFailed(f"no channel entries found that replace {name}")
        return found

    def bundle_that_replaces(self, name: str, package: str, channel: str) -> dict[str, Any]:
        in_channel = [
            r for r in self.records if (r["packageName"], r["channelName"]) == (package, channel)
        ]
        # A `replaces` match wins over a `skips` match, as in opm.
        order = self.order.get((package, channel), {})
        nearest_head = sorted(in_channel, key=lambda r: order.get(r["csvName"], len(order)))
        matches = [r for r in nearest_head if r["replaces"] == name]
        matches += [r for r in nearest_head if name in r["skips"]]
        if matches:
            return _blanked(matches[0])
        raise LookupFailed(
            f'no entry found for package "{package}", channel "{channel}" that replaces {name}'
        )

    def _provides(self, record: dict[str, Any], group: str, version: str, kind: str) -> bool:
        return any(
            (a["group"], a["version"], a["kind"]) == (group, version, kind)
            for a in record["providedApis"]
        )

    def entries_that_provide(
        self, group: str, version: str, kind: str, latest: bool = False
    ) -> list[dict[str, str]]:
        found = []
        for record in self.records:
            if not self._provides(record, group, version, kind):
                continue
            if (
                latest
                and self.heads.get((record["packageName"], record["channelName"]))
                != record["csvName"]
            ):
                continue
            base = {
                "packageName": record["packageName"],
                "channelName": record["channelName"],
                "bundleName": record["csvName"],
            }
            found.append({**base, "replaces": record["replaces"]})
            names = {
                r["csvName"]
                for r in self.records
                if (r["packageName"], r["channelName"])
                == (record["packageName"], record["channelName"])
            }
            found.extend(
                {**base, "replaces": skip}
                for skip in record["skips"]
                if skip != record["replaces"] and (not latest or skip in names)
            )
        if not found:
            raise LookupFailed(
                f"no channel entries found that provide group:{_q(group)} version:{_q(version)} kind:{_q(kind)}"
            )
        return found

    def default_bundle_that_provides(self, group: str, version: str, kind: str) -> dict[str, Any]:
        for entry in sorted(
            self.entries_that_provide(group, version, kind, latest=True),
            key=lambda e: e["packageName"],
        ):
            package = self.catalog.packages[entry["packageName"]]
            if entry["channelName"] == package.default_channel:
                return _blanked(
                    self._find(entry["packageName"], entry["channelName"], entry["bundleName"])
                )
        raise LookupFailed(
            f"no entry found that provides group:{_q(group)} version:{_q(version)} kind:{_q(kind)}"
        )
