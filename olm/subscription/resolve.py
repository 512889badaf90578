"""From the snapshot to the resolver's inputs and back to InstallPlan steps (OLM v0 §5.3).

What counts as installed:
- every non-copied CSV whose package is known (its `operatorframework.io/properties`
  annotation, or a Subscription that installed it), except one that another CSV of the
  namespace replaces: it is on its way out, and counting it would make it conflict with its own
  replacement. As in OLM, a CSV applied by hand without that annotation belongs to no package,
  even when a catalog has a bundle of its name: a Subscription installs beside it unless they
  provide the same API (a CSV of no package and no APIs is not counted at all);
- for a Subscription: its installedCSV (or currentCSV) when that CSV exists, moved along the
  `replaces` chain to the newest CSV of its package; when it has neither (its status was never
  written), the CSV of its package that one of its own InstallPlans installed, or else its
  startingCSV when that CSV of its package is there (the Subscription a plan made for a
  dependency it installed), moved along the chain the same way.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from olm.api import body
from olm.api.versionpolicy import ROLLBACK_ANNOTATION, VERSION_RANGE_ANNOTATION
from olm.catalogsource.source import BUNDLE_UNPACK_RULE
from olm.installplan.steps import Step, plan_bundle
from olm.resolution.catalogs import candidates
from olm.resolution.model import Candidate, Decision, Installed, Source, Wanted
from olm.resolution.resolver import Resolver
from olm.subscription.plans import csv_names, owned_by
from olm.subscription.snapshot import CatalogInScope, Snapshot, UnpackRequest

PROPERTIES_ANNOTATION = "operatorframework.io/properties"
BUNDLE_OBJECT = "olm.bundle.object"
UNPACK_FIX = (
    "Push a registry+v1 bundle image there (olm bundle push, opm, podman) or fix the bundle's "
    "image in the catalog; olm-py tries again with backoff (5 s, doubling up to 5 minutes)"
)
Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Resolution:
    decision: Decision
    installed: Mapping[str, str]  # subscription -> the CSV it has installed ("" if none)


def _spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def _annotated_properties(csv: Obj) -> list[dict[str, Any]] | None:
    """The CSV's properties annotation (set on CSVs OLM creates), None without a readable one."""
    text = body.annotations(csv).get(PROPERTIES_ANNOTATION)
    if text is None:
        return None
    try:
        properties = json.loads(text).get("properties") or []
    except (TypeError, ValueError, AttributeError):
        return None
    return [p for p in properties if isinstance(p, dict)] if isinstance(properties, list) else None


def annotated_package(csv: Obj) -> str:
    """The package named by the CSV's properties annotation (set on CSVs OLM creates)."""
    for prop in _annotated_properties(csv) or []:
        value = prop.get("value")
        if prop.get("type") == "olm.package" and isinstance(value, dict):
            return str(value.get("packageName") or "")
    return ""


def csv_properties(csv: Obj, package: str) -> tuple[dict[str, Any], ...]:
    """What a generic constraint's CEL rule sees of an installed CSV: its properties annotation,
    else (as OLM's inferProperties) its package and version and the APIs it provides."""
    annotated = _annotated_properties(csv)
    if annotated is not None:
        return tuple(annotated)
    version = str(_spec(csv).get("version", ""))
    found = [{"type": "olm.package", "value": {"packageName": package, "version": version}}]
    found += [
        {"type": "olm.gvk", "value": {"group": g, "version": v, "kind": k}}
        for g, v, k in _provides(csv)
    ]
    return tuple(found if package else found[1:])


def _replaced_by(csvs: Mapping[str, Obj]) -> dict[str, str]:
    """old CSV -> the one CSV that replaces it (ambiguous replacements are left out)."""
    found: dict[str, list[str]] = {}
    for name, csv in csvs.items():
        old = _spec(csv).get("replaces")
        if old and old != name and old in csvs:
            found.setdefault(str(old), []).append(name)
    return {old: new[0] for old, new in found.items() if len(new) == 1}


def _head(start: str, replaced_by: Mapping[str, str], same_package: set[str]) -> str:
    seen = {start}
    current = start
    while current in replaced_by and replaced_by[current] in same_package:
        current = replaced_by[current]
        if current in seen:  # a replace cycle: stay where we started
            return start
        seen.add(current)
    return current


def installed_csvs(
    snapshot: Snapshot,
    statuses: Mapping[str, Mapping[str, Any]],
    packages: Mapping[str, str],
) -> dict[str, str]:
    """The CSV each Subscription has installed (see the module docstring)."""
    csvs = snapshot.csvs
    replaced_by = _replaced_by(csvs)
    found: dict[str, str] = {}
    for subscription in snapshot.subscriptions:
        name = subscription["metadata"]["name"]
        status = statuses[name]
        package = str(_spec(subscription).get("name") or "")
        same = {c for c, p in packages.items() if p == package}
        start = next(
            (
                str(status[k])
                for k in ("installedCSV", "currentCSV")
                if status.get(k) and status[k] in csvs
            ),
            "",
        )
        if start:
            found[name] = _head(start, replaced_by, same | {start})
    claimed = set(found.values())
    for subscription in snapshot.subscriptions:
        name = subscription["metadata"]["name"]
        if name in found:
            continue
        uid = subscription["metadata"].get("uid", "")
        package = str(_spec(subscription).get("name") or "")
        planned = {
            csv
            for plan in snapshot.plans.values()
            if owned_by(plan, [uid])
            for csv in csv_names(plan)
        }
        mine = {c for c in csvs if c in planned and packages.get(c) == package and c not in claimed}
        starting = str(_spec(subscription).get("startingCSV") or "")
        if not mine and starting in csvs and packages.get(starting) == package:
            # Its startingCSV is there already (a dependency's Subscription, made by the plan
            # that installed that CSV): it is this Subscription's, as OLM finds it.
            mine = {starting} - claimed
        heads = [c for c in mine if replaced_by.get(c) not in mine]
        if len(heads) == 1:
            same = {c for c, p in packages.items() if p == package}
            found[name] = _head(heads[0], replaced_by, same | {heads[0]})
            claimed.add(found[name])
    return found


def _provides(csv: Obj) -> tuple[tuple[str, str, str], ...]:
    owned = (_spec(csv).get("customresourcedefinitions") or {}).get("owned") or []
    return tuple(
        (
            str(o.get("name", "")).split(".", 1)[-1],
            str(o.get("version", "")),
            str(o.get("kind", "")),
        )
        for o in owned
        if isinstance(o, dict)
    )


def sources_and_pool(
    snapshot: Snapshot,
) -> tuple[list[Source], list[Candidate]]:
    sources, pool = [], []
    for catalog in snapshot.catalogs:
        if catalog.loaded is None:
            continue
        source = Source(
            catalog.name,
            catalog.namespace,
            catalog.loaded.priority,
            own_namespace=catalog.namespace == snapshot.namespace,
        )
        sources.append(source)
        pool.extend(candidates(catalog.loaded.catalog, source))
    return sources, pool


def resolve(snapshot: Snapshot, statuses: Mapping[str, Mapping[str, Any]]) -> Resolution:
    """Run the resolver over the namespace, with each Subscription's status as given."""
    sources, pool = sources_and_pool(snapshot)
    bundle_package = {c.bundle: c.package for c in pool}
    by_installed = {
        str(statuses[s["metadata"]["name"]].get("installedCSV")): str(_spec(s).get("name") or "")
        for s in snapshot.subscriptions
        if statuses[s["metadata"]["name"]].get("installedCSV")
    }
    packages = {
        name: annotated_package(csv)
        or by_installed.get(name)
        or _planned_package(name, snapshot, bundle_package)
        for name, csv in snapshot.csvs.items()
    }
    installed_of = installed_csvs(snapshot, statuses, packages)
    replaced = set(_replaced_by(snapshot.csvs))
    installed = [
        Installed(
            name,
            packages[name],
            str(_spec(csv).get("version", "")),
            _provides(csv),
            csv_properties(csv, packages[name]),
        )
        for name, csv in snapshot.csvs.items()
        if (packages[name] or _provides(csv)) and name not in replaced
    ]
    wanted = [
        Wanted(
            s["metadata"]["name"],
            str(_spec(s).get("name") or ""),
            str(_spec(s).get("source") or ""),
            str(_spec(s).get("sourceNamespace") or ""),
            str(_spec(s).get("channel") or ""),
            str(_spec(s).get("startingCSV") or ""),
            installed_of.get(s["metadata"]["name"], ""),
            version_range_of(s),
            rollback_target(s),
        )
        for s in snapshot.subscriptions
    ]
    decision = Resolver(pool, installed, sources).resolve(wanted)
    return Resolution(decision, {w.name: w.installed_csv for w in wanted})


def version_range_of(subscription: Obj) -> str:
    """olm-py's version range annotation ("" without one): olm.api.versionpolicy."""
    annotations = body.annotations(subscription)
    return str(annotations.get(VERSION_RANGE_ANNOTATION) or "")


def rollback_target(subscription: Obj) -> str:
    """The CSV `olm rollback` asked to go back to ("" without one): olm.api.versionpolicy."""
    annotations = body.annotations(subscription)
    return str(annotations.get(ROLLBACK_ANNOTATION) or "").strip()


def _planned_package(name: str, snapshot: Snapshot, bundle_package: Mapping[str, str]) -> str:
    """The package of a CSV one of the namespace's InstallPlans installed (its Subscription's
    status may not say so yet), from the catalog bundle of that name; "" for any other CSV."""
    planned = any(name in csv_names(plan) for plan in snapshot.plans.values())
    return bundle_package.get(name, "") if planned else ""


def _catalog_of(snapshot: Snapshot, candidate: Candidate) -> CatalogInScope | None:
    return next(
        (
            c
            for c in snapshot.catalogs
            if (c.namespace, c.name) == (candidate.source.namespace, candidate.source.name)
        ),
        None,
    )


def unpack_request(snapshot: Snapshot, candidate: Candidate) -> UnpackRequest | None:
    """The unpack the chosen bundle needs before it can be planned: it is known by image only
    (no inline objects; pending, or failed and to be tried again), else None."""
    catalog = _catalog_of(snapshot, candidate)
    if catalog is None or catalog.loaded is None:
        return None
    package = catalog.loaded.catalog.packages.get(candidate.package)
    bundle = package.bundles.get(candidate.bundle) if package else None
    if bundle is None or not bundle.image or bundle.props(BUNDLE_OBJECT):
        return None
    return UnpackRequest(catalog.namespace, catalog.name, bundle.image)


def unpack_pending(snapshot: Snapshot, candidate: Candidate) -> str:
    """The Subscription's BundleUnpacking message while the chosen bundle's image is being
    unpacked (it has no objects yet and no failure), else ""."""
    request = unpack_request(snapshot, candidate)
    if request is None or unpack_failure(snapshot, candidate):
        return ""
    return (
        f"unpacking bundle image {request.image} of {candidate.bundle} "
        f"(catalog {candidate.source.key})"
    )


def unpack_failure(snapshot: Snapshot, candidate: Candidate) -> str:
    """Why the chosen bundle's image could not be unpacked when its catalog was read (the
    pull error sentence and the fix), or "" when it was (or the bundle comes inline)."""
    catalog = _catalog_of(snapshot, candidate)
    if catalog is None or catalog.loaded is None:
        return ""
    package = catalog.loaded.catalog.packages.get(candidate.package)
    bundle = package.bundles.get(candidate.bundle) if package else None
    if bundle is None or bundle.props(BUNDLE_OBJECT):
        return ""
    location = f"{candidate.package}/{candidate.bundle}"
    problem = next(
        (
            p
            for p in catalog.loaded.catalog.problems
            if p.rule == BUNDLE_UNPACK_RULE and p.location == location
        ),
        None,
    )
    if problem is None:
        return ""
    return f"{problem.message.rstrip('.')} (catalog {candidate.source.key}). {UNPACK_FIX}"


def steps_for(
    snapshot: Snapshot, candidate: Candidate, replaces: str = ""
) -> tuple[list[Step], str]:
    """The InstallPlan steps of one chosen bundle, or why there are none (for a bundle image
    that could not be unpacked: `unpack_failure`)."""
    catalog = _catalog_of(snapshot, candidate)
    where = f"catalog {candidate.source.key}"
    if catalog is None or catalog.loaded is None:
        return [], f"{where} is not loaded"
    package = catalog.loaded.catalog.packages.get(candidate.package)
    bundle = package.bundles.get(candidate.bundle) if package else None
    if bundle is None:
        return [], f"{where} has no bundle {candidate.bundle}"
    unpack = unpack_failure(snapshot, candidate)
    if unpack:
        return [], unpack
    try:
        steps = plan_bundle(
            bundle.objects,
            snapshot.namespace,
            (candidate.source.name, candidate.source.namespace),
            replaces or candidate.replaces,  # OLM: the installed CSV, else the channel entry's
            properties=bundle.properties,
        )
    except ValueError as exc:
        return [], (
            f"bundle {candidate.bundle} of {where} cannot be installed: {exc}; the catalog "
            "must carry the bundle's objects (render it with its manifests)"
        )
    return steps, ""


def catalogs_known(catalogs: Sequence[CatalogInScope]) -> bool:
    return all(c.known for c in catalogs)
