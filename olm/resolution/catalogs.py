"""From the catalog model to resolver candidates: one per (channel, bundle)."""

from __future__ import annotations

from typing import Any

from olm.catalog.documents import HIDDEN_PROPERTIES
from olm.catalog.graph import entries_in_order
from olm.catalog.model import Catalog
from olm.resolution.constraints import CONSTRAINT, predicates
from olm.resolution.model import GVK, Candidate, Source


def _gvk(value: Any) -> GVK | None:
    if not isinstance(value, dict):
        return None
    return (str(value.get("group", "")), str(value.get("version", "")), str(value.get("kind", "")))


def candidates(catalog: Catalog, source: Source) -> list[Candidate]:
    found = []
    for package in catalog.packages.values():
        for channel in package.channels.values():
            order = {name: index for index, name in enumerate(entries_in_order(channel))}
            skipped = {name for e in channel.entries for name in e.skips}
            for entry in channel.entries:
                bundle = package.bundles.get(entry.name)
                if bundle is None:
                    continue
                provides = tuple(g for g in (_gvk(v) for v in bundle.props("olm.gvk")) if g)
                requires = tuple(
                    g for g in (_gvk(v) for v in bundle.props("olm.gvk.required")) if g
                )
                packages = tuple(
                    (str(v.get("packageName", "")), str(v.get("versionRange", "")))
                    for v in bundle.props("olm.package.required")
                    if isinstance(v, dict)
                )
                constraints, error = predicates(bundle.props(CONSTRAINT))
                found.append(
                    Candidate(
                        bundle=bundle.name,
                        package=package.name,
                        channel=channel.name,
                        source=source,
                        version=bundle.version,
                        replaces=entry.replaces,
                        skips=tuple(entry.skips),
                        skip_range=entry.skip_range,
                        provides=provides,
                        requires_gvks=requires,
                        requires_packages=packages,
                        default_channel=channel.name == package.default_channel,
                        position=order.get(entry.name, len(order)),
                        skipped=entry.name in skipped,
                        constraints=constraints,
                        constraint_error=error,
                        properties=tuple(
                            p
                            for p in bundle.properties
                            if isinstance(p, dict) and p.get("type") not in HIDDEN_PROPERTIES
                        ),
                    )
                )
    return found
