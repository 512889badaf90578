"""The I/O of `olm explain`: read the snapshot (`olm.explain.model.Snapshot`) with the user's
own kubeconfig.

Invariants:
- Read only: nothing is written, so any user who may read the objects may run it.
- The namespace's Subscriptions, InstallPlans and CSVs must be readable (else `ExplainError`:
  nothing useful can be said). Everything else is read cluster-wide when allowed, narrowed to
  the namespace (and the global catalog namespace) when not, and named in
  `Snapshot.unreadable` when not at all; PackageManifests are read when the package server
  answers, and otherwise silently left out (they only sharpen a fix).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from olm.api import body
from olm.api.catalogsource import GLOBAL_CATALOG_NAMESPACE
from olm.api.kinds import KINDS, Kind
from olm.explain.model import CRD_KIND, NAMESPACE_KIND, Snapshot
from olm.kube.client import context_namespace
from olm.kube.connect import Unreachable, reach, user_gateway
from olm.kube.errors import GatewayError
from olm.kube.gateway import Gateway
from olm.kube.protocol import KubeGateway
from olm.kube.resources import path_for
from olm.packages.query import GROUP as PACKAGES_GROUP
from olm.packages.query import RESOURCE as PACKAGES_RESOURCE
from olm.packages.query import VERSION as PACKAGES_VERSION

FIELD_MANAGER = "olm-py-explain"  # never used to write: the gateway wants one
CRD_API = "apiextensions.k8s.io/v1"
Obj = dict[str, Any]


class ExplainError(RuntimeError):
    """Something the user can act on; printed as one line by the olm command."""


def connect(kubeconfig: str | None) -> Gateway:
    """A gateway acting as the user, once the cluster has answered."""
    try:
        gateway = user_gateway(kubeconfig, FIELD_MANAGER)
        reach(gateway)
    except Unreachable as exc:
        raise ExplainError(str(exc)) from exc
    return gateway


def default_namespace(kubeconfig: str | None) -> str:
    """The namespace without -n: the current context's, as kubectl, else "default"."""
    return context_namespace(kubeconfig) or "default"


def _kind_path(kind: Kind, namespace: str | None) -> str:
    info = KINDS[kind]
    return path_for(info.api_version, info.kind.value, namespace)


def read(gateway: KubeGateway, namespace: str) -> Snapshot:
    unreadable: list[str] = []

    def listing(path: str) -> list[Obj]:
        return gateway.list_path(path)

    def optional(what: str, *paths: str, say: bool = True) -> list[Obj]:
        """The first of `paths` that can be listed; [] (and `what` noted) when none can."""
        for path in paths:
            try:
                return listing(path)
            except GatewayError:
                continue
        if say:
            unreadable.append(what)
        return []

    try:
        subscriptions = listing(_kind_path(Kind.SUBSCRIPTION, namespace))
        plans = listing(_kind_path(Kind.INSTALL_PLAN, namespace))
        csvs = listing(_kind_path(Kind.CLUSTER_SERVICE_VERSION, namespace))
    except GatewayError as exc:
        raise ExplainError(f"cannot read namespace {namespace}: {exc}") from exc
    cluster_csvs: list[Obj] | None
    try:
        cluster_csvs = listing(_kind_path(Kind.CLUSTER_SERVICE_VERSION, None))
    except GatewayError:
        cluster_csvs = None
        unreadable.append("ClusterServiceVersions of other namespaces")
    groups = optional(
        "OperatorGroups",
        _kind_path(Kind.OPERATOR_GROUP, None),
        _kind_path(Kind.OPERATOR_GROUP, namespace),
    )
    catalogs = _catalogs(listing, namespace, unreadable)
    return Snapshot(
        namespace,
        subscriptions=subscriptions,
        install_plans=plans,
        csvs=csvs,
        operator_groups=groups,
        catalog_sources=catalogs,
        crds=optional("CustomResourceDefinitions", path_for(CRD_API, CRD_KIND, None)),
        cluster_csvs=cluster_csvs,
        events=optional("Events", path_for("v1", "Event", namespace)),
        package_manifests=optional(
            "PackageManifests",
            f"/apis/{PACKAGES_GROUP}/{PACKAGES_VERSION}/{PACKAGES_RESOURCE}",
            say=False,
        ),
        namespaces=frozenset(
            str(body.meta(n).get("name"))
            for n in optional("Namespaces", path_for("v1", NAMESPACE_KIND, None), say=False)
        ),
        unreadable=tuple(unreadable),
    )


def _catalogs(
    listing: Callable[[str], list[Obj]], namespace: str, unreadable: list[str]
) -> list[Obj]:
    """Every CatalogSource, else the namespace's and the global namespace's."""
    try:
        return listing(_kind_path(Kind.CATALOG_SOURCE, None))
    except GatewayError:
        pass
    found: list[Obj] = []
    for where in dict.fromkeys((namespace, GLOBAL_CATALOG_NAMESPACE)):
        try:
            found += listing(_kind_path(Kind.CATALOG_SOURCE, where))
        except GatewayError:
            unreadable.append(f"CatalogSources of namespace {where}")
    return found
