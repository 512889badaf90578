"""The console's I/O: every read and write a page makes, with the signed-in user's gateway.

Invariants: the gateway passed in carries the user's own token (olm.kube.bearer); nothing here
holds olm-py's credentials. A read the user may not make raises the API server's refusal
(a `GatewayError` with status 403) for the page to say; nothing is worked around. Writes are
only the ones the page's form decided (olm.console.install, olm.console.operands).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.console.security import Session, access_review, remembered
from olm.explain import chain
from olm.explain import read as explain_read
from olm.explain.render import lines as explain_lines
from olm.kube.bearer import get_raw
from olm.kube.errors import GatewayError, NotFound
from olm.kube.gateway import Gateway
from olm.kube.resources import path_for
from olm.planshow.run import read as read_plan
from olm.preview.plan import Preview, preview
from olm.uninstall.plan import candidate_crds
from olm.uninstall.plan import decide as decide_uninstall
from olm.uninstall.render import lines as uninstall_lines
from olm.uninstall.run import read as read_uninstall
from olm.uninstall.run import remaining_of, uninstall

Obj = dict[str, Any]
PACKAGES = "/apis/packages.operators.coreos.com/v1"
CRD_API = "apiextensions.k8s.io/v1"


def _path(kind: Kind, namespace: str | None, name: str | None = None) -> str:
    info = KINDS[kind]
    return path_for(info.api_version, info.kind.value, namespace or None, name)


def whoami(gateway: Gateway) -> str:
    """The user's name, as the API server authenticates the token (SelfSubjectReview)."""
    review = gateway.create(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}}
    )
    return str(((review.get("status") or {}).get("userInfo") or {}).get("username") or "")


def allowed(
    gateway: Gateway, session: Session, verb: str, group: str, resource: str, namespace: str
) -> bool:
    """May the user `verb` `resource` in `namespace` ("" for all)? A SelfSubjectAccessReview,
    remembered for 30 seconds."""
    key = (verb, group, resource, namespace)
    now = time.monotonic()
    known = remembered(session, key, now)
    if known is not None:
        return known
    try:
        review = gateway.create(access_review(verb, group, resource, namespace))
        answer = bool((review.get("status") or {}).get("allowed"))
    except GatewayError:
        answer = False
    session.allowed[key] = (now, answer)
    return answer


def package_manifests(gateway: Gateway, namespace: str) -> list[Obj]:
    """The PackageManifests a user sees from `namespace` (global catalogs' and its own)."""
    return gateway.list_path(f"{PACKAGES}/namespaces/{namespace}/packagemanifests")


def package_manifest(
    gateway: Gateway, namespace: str, catalog_namespace: str, catalog: str, name: str
) -> Obj | None:
    try:
        found = gateway.get(
            f"{PACKAGES.removeprefix('/apis/')}", "PackageManifest", namespace, name
        )
    except NotFound:
        found = None
    status = (found or {}).get("status") or {}
    if found and (status.get("catalogSource"), status.get("catalogSourceNamespace")) == (
        catalog,
        catalog_namespace,
    ):
        return found
    return next(
        (
            m
            for m in package_manifests(gateway, namespace)
            if (m.get("status") or {}).get("packageName") == name
            and (m.get("status") or {}).get("catalogSource") == catalog
            and (m.get("status") or {}).get("catalogSourceNamespace") == catalog_namespace
        ),
        None,
    )


def icon(gateway: Gateway, namespace: str, name: str) -> tuple[str, bytes]:
    return get_raw(gateway, f"{PACKAGES}/namespaces/{namespace}/packagemanifests/{name}/icon")


def listed(gateway: Gateway, kind: Kind, namespace: str) -> list[Obj]:
    return gateway.list_path(_path(kind, namespace))


def get(gateway: Gateway, kind: Kind, namespace: str, name: str) -> Obj:
    info = KINDS[kind]
    return gateway.get(info.api_version, info.kind.value, namespace, name)


def events(gateway: Gateway, namespace: str) -> list[Obj]:
    return gateway.list_path(f"/api/v1/namespaces/{namespace}/events")


def crd(gateway: Gateway, name: str) -> Obj | None:
    try:
        return gateway.get(CRD_API, "CustomResourceDefinition", None, name)
    except GatewayError:
        return None


def operands(gateway: Gateway, api_version: str, plural: str, namespace: str) -> list[Obj]:
    return gateway.list_path(f"/apis/{api_version}/namespaces/{namespace}/{plural}")


def create_all(gateway: Gateway, objects: Sequence[Obj]) -> list[Obj]:
    return [gateway.create(obj) for obj in objects]


def explanation(gateway: Gateway, namespace: str, name: str) -> list[str]:
    """`olm explain csv NAME`'s lines, as the user can read them; [] when there is none."""
    snapshot = explain_read.read(gateway, namespace)
    found = chain.explain(snapshot, Kind.CLUSTER_SERVICE_VERSION, name)
    return explain_lines(found, namespace) if found else []


def plan_preview(gateway: Gateway, namespace: str, name: str) -> tuple[Preview, Obj]:
    """`olm plan show`'s preview of an InstallPlan, with the notes of what could not be read."""
    snapshot, notes = read_plan(gateway, name, namespace)
    result = preview(snapshot)
    if notes:
        result = replace(result, notes=(*result.notes, *notes))
    return result, dict(snapshot.plan)


def approve(gateway: Gateway, namespace: str, name: str) -> None:
    info = KINDS[Kind.INSTALL_PLAN]
    gateway.patch(info.api_version, info.kind.value, namespace, name, {"spec": {"approved": True}})


def uninstall_preview(gateway: Gateway, package: str, namespace: str) -> tuple[bool, list[str]]:
    """(anything to remove?, what `olm uninstall-operator --dry-run` says would go and stay)."""
    snapshot = read_uninstall(gateway, package, namespace, None)
    remaining = remaining_of(gateway, snapshot.crds, candidate_crds(snapshot))
    plan = decide_uninstall(snapshot, remaining)
    return plan.found, uninstall_lines(plan, dry_run=True, with_next=False)


def run_uninstall(gateway: Gateway, package: str, namespace: str) -> list[str]:
    said: list[str] = []
    uninstall(gateway, package, namespace, say=said.append)
    return said
