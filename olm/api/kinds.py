"""The kinds of the `operators.coreos.com` API group, as OLM v0 serves them.

Invariant: this table is the single source for names, versions, scope, short names and
printer columns; `manifests/crds/` must agree with it (a test checks every field).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

GROUP = "operators.coreos.com"
CATEGORY = "olm"


class Kind(StrEnum):
    CLUSTER_SERVICE_VERSION = "ClusterServiceVersion"
    SUBSCRIPTION = "Subscription"
    INSTALL_PLAN = "InstallPlan"
    CATALOG_SOURCE = "CatalogSource"
    OPERATOR_GROUP = "OperatorGroup"
    OPERATOR_CONDITION = "OperatorCondition"
    OPERATOR = "Operator"
    OLM_CONFIG = "OLMConfig"


@dataclass(frozen=True)
class Column:
    """One `kubectl get` column after NAME."""

    name: str
    json_path: str
    type: str = "string"


@dataclass(frozen=True)
class KindInfo:
    kind: Kind
    plural: str
    namespaced: bool
    storage_version: str
    served_versions: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    columns: tuple[Column, ...] = ()

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{GROUP}"

    @property
    def api_version(self) -> str:
        return f"{GROUP}/{self.storage_version}"


AGE = Column("Age", ".metadata.creationTimestamp", "date")

KINDS: dict[Kind, KindInfo] = {
    info.kind: info
    for info in (
        KindInfo(
            Kind.CLUSTER_SERVICE_VERSION,
            "clusterserviceversions",
            True,
            "v1alpha1",
            ("v1alpha1",),
            ("csv", "csvs"),
            (
                Column("Display", ".spec.displayName"),
                Column("Version", ".spec.version"),
                Column("Release", ".spec.release"),
                Column("Replaces", ".spec.replaces"),
                Column("Phase", ".status.phase"),
            ),
        ),
        KindInfo(
            Kind.SUBSCRIPTION,
            "subscriptions",
            True,
            "v1alpha1",
            ("v1alpha1",),
            ("sub", "subs"),
            (
                Column("Package", ".spec.name"),
                Column("Source", ".spec.source"),
                Column("Channel", ".spec.channel"),
            ),
        ),
        KindInfo(
            Kind.INSTALL_PLAN,
            "installplans",
            True,
            "v1alpha1",
            ("v1alpha1",),
            ("ip",),
            (
                Column("CSV", ".spec.clusterServiceVersionNames[0]"),
                Column("Approval", ".spec.approval"),
                Column("Approved", ".spec.approved", "boolean"),
            ),
        ),
        KindInfo(
            Kind.CATALOG_SOURCE,
            "catalogsources",
            True,
            "v1alpha1",
            ("v1alpha1",),
            ("catsrc",),
            (
                Column("Display", ".spec.displayName"),
                Column("Type", ".spec.sourceType"),
                Column("Publisher", ".spec.publisher"),
                AGE,
            ),
        ),
        KindInfo(Kind.OPERATOR_GROUP, "operatorgroups", True, "v1", ("v1", "v1alpha2"), ("og",)),
        KindInfo(
            Kind.OPERATOR_CONDITION, "operatorconditions", True, "v2", ("v2", "v1"), ("condition",)
        ),
        KindInfo(Kind.OPERATOR, "operators", False, "v1", ("v1",)),
        KindInfo(Kind.OLM_CONFIG, "olmconfigs", False, "v1", ("v1",)),
    )
}


def header_for(info: KindInfo) -> list[str]:
    """The column headers `kubectl get` prints for this kind (one namespace)."""
    if not info.columns:
        return ["NAME", "AGE"]
    return ["NAME", *(column.name.upper() for column in info.columns)]
