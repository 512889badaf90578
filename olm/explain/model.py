"""What `olm explain` reasons over and what it answers: a snapshot of the cluster's objects in,
a chain of links from the object asked about to the cause out.

- `Snapshot`: plain dicts as the API server returns them, read once (`olm.explain.read`): the
  namespace's Subscriptions, InstallPlans, CSVs and Events; OperatorGroups, CRDs and CSVs of
  every namespace (a CRD's owner or a conflicting group may live anywhere); the CatalogSources
  of the namespace and of the global catalog namespace; PackageManifests when the package
  server answers. What could not be read is named in `unreadable` and said in the output.
- `Explanation`: `links` (the object asked about first, then each object it leads to), a
  `verdict`, the `cause` in one sentence and `fixes` (what to do, and the command when there is
  one). A parent explainer puts its own link in front of a child's explanation (`after`).

Invariants: pure; objects are never changed; every explanation has at least one link, and a
healthy one has no fixes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from olm.api.body import name, namespace
from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.api.conditions import find_condition
from olm.api.kinds import Kind

Obj = Mapping[str, Any]
NAMESPACE_KIND = "Namespace"
CRD_KIND = "CustomResourceDefinition"
EVENT_WARNING = "Warning"


class Verdict(StrEnum):
    """How the chain ends: the exit status of `olm explain` is 0 only for HEALTHY."""

    HEALTHY = "healthy"
    IN_PROGRESS = "in-progress"  # olm-py is still at work; nothing to fix yet
    PROBLEM = "problem"


@dataclass(frozen=True)
class Link:
    """One object on the chain: what it is, the state it shows, and what it says about why."""

    kind: str
    name: str
    namespace: str  # "" for a cluster-scoped object
    state: str  # as the object shows it: "UpgradePending", "Pending/RequirementsNotMet", ...
    says: str  # a sentence: why it is in that state, or what it waits on


@dataclass(frozen=True)
class Fix:
    what: str  # what to do, in words
    command: str = ""  # the command that does it, when there is one


@dataclass(frozen=True)
class Explanation:
    links: tuple[Link, ...]
    verdict: Verdict
    cause: str
    fixes: tuple[Fix, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read, or what else a reader should know

    def after(self, link: Link) -> Explanation:
        """This explanation, reached from `link`."""
        return dataclasses.replace(self, links=(link, *self.links))

    @property
    def healthy(self) -> bool:
        return self.verdict is Verdict.HEALTHY


def healthy(link: Link, cause: str) -> Explanation:
    return Explanation((link,), Verdict.HEALTHY, cause)


def problem(link: Link, cause: str, *fixes: Fix) -> Explanation:
    return Explanation((link,), Verdict.PROBLEM, cause, tuple(fixes))


def in_progress(link: Link, cause: str, *fixes: Fix) -> Explanation:
    return Explanation((link,), Verdict.IN_PROGRESS, cause, tuple(fixes))


def status(obj: Obj) -> Mapping[str, Any]:
    return obj.get("status") or {}


def spec(obj: Obj) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def condition(obj: Obj, kind: str) -> Mapping[str, Any] | None:
    """The status condition of type `kind`, if any."""
    return find_condition(status(obj).get("conditions") or [], kind)


def true_condition(obj: Obj, kind: str) -> Mapping[str, Any] | None:
    found = condition(obj, kind)
    return found if found is not None and found.get("status") == "True" else None


def by_name(objects: Iterable[Obj], wanted: str, in_namespace: str | None = None) -> Obj | None:
    return next(
        (
            o
            for o in objects
            if name(o) == wanted and (in_namespace is None or namespace(o) == in_namespace)
        ),
        None,
    )


@dataclass(frozen=True)
class Snapshot:
    """The cluster's objects `olm explain` reads (see the module docstring)."""

    namespace: str
    subscriptions: Sequence[Obj] = ()
    install_plans: Sequence[Obj] = ()
    csvs: Sequence[Obj] = ()
    operator_groups: Sequence[Obj] = ()
    catalog_sources: Sequence[Obj] = ()
    crds: Sequence[Obj] = ()
    cluster_csvs: Sequence[Obj] | None = None  # None: CSVs of other namespaces unreadable
    events: Sequence[Obj] = ()
    package_manifests: Sequence[Obj] = ()
    namespaces: frozenset[str] = frozenset()  # the names of the namespaces that exist
    global_namespace: str = GLOBAL_CATALOG_NAMESPACE
    unreadable: tuple[str, ...] = ()

    def groups_in(self, group_namespace: str) -> list[Obj]:
        return sorted(
            (g for g in self.operator_groups if namespace(g) == group_namespace), key=name
        )

    def all_csvs(self) -> list[Obj]:
        """Every CSV known: of every namespace when readable, else the namespace's."""
        if self.cluster_csvs is None:
            return list(self.csvs)
        return list(self.cluster_csvs)

    def csv(self, csv_name: str, csv_namespace: str) -> Obj | None:
        found = (
            by_name(self.csvs, csv_name, csv_namespace) if csv_namespace == self.namespace else None
        )
        return found or by_name(self.cluster_csvs or (), csv_name, csv_namespace)

    def plan(self, plan_name: str) -> Obj | None:
        return by_name(self.install_plans, plan_name)

    def catalog(self, catalog_name: str, catalog_namespace: str) -> Obj | None:
        return by_name(self.catalog_sources, catalog_name, catalog_namespace)

    def crd(self, crd_name: str) -> Obj | None:
        return by_name(self.crds, crd_name)

    def last_warning(self, kind: Kind | str, obj_name: str) -> str:
        """The message of the newest Warning Event on the object, or ""."""
        warnings = [
            e
            for e in self.events
            if e.get("type") == EVENT_WARNING
            and (e.get("involvedObject") or {}).get("kind") == str(kind)
            and (e.get("involvedObject") or {}).get("name") == obj_name
        ]
        if not warnings:
            return ""
        newest = max(
            warnings, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime") or "")
        )
        return str(newest.get("message") or "")


@dataclass(frozen=True)
class Seen:
    """The objects already on the chain (kind, namespace, name), so two objects that point at
    each other (a CSV and the one it replaces) end the chain instead of looping."""

    keys: frozenset[tuple[str, str, str]] = field(default_factory=frozenset)

    def add(self, kind: str, obj: Obj) -> Seen:
        return Seen(self.keys | {(kind, namespace(obj), name(obj))})

    def __contains__(self, key: object) -> bool:
        return key in self.keys


NOTHING_SEEN = Seen()
