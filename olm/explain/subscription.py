"""Why a Subscription has not installed (or upgraded) its operator (OLM v0 §5), following what
it points at, in this order:

1. its catalog (`spec.source` in `spec.sourceNamespace`): missing, or not serving;
2. resolution: `ResolutionFailed` (the resolver's message names the cause and the spec field
   to fix: spec.name, spec.channel, spec.startingCSV, a dependency no catalog in scope
   provides, an installed CSV nobody subscribes to), `BundleUnpackFailed`, `BundleUnpacking`;
3. its InstallPlan (`status.installPlanRef`): gone, waiting for approval, installing, failed
   (`olm.explain.installplan`);
4. its CSV (`status.currentCSV`, else `status.installedCSV`): `olm.explain.csv`.
Healthy: AtLatestKnown with the CSV Succeeded.

The resolver's messages are olm-py's own sentences; the patterns below read the spec field and
the API or CSV they name, to build the command. A message they do not match is still shown as
the cause, with `kubectl edit` as the fix.

Invariant: pure.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

from olm.api.body import name, namespace
from olm.api.catalogsource import ConnectionState, SourceType
from olm.api.installplan import InstallPlanPhase
from olm.api.kinds import KINDS, Kind
from olm.api.subscription import SubscriptionConditionType, SubscriptionReason, SubscriptionState
from olm.api.versionpolicy import OlmPyConditionType
from olm.explain import commands
from olm.explain.catalog import explain_catalog, missing_catalog
from olm.explain.csv import explain_csv
from olm.explain.installplan import explain_plan
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
    true_condition,
)
from olm.subscription.plans import phase, ref_name

KIND = Kind.SUBSCRIPTION.value
Types = SubscriptionConditionType
# What the resolver's messages name (olm.resolution.resolver).
FIX_FIELD = re.compile(r"Fix (spec\.[A-Za-z]+)")
FIX_WORDS = re.compile(r"Fix: (.+?)\.?$")
REQUIRES = re.compile(r"requires (API (?P<api>[^\s,]+)|package \"(?P<package>[^\"]+)\")")
INSTALLED_HERE = re.compile(
    r"ClusterServiceVersion (?P<csv>\S+)(?: \(package [^)]*\))? is already installed here"
)


OLM_PY_CONDITIONS = frozenset(c.value for c in OlmPyConditionType)


def explain_subscription(snapshot: Snapshot, subscription: Obj) -> Explanation:
    """The chain from the Subscription, with what olm-py's own annotations say on it (a
    version range holding it, a rollback, an auto-approve value that is not a policy)."""
    found = _explain(snapshot, subscription)
    said = tuple(
        f"{c['type']} ({c.get('reason', '')}): {c.get('message', '')}"
        for c in status(subscription).get("conditions") or []
        if c.get("type") in OLM_PY_CONDITIONS and c.get("message")
    )
    return dataclasses.replace(found, notes=(*found.notes, *said)) if said else found


def _explain(snapshot: Snapshot, subscription: Obj) -> Explanation:
    sub_name, sub_ns = name(subscription), namespace(subscription)
    sub_status = status(subscription)
    state = str(sub_status.get("state") or "")
    link = Link(KIND, sub_name, sub_ns, state or "no state", "")
    if not sub_status:
        return in_progress(
            link,
            f"Subscription {sub_name} has no status yet: olm-py has not resolved it",
            Fix("make sure olm-py is running (olm run, or its Deployment)"),
        )
    sub_spec = spec(subscription)
    source, source_ns = (
        str(sub_spec.get("source") or ""),
        str(sub_spec.get("sourceNamespace") or ""),
    )
    catalog = snapshot.catalog(source, source_ns)
    if catalog is None:
        return missing_catalog(snapshot, subscription).after(
            _says(link, f"its catalog {source_ns}/{source} does not exist")
        )
    catalog_state = (status(catalog).get("connectionState") or {}).get("lastObservedState")
    if catalog_state != ConnectionState.READY and not ref_name(sub_status):
        return explain_catalog(snapshot, catalog).after(
            _says(link, f"its catalog {source_ns}/{source} is not serving")
        )
    failed = true_condition(subscription, Types.RESOLUTION_FAILED)
    if failed is not None:
        return _resolution_failed(snapshot, subscription, failed, link)
    unpack_failed = true_condition(subscription, Types.BUNDLE_UNPACK_FAILED)
    if unpack_failed is not None:
        message = str(unpack_failed.get("message") or "")
        fixes = [Fix("fix the catalog or the bundle image it names; olm-py tries again by itself")]
        if unpack_failed.get("reason") == SubscriptionReason.ENSURE_INSTALL_PLAN_FAILED:
            fixes = [
                Fix("fix what the API server refused (quota, admission, RBAC); olm-py tries again")
            ]
        return problem(_says(link, str(unpack_failed.get("reason") or "")), message, *fixes)
    unpacking = true_condition(subscription, Types.BUNDLE_UNPACKING)
    if unpacking is not None:
        return in_progress(
            _says(link, "its bundle is being unpacked"),
            str(unpacking.get("message") or "unpacking its bundle"),
        )
    reference = ref_name(sub_status)
    plan = snapshot.plan(reference) if reference else None
    if reference and plan is None:
        missing = true_condition(subscription, Types.INSTALL_PLAN_MISSING)
        return in_progress(
            _says(link, f"refers to InstallPlan {reference}, which is gone"),
            str(
                (missing or {}).get("message")
                or f"InstallPlan {reference} is gone; olm-py resolves again"
            ),
        )
    if plan is not None and phase(plan) != InstallPlanPhase.COMPLETE:
        return explain_plan(snapshot, plan).after(_says(link, f"waits on InstallPlan {reference}"))
    current = str(sub_status.get("currentCSV") or sub_status.get("installedCSV") or "")
    csv = snapshot.csv(current, sub_ns) if current else None
    if csv is not None:
        following = explain_csv(snapshot, csv)
        if not following.healthy:
            return following.after(_says(link, f"installed CSV {current}"))
        if state == SubscriptionState.AT_LATEST_KNOWN:
            return healthy(
                _says(link, f"{current} Succeeded"),
                f"Subscription {sub_name} is AtLatestKnown: {current} is installed and Succeeded",
            )
        return in_progress(
            _says(link, f"{current} Succeeded"),
            f"Subscription {sub_name} is {state}: olm-py is updating its status",
        )
    if current:
        return in_progress(
            _says(link, f"wants CSV {current}, not created yet"),
            f"CSV {current} is not in namespace {sub_ns} yet: its InstallPlan creates it",
        )
    return in_progress(
        _says(link, "not resolved yet"), f"Subscription {sub_name} is not resolved yet"
    )


def _says(link: Link, says: str) -> Link:
    return Link(link.kind, link.name, link.namespace, link.state, says)


def _resolution_failed(
    snapshot: Snapshot, subscription: Obj, failed: Mapping[str, object], link: Link
) -> Explanation:
    sub_name, sub_ns = name(subscription), namespace(subscription)
    message = str(failed.get("message") or "")
    reason = str(failed.get("reason") or "")
    link = _says(link, f"cannot be resolved ({Types.RESOLUTION_FAILED.value}: {reason})")
    fixes: list[Fix] = []
    words = FIX_WORDS.search(message)
    field = FIX_FIELD.search(message)
    requires = REQUIRES.search(message)
    installed = INSTALLED_HERE.search(message)
    if requires is not None:
        what = f"API {requires['api']}" if requires["api"] else f"package {requires['package']}"
        fixes += _providers(snapshot, subscription, requires["api"] or "")
        fixes.append(
            Fix(
                f"{'or ' if fixes else ''}add a CatalogSource (in namespace {sub_ns} or "
                f"{snapshot.global_namespace}) that serves an operator providing {what}",
                commands.apply_json(
                    {
                        "apiVersion": KINDS[Kind.CATALOG_SOURCE].api_version,
                        "kind": Kind.CATALOG_SOURCE.value,
                        "metadata": {"name": "<name>"},
                        "spec": {"sourceType": SourceType.GRPC.value, "image": "<catalog-image>"},
                    },
                    sub_ns,
                ),
            )
        )
        fixes.append(
            Fix(
                "or subscribe to a version that does not need it",
                commands.merge_patch(
                    Kind.SUBSCRIPTION, sub_name, sub_ns, {"spec": {"startingCSV": "<csv>"}}
                ),
            )
        )
    elif installed is not None:
        csv = installed["csv"]
        fixes.append(
            Fix(
                f"delete the CSV {csv} nobody subscribes to (its CRDs and operands stay)",
                commands.delete(Kind.CLUSTER_SERVICE_VERSION, csv, sub_ns),
            )
        )
        fixes.append(
            Fix(
                "or make this Subscription adopt it",
                commands.merge_patch(
                    Kind.SUBSCRIPTION, sub_name, sub_ns, {"spec": {"startingCSV": csv}}
                ),
            )
        )
    elif field is not None:
        fixes += _field_fixes(snapshot, subscription, field[1])
    if not fixes:
        fixes.append(
            Fix(
                words[1] if words else "fix the Subscription's spec",
                commands.edit(Kind.SUBSCRIPTION, sub_name, sub_ns),
            )
        )
    cause = message or f"Subscription {sub_name} cannot be resolved ({reason})"
    return problem(link, cause, *fixes)


def _field_fixes(snapshot: Snapshot, subscription: Obj, field: str) -> list[Fix]:
    sub_name, sub_ns = name(subscription), namespace(subscription)
    sub_spec = spec(subscription)
    package = str(sub_spec.get("name") or "")
    manifest = next(
        (
            m
            for m in snapshot.package_manifests
            if status(m).get("packageName") == package
            and status(m).get("catalogSource") == sub_spec.get("source")
        ),
        None,
    )
    if field == "spec.startingCSV":
        return [
            Fix(
                "drop spec.startingCSV to install the channel's head (or name a CSV of the channel)",
                commands.json_patch(
                    Kind.SUBSCRIPTION,
                    sub_name,
                    sub_ns,
                    [{"op": "remove", "path": "/spec/startingCSV"}],
                ),
            )
        ]
    if field == "spec.channel":
        channel = str(status(manifest).get("defaultChannel") or "") if manifest is not None else ""
        return [
            Fix(
                f"set spec.channel to a channel of package {package}"
                + (f" (its default is {channel})" if channel else ""),
                commands.merge_patch(
                    Kind.SUBSCRIPTION,
                    sub_name,
                    sub_ns,
                    {"spec": {"channel": channel or "<channel>"}},
                ),
            )
        ]
    if field == "spec.name":
        return [
            Fix(
                "see the packages the catalogs in scope serve",
                commands.get("packagemanifests", sub_ns),
            ),
            Fix(
                "set spec.name to one of them",
                commands.merge_patch(
                    Kind.SUBSCRIPTION, sub_name, sub_ns, {"spec": {"name": "<package>"}}
                ),
            ),
        ]
    return [Fix(f"fix {field}", commands.edit(Kind.SUBSCRIPTION, sub_name, sub_ns))]


def _providers(snapshot: Snapshot, subscription: Obj, api: str) -> list[Fix]:
    """Packages whose channel head owns `api` (Kind.version.group), from PackageManifests."""
    kind, _, rest = api.partition(".")
    version, _, group = rest.partition(".")
    if not group:
        return []
    fixes = []
    for manifest in snapshot.package_manifests:
        manifest_status = status(manifest)
        for channel in manifest_status.get("channels") or []:
            owned = (
                (channel.get("currentCSVDesc") or {}).get("customresourcedefinitions") or {}
            ).get("owned") or []
            if any(
                o.get("kind") == kind
                and o.get("version") == version
                and str(o.get("name") or "").endswith(f".{group}")
                for o in owned
                if isinstance(o, Mapping)
            ):
                source = str(manifest_status.get("catalogSource") or "")
                source_ns = str(manifest_status.get("catalogSourceNamespace") or "")
                fixes.append(
                    Fix(
                        f"package {manifest_status.get('packageName')} of CatalogSource {source_ns}/{source} "
                        f"provides {api}; the resolver only uses catalogs in namespace "
                        f"{namespace(subscription)} and {snapshot.global_namespace}: add one there that serves it",
                        commands.get("catalogsource", source_ns, source, "-o", "yaml"),
                    )
                )
                break
    return fixes[:2]
