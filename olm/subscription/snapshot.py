"""What one namespace's resolution looks at (OLM v0 §5.2), as plain data, and what it decides.

`Snapshot` is read from the cache by the controller; `Plan` is carried out by it. Neither holds
a client: the decision in between (`olm.subscription.decide`) is a pure function.

Invariants:
- The snapshot's dicts are the cached objects themselves and are never modified.
- A catalog's health is one of three: loaded (healthy), failed (its CatalogSource status names
  a registry or spec error), or not known yet (no content and no error: not fetched since
  olm-py started). While any catalog in scope is not known yet, nothing is resolved and no
  catalog health is written, so a restart does not flap Subscriptions to unhealthy.
- A catalog `--trusted-catalogs` rules out (olm.catalogsource.trust) is failed from the start,
  whatever its status or the cache says: it is never resolved from, and never waited for.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE, CatalogSourceReason
from olm.api.kinds import KINDS, Kind
from olm.catalog.model import Catalog
from olm.catalogsource.trust import CatalogTrust, refusal

CATALOG_SOURCE = KINDS[Kind.CATALOG_SOURCE]
# The CatalogSource status reasons that mean "this catalog cannot be read".
FAILED_CATALOG_REASONS = frozenset(
    {
        CatalogSourceReason.SPEC_INVALID_ERROR,
        CatalogSourceReason.CONFIGMAP_ERROR,
        CatalogSourceReason.REGISTRY_SERVER_ERROR,
    }
)


@dataclass(frozen=True)
class LoadedCatalog:
    """A catalog's content as the CatalogSource controller last read it."""

    catalog: Catalog
    priority: int = 0


@dataclass(frozen=True)
class CatalogInScope:
    """One CatalogSource the namespace may resolve from, with its health."""

    namespace: str
    name: str
    uid: str
    loaded: LoadedCatalog | None
    failed: bool  # its status names an error (or it is untrusted)
    untrusted: str = ""  # why --trusted-catalogs rules it out (olm.catalogsource.trust)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def known(self) -> bool:
        return self.loaded is not None or self.failed

    @property
    def healthy(self) -> bool:
        return self.loaded is not None

    def reference(self) -> dict[str, str]:
        """OLM's catalogSourceRef (an ObjectReference, without the ever-moving
        resourceVersion)."""
        return {
            "apiVersion": CATALOG_SOURCE.api_version,
            "kind": CATALOG_SOURCE.kind.value,
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
        }


@dataclass(frozen=True)
class Snapshot:
    """Everything the decision for one namespace looks at."""

    namespace: str
    namespace_object: Mapping[str, Any] | None  # None: not in the cache (gone)
    subscriptions: tuple[Mapping[str, Any], ...]  # sorted by name
    csvs: Mapping[str, Mapping[str, Any]]  # the namespace's own (non-copied) CSVs, by name
    plans: Mapping[str, Mapping[str, Any]]  # InstallPlans, by name
    catalogs: tuple[CatalogInScope, ...]  # sorted by (namespace, name)
    now: datetime.datetime
    # The namespace's OperatorGroups: only their annotations are read here (olm-py's opt-ins).
    operator_groups: tuple[Mapping[str, Any], ...] = ()
    # CRDs by name, read only for `olm rollback`'s safety check (empty unless one is asked).
    crds: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @property
    def terminating(self) -> bool:
        """Nothing may be created here: the namespace is going away (or already gone)."""
        space = self.namespace_object
        if space is None:
            return True
        return bool(
            body.meta(space).get("deletionTimestamp")
            or (space.get("status") or {}).get("phase") == "Terminating"
        )


def catalogs_in_scope(
    namespace: str,
    sources: Sequence[Mapping[str, Any]],
    loaded: Mapping[tuple[str, str], LoadedCatalog],
    global_namespace: str = GLOBAL_CATALOG_NAMESPACE,
    trust: CatalogTrust | None = None,
) -> tuple[CatalogInScope, ...]:
    """The CatalogSources of `namespace` and of the global namespace, with their health.
    A CatalogSource being deleted is out of scope; loaded content without a CatalogSource
    object (about to be dropped) is ignored; so is the content of one `trust` rules out."""
    found = []
    for source in sources:
        meta = body.meta(source)
        space, name = meta.get("namespace") or "", meta.get("name") or ""
        if space not in (namespace, global_namespace) or meta.get("deletionTimestamp"):
            continue
        reason = (source.get("status") or {}).get("reason") or ""
        untrusted = refusal(trust, source) or ""
        content = None if untrusted else loaded.get((space, name))
        found.append(
            CatalogInScope(
                namespace=space,
                name=name,
                uid=str(meta.get("uid") or ""),
                loaded=content,
                failed=bool(untrusted) or (content is None and reason in FAILED_CATALOG_REASONS),
                untrusted=untrusted,
            )
        )
    return tuple(sorted(found, key=lambda c: (c.namespace, c.name)))


# ----- the plan ------------------------------------------------------------------------------


@dataclass(frozen=True)
class StatusWrite:
    """A Subscription's new status: `patch` is a merge patch (None removes a key), `status`
    the whole status after it (for the cache)."""

    name: str
    patch: dict[str, Any]
    status: dict[str, Any]


@dataclass(frozen=True)
class PlanStatusWrite:
    """Status for an InstallPlan whose status olm-py never wrote (created, then olm-py
    stopped): its steps (adopted) or why it will not run (superseded). `resource_version` is
    the version decided on, so a write over a newer status is refused."""

    name: str
    status: dict[str, Any]
    resource_version: str


@dataclass(frozen=True)
class NewInstallPlan:
    """An InstallPlan to create, and the status to write right after."""

    body: dict[str, Any]
    status: dict[str, Any]
    # Recorded on the plan once it exists (olm-py's auto-approval says who approved it).
    events: tuple[NamespaceEvent, ...] = ()

    @property
    def csv_names(self) -> list[str]:
        return list(self.body["spec"]["clusterServiceVersionNames"])


@dataclass(frozen=True)
class NamespaceEvent:
    type: str
    reason: str
    message: str


@dataclass(frozen=True)
class UnpackRequest:
    """Unpack the bundle image `image` of the catalog (namespace, name): a resolution chose a
    bundle known by image only (or one whose unpack failed, to try again after its backoff)."""

    namespace: str
    name: str
    image: str


@dataclass
class Plan:
    """What to do for one namespace. Empty means nothing changes (`unpacks` are requests to
    the catalogs' unpacker, not writes: they do not count).

    When `create` is set, nothing else is: the executor creates the plan, and the next
    decision (over a cache that holds it) points the Subscriptions at it."""

    create: NewInstallPlan | None = None
    plan_statuses: list[PlanStatusWrite] = field(default_factory=list)
    statuses: list[StatusWrite] = field(default_factory=list)
    events: list[NamespaceEvent] = field(default_factory=list)
    unpacks: list[UnpackRequest] = field(default_factory=list)
    requeue_after: float | None = None
    # What a finished `olm rollback` leaves behind: the CSVs rolled back from, the finished
    # plans that installed only them, and the requests (Subscriptions) to remove.
    delete_csvs: list[str] = field(default_factory=list)
    delete_plans: list[str] = field(default_factory=list)
    rollbacks_done: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        rollback = self.delete_csvs or self.delete_plans or self.rollbacks_done
        return not (self.create or self.plan_statuses or self.statuses or self.events or rollback)
