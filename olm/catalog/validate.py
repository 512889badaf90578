"""Catalog validation: `opm validate`'s rules (catalog-formats.md §1.9 B and C) over the model.

Invariant: every problem is reported, each with where it is, the rule's name and a hint.
"""

from __future__ import annotations

import re
from collections import defaultdict

from olm.catalog.csvcheck import check_bundle
from olm.catalog.graph import GraphError, check_chain
from olm.catalog.model import Bundle, Catalog, Package, Problem
from olm.catalog.semver import SemverError, parse_range, parse_version

# A docker reference: [registry[:port]/]path[:tag][@digest], lowercase path components.
_IMAGE = re.compile(
    r"^(?:[a-zA-Z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[\w][\w.-]{0,127})?(?:@[a-z0-9]+:[a-fA-F0-9]{32,})?$"
)
_RELEASE = re.compile(r"[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*")


def validate(catalog: Catalog, *, warnings: bool = False) -> list[Problem]:
    """Problems found while loading plus every rule over the model, packages in name order.
    Warnings (advice that does not make a catalog invalid) only when asked for."""
    problems = list(catalog.problems)
    for name in sorted(catalog.packages):
        problems.extend(_package(catalog.packages[name]))
    return [p for p in problems if warnings or p.level == "error"]


def _package(package: Package) -> list[Problem]:
    where = (package.source, f"package {package.name}")
    problems: list[Problem] = []
    if not package.default_channel:
        problems.append(
            Problem(
                "default-channel",
                "default channel must be set",
                "set defaultChannel on the olm.package blob",
                *where,
            )
        )
    elif package.default_channel not in package.channels:
        problems.append(
            Problem(
                "default-channel",
                f'default channel "{package.default_channel}" has no olm.channel blob',
                "add that channel or change defaultChannel",
                *where,
            )
        )
    if not package.channels:
        problems.append(
            Problem(
                "channels",
                "package must contain at least one channel",
                "add an olm.channel blob",
                *where,
            )
        )
    in_channels: set[str] = set()
    for channel in sorted(package.channels.values(), key=lambda c: c.name):
        cwhere = (package.source, f"package {package.name}, channel {channel.name}")
        in_channels.update(e.name for e in channel.entries)
        if not channel.entries:
            problems.append(
                Problem(
                    "channel-empty",
                    "channel must contain at least one bundle",
                    "add entries to the channel",
                    *cwhere,
                )
            )
            continue
        missing = [e.name for e in channel.entries if e.name not in package.bundles]
        if missing:
            problems.append(
                Problem(
                    "channel-bundle-missing",
                    f"no olm.bundle blobs found for channel entries {missing}",
                    "add the bundles or remove the entries",
                    *cwhere,
                )
            )
        try:
            chain = check_chain(channel)
        except GraphError as exc:
            problems.append(
                Problem(
                    "channel-head",
                    str(exc),
                    "exactly one entry must be neither replaced nor skipped by another",
                    *cwhere,
                )
            )
            continue
        if chain.cycle:
            problems.append(
                Problem(
                    "channel-cycle",
                    f"detected cycle in replaces chain of upgrade graph: {' -> '.join(chain.cycle)}",
                    "break the cycle of replaces",
                    *cwhere,
                )
            )
        if chain.stranded:
            problems.append(
                Problem(
                    "channel-stranded",
                    f"channel contains one or more stranded bundles: {', '.join(chain.stranded)}",
                    "make each bundle replaced by, or skipped by, the chain from the head",
                    *cwhere,
                )
            )
        for entry in channel.entries:
            for index, skip in enumerate(entry.skips):
                if not skip:
                    problems.append(
                        Problem(
                            "skips-empty",
                            f"bundle {entry.name}: skip[{index}] is empty",
                            "remove the empty skips item",
                            *cwhere,
                        )
                    )
            if entry.skip_range:
                try:
                    parse_range(entry.skip_range)
                except SemverError as exc:
                    problems.append(
                        Problem(
                            "skiprange",
                            f'bundle {entry.name}: invalid skipRange "{entry.skip_range}": {exc}',
                            "use blang/semver ranges like '>=1.0.0 <1.2.0'",
                            *cwhere,
                        )
                    )
    versions: dict[str, list[str]] = defaultdict(list)
    for bundle in sorted(package.bundles.values(), key=lambda b: b.name):
        problems.extend(_bundle(package, bundle))
        problems.extend(check_bundle(bundle))
        if bundle.name not in in_channels:
            problems.append(
                Problem(
                    "bundle-no-channel",
                    f'package "{package.name}", bundle "{bundle.name}" not found in any channel entries',
                    "add the bundle to a channel or remove it",
                    bundle.source,
                )
            )
        if bundle.version:
            release = _release(bundle)
            versions[bundle.version + (f"-{release}" if release else "")].append(bundle.name)
    duplicates = {v: names for v, names in versions.items() if len(names) > 1}
    if duplicates:
        listed = ", ".join(f"{{{v}: [{', '.join(n)}]}}" for v, n in sorted(duplicates.items()))
        problems.append(
            Problem(
                "versions-unique",
                f"duplicate versions found in bundles: [{listed}]",
                "give each bundle its own version",
                *where,
            )
        )
    return problems


def _release(bundle: Bundle) -> str:
    packages = bundle.props("olm.package")
    value = packages[0] if packages and isinstance(packages[0], dict) else {}
    return str(value.get("release") or "")


def _bundle(package: Package, bundle: Bundle) -> list[Problem]:
    where = (bundle.source, f"bundle {bundle.name}")
    problems: list[Problem] = []
    packages = bundle.props("olm.package")
    if len(packages) != 1:
        problems.append(
            Problem(
                "bundle-olm-package",
                f'must be exactly one property with type "olm.package", found {len(packages)}',
                "add one olm.package property {packageName, version}",
                *where,
            )
        )
    else:
        value = packages[0]
        if not isinstance(value, dict):
            problems.append(
                Problem(
                    "property-shape",
                    'property "olm.package" value must be an object {packageName, version}',
                    "fix the property value",
                    *where,
                )
            )
        else:
            if value.get("packageName") != package.name:
                problems.append(
                    Problem(
                        "bundle-package-mismatch",
                        f'package "{package.name}" does not match "olm.package" property "{value.get("packageName")}"',
                        "make packageName equal the bundle's package",
                        *where,
                    )
                )
            version = value.get("version")
            if not isinstance(version, str):
                problems.append(
                    Problem(
                        "bundle-version",
                        f'error parsing bundle "{bundle.name}" version {version!r}: must be a string',
                        "quote the version",
                        *where,
                    )
                )
            else:
                try:
                    parsed = parse_version(version)
                    release = value.get("release")
                    if release is not None:
                        if (
                            not isinstance(release, str)
                            or len(release) > 20
                            or "+" in release
                            or not _RELEASE.fullmatch(release)
                        ):
                            problems.append(
                                Problem(
                                    "bundle-release",
                                    f'error parsing bundle "{bundle.name}" release version {release!r}',
                                    "a release is a string like '2' or 'rc.1', at most 20 characters",
                                    *where,
                                )
                            )
                        elif parsed.build:
                            problems.append(
                                Problem(
                                    "bundle-release",
                                    "cannot use build metadata in version with a release version",
                                    "drop the +build part",
                                    *where,
                                )
                            )
                        elif bundle.name != f"{package.name}-v{version}-{release}":
                            problems.append(
                                Problem(
                                    "bundle-name",
                                    f'name "{bundle.name}" does not match normalized name "{package.name}-v{version}-{release}"',
                                    "rename the bundle",
                                    *where,
                                )
                            )
                except SemverError as exc:
                    problems.append(
                        Problem(
                            "bundle-version",
                            f'error parsing bundle "{bundle.name}" version "{version}": {exc}',
                            "use strict semver like 1.2.3 (no leading v)",
                            *where,
                        )
                    )
    for index, prop in enumerate(bundle.properties):
        kind = prop.get("type")
        if not isinstance(kind, str) or not kind:
            problems.append(
                Problem(
                    "property-type",
                    f"property[{index}] has no type",
                    "every property needs a type",
                    *where,
                )
            )
        elif "value" not in prop:
            problems.append(
                Problem(
                    "property-value",
                    f'property[{index}] of type "{kind}" has no value',
                    "add a value",
                    *where,
                )
            )
        elif kind in ("olm.gvk", "olm.gvk.required") and not (
            isinstance(prop["value"], dict)
            and all(isinstance(prop["value"].get(k), str) for k in ("group", "version", "kind"))
        ):
            problems.append(
                Problem(
                    "property-shape",
                    f'parse property[{index}] of type "{kind}": value must be {{group, version, kind}}',
                    "fix the property value",
                    *where,
                )
            )
        elif kind == "olm.package.required" and not (
            isinstance(prop["value"], dict) and isinstance(prop["value"].get("packageName"), str)
        ):
            problems.append(
                Problem(
                    "property-shape",
                    f'parse property[{index}] of type "{kind}": value must be {{packageName, versionRange}}',
                    "fix the property value",
                    *where,
                )
            )
        elif kind == "olm.bundle.object" and not (
            isinstance(prop["value"], dict) and isinstance(prop["value"].get("data"), str)
        ):
            problems.append(
                Problem(
                    "property-shape",
                    f"read bundle objects: property[{index}] must be {{data: <base64>}}",
                    "fix the property value",
                    *where,
                )
            )
    if not bundle.image and not bundle.props("olm.bundle.object"):
        problems.append(
            Problem(
                "bundle-image",
                "bundle image must be set",
                "set image, or inline the manifests as olm.bundle.object properties",
                *where,
            )
        )
    for label, image in [("image", bundle.image)] + [
        (f"relatedImages[{i}].image", str(r.get("image", "")))
        for i, r in enumerate(bundle.related_images)
    ]:
        if image and not _IMAGE.match(image):
            problems.append(
                Problem(
                    "image-reference",
                    f'{label}: invalid image pull spec "{image}"',
                    "use a reference like registry.example.com/org/name:tag",
                    *where,
                )
            )
    return problems
