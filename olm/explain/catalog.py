"""Why a CatalogSource is not serving (or that it is), and why a Subscription's catalog is
missing (OLM v0 §1.4, §5.6).

A CatalogSource serves when `status.connectionState.lastObservedState` is READY; olm-py writes
TRANSIENT_FAILURE with a `status.message` that names the address, image or ConfigMap and what to
check (`olm.catalogsource.failures`). The fix command edits the field the spec reads from
(`olm.catalogsource.source.what_to_read`): `spec.address`, `spec.image` or `spec.configMap`.

A missing catalog is found by name: the Subscription's `spec.source` in `spec.sourceNamespace`
is not among the CatalogSources read. The catalogs that do serve the package (PackageManifests,
when the package server answers), or else the catalogs in scope, are offered as the new source.

Invariant: pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from olm.api.body import name, namespace
from olm.api.catalogsource import CatalogSourceReason, ConnectionState, SourceType
from olm.api.kinds import KINDS, Kind
from olm.catalogsource.source import (
    ReadConfigMap,
    ReadImage,
    ReadRegistry,
    SpecInvalid,
    what_to_read,
)
from olm.explain import commands
from olm.explain.model import (
    Explanation,
    Fix,
    Link,
    Obj,
    Snapshot,
    healthy,
    in_progress,
    problem,
    spec,
    status,
)

KIND = Kind.CATALOG_SOURCE.value


def _state(source: Obj) -> str:
    return str((status(source).get("connectionState") or {}).get("lastObservedState") or "")


def explain_catalog(snapshot: Snapshot, source: Obj) -> Explanation:
    source_name, source_ns = name(source), namespace(source)
    state = _state(source)
    message = str(status(source).get("message") or "")
    reason = str(status(source).get("reason") or "")
    link = Link(KIND, source_name, source_ns, state or "no state", message or reason)
    if not status(source):
        return in_progress(
            link,
            f"CatalogSource {source_ns}/{source_name} has no status yet: olm-py has not read it",
            Fix("make sure olm-py is running (olm run, or its Deployment)"),
        )
    if state == ConnectionState.READY and not reason:
        return healthy(
            Link(KIND, source_name, source_ns, state, "serves its catalog"),
            f"CatalogSource {source_ns}/{source_name} is READY",
        )
    cause = (
        message
        or snapshot.last_warning(KIND, source_name)
        or (
            f"CatalogSource {source_ns}/{source_name} is {state or 'not READY'}"
            + (f" ({reason})" if reason else "")
        )
    )
    return problem(link, cause, *_fixes(source))


def _fixes(source: Obj) -> list[Fix]:
    source_name, source_ns = name(source), namespace(source)
    if status(source).get("reason") == CatalogSourceReason.INVALID_INTERVAL_ERROR:
        return [
            Fix(
                "set spec.updateStrategy.registryPoll.interval to a Go duration",
                commands.merge_patch(
                    Kind.CATALOG_SOURCE,
                    source_name,
                    source_ns,
                    {"spec": {"updateStrategy": {"registryPoll": {"interval": "15m"}}}},
                ),
            )
        ]
    read = what_to_read(source)
    edit = Fix(
        "fix the CatalogSource's spec", commands.edit(Kind.CATALOG_SOURCE, source_name, source_ns)
    )
    if isinstance(read, ReadRegistry):
        return [
            Fix(
                f"start the registry server at {read.address} (olm catalog serve, opm serve), "
                "or point spec.address at the one that runs",
                commands.merge_patch(
                    Kind.CATALOG_SOURCE,
                    source_name,
                    source_ns,
                    {"spec": {"address": "<host:port>"}},
                ),
            )
        ]
    if isinstance(read, ReadImage):
        return [
            Fix(
                f"push the catalog image {read.image}, or point spec.image at one that exists",
                commands.merge_patch(
                    Kind.CATALOG_SOURCE, source_name, source_ns, {"spec": {"image": "<image>"}}
                ),
            )
        ]
    if isinstance(read, ReadConfigMap):
        return [
            Fix(
                f"create ConfigMap {read.name} in namespace {source_ns} with the catalog, or fix "
                "spec.configMap",
                commands.get("configmap", source_ns, read.name),
            ),
            edit,
        ]
    assert isinstance(read, SpecInvalid)
    return [edit]


def serving(snapshot: Snapshot, package: str) -> list[tuple[str, str]]:
    """(namespace, name) of the catalogs whose PackageManifests list `package`."""
    found = set()
    for manifest in snapshot.package_manifests:
        manifest_status = status(manifest)
        if manifest_status.get("packageName") == package or name(manifest) == package:
            source = str(manifest_status.get("catalogSource") or "")
            source_ns = str(manifest_status.get("catalogSourceNamespace") or namespace(manifest))
            if source:
                found.add((source_ns, source))
    return sorted(found)


def in_scope(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(namespace, name) of the catalogs a Subscription in the namespace may use."""
    return sorted(
        (namespace(c), name(c))
        for c in snapshot.catalog_sources
        if namespace(c) in (snapshot.namespace, snapshot.global_namespace)
    )


def missing_catalog(snapshot: Snapshot, subscription: Obj) -> Explanation:
    """The Subscription's catalog does not exist: point it at one that serves its package."""
    sub_spec = spec(subscription)
    source, source_ns = (
        str(sub_spec.get("source") or ""),
        str(sub_spec.get("sourceNamespace") or ""),
    )
    package = str(sub_spec.get("name") or "")
    link = Link(KIND, source, source_ns, "missing", "does not exist")
    cause = (
        f"CatalogSource {source} does not exist in namespace {source_ns}: the Subscription "
        f"cannot find package {package} anywhere"
    )
    offers = serving(snapshot, package)
    scoped = in_scope(snapshot)
    candidates: Sequence[tuple[str, str]] = [c for c in offers if c in scoped] or (
        scoped if not snapshot.package_manifests else []
    )
    fixes = []
    sub_name, sub_ns = name(subscription), namespace(subscription)
    for candidate_ns, candidate in candidates[:3]:
        said = (
            "serves" if (candidate_ns, candidate) in offers else "is in scope; check that it serves"
        )
        fixes.append(
            Fix(
                f"point the Subscription at CatalogSource {candidate_ns}/{candidate}, which {said} "
                f"package {package}",
                commands.merge_patch(
                    Kind.SUBSCRIPTION,
                    sub_name,
                    sub_ns,
                    {"spec": {"source": candidate, "sourceNamespace": candidate_ns}},
                ),
            )
        )
    fixes.append(
        Fix(
            f"or create CatalogSource {source} in namespace {source_ns} (with your catalog's "
            "image or address)",
            commands.apply_json(
                {
                    "apiVersion": KINDS[Kind.CATALOG_SOURCE].api_version,
                    "kind": KIND,
                    "metadata": {"name": source},
                    "spec": {"sourceType": SourceType.GRPC.value, "image": "<catalog-image>"},
                },
                source_ns,
            ),
        )
    )
    return problem(link, cause, *fixes)
