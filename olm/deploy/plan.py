"""What `olm install` applies and `olm uninstall` deletes, decided on plain dicts (no I/O).

Invariants:
- Install order: CRDs (then wait until Established), then the rendered objects in the order
  Helm renders them (namespaces, accounts, RBAC, services, the Deployment, then OLM objects).
- Uninstall deletes, in reverse order, what install created except the objects the chart
  keeps (`helm.sh/resource-policy: keep`: the namespaces, the global OperatorGroup, the
  OLMConfig) and never a namespace or a CRD, unless CRD deletion is asked for; CRDs with
  users' objects are deleted only when forced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from olm.api import body
from olm.api.conditions import parse_time

KEEP_ANNOTATION = "helm.sh/resource-policy"
CRD_KIND = "CustomResourceDefinition"
NAMESPACE_KIND = "Namespace"
# The chart has no default image (nothing publishes one), so the shipped rendering is made with
# this stand-in (`.invalid` never resolves); `olm install` always replaces it (`choose_image`).
IMAGE_PLACEHOLDER = "unset.invalid/olm-py"
NO_IMAGE = (
    "olm install needs --image: no public registry publishes the olm-py image. From an olm-py "
    "checkout, `make release REGISTRY=<host[:port]/path>` pushes one and prints its name; then "
    "run `olm install --image <host[:port]/path>/olm-py:<version>`"
)


def documents(text: str) -> list[dict[str, Any]]:
    """The objects of a multi-document YAML text (empty documents skipped)."""
    return [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict) and doc]


def ident(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    """(apiVersion, kind, namespace or "", name)."""
    meta = body.meta(obj)
    return (
        str(obj.get("apiVersion", "")),
        str(obj.get("kind", "")),
        str(meta.get("namespace") or ""),
        str(meta.get("name", "")),
    )


def describe(obj: Mapping[str, Any]) -> str:
    _, kind, namespace, name = ident(obj)
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def kept(obj: Mapping[str, Any]) -> bool:
    """Objects the chart keeps on uninstall (users' objects live in or under them)."""
    annotations = body.annotations(obj)
    return annotations.get(KEEP_ANNOTATION) == "keep" or obj.get("kind") == NAMESPACE_KIND


def with_image(objects: list[dict[str, Any]], image: str | None) -> list[dict[str, Any]]:
    """The objects with the olm-py container's image replaced (None: unchanged)."""
    if not image:
        return objects
    result = []
    for obj in objects:
        if obj.get("kind") == "Deployment":
            obj = yaml.safe_load(yaml.safe_dump(obj))  # a deep copy of plain data
            for container in obj["spec"]["template"]["spec"]["containers"]:
                if container.get("name") == "olm-py":
                    container["image"] = image
        result.append(obj)
    return result


def deployed_image(deployment: Mapping[str, Any] | None) -> str | None:
    """The image of the olm-py container of a Deployment (None: no Deployment or container)."""
    spec = ((deployment or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    for container in spec.get("containers") or []:
        if container.get("name") == "olm-py" and container.get("image"):
            return str(container["image"])
    return None


def choose_image(requested: str | None, deployed: str | None) -> str | None:
    """The olm-py image `olm install` runs: the one asked for, else the one an earlier install
    runs (a repair keeps it); None when there is neither (the caller says `NO_IMAGE`). The
    rendering's placeholder is never an answer."""
    for image in (requested, deployed):
        if image and not image.startswith(IMAGE_PLACEHOLDER + ":"):
            return image
    return None


def deployment_of(objects: Iterable[Mapping[str, Any]]) -> tuple[str, str]:
    """(namespace, name) of the olm-py Deployment among the rendered objects."""
    for obj in objects:
        if obj.get("kind") == "Deployment":
            _, _, namespace, name = ident(obj)
            return namespace, name
    raise ValueError("the rendered manifests have no Deployment")


@dataclass(frozen=True)
class Availability:
    ready: bool
    message: str


def availability(deployment: Mapping[str, Any] | None) -> Availability:
    """Whether a Deployment is rolled out and Available, and a one-line summary."""
    if deployment is None:
        return Availability(False, "not found")
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    wanted = int(spec.get("replicas", 1))
    meta = body.meta(deployment)
    if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
        return Availability(False, "waiting for the deployment controller")
    updated = int(status.get("updatedReplicas") or 0)
    ready = int(status.get("readyReplicas") or 0)
    available = any(
        c.get("type") == "Available" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )
    summary = f"{ready}/{wanted} ready, {updated}/{wanted} updated"
    if updated >= wanted and ready >= wanted and available:
        return Availability(True, summary)
    return Availability(False, summary)


@dataclass(frozen=True)
class UninstallPlan:
    delete: list[dict[str, Any]]  # in this order
    keep: list[dict[str, Any]]
    crds: list[str] = field(default_factory=list)  # CRD names to delete, after `delete`
    refusal: str = ""  # non-empty: do nothing, say this


def plan_uninstall(
    rendered: list[dict[str, Any]],
    crds: list[dict[str, Any]],
    remaining: Mapping[str, int],
    *,
    delete_crds: bool,
    force: bool,
) -> UninstallPlan:
    """What to delete. `remaining`: CRD name -> how many objects of it exist that install did
    not create (users' objects); CRDs are only deleted when asked, and with users' objects
    only when forced."""
    crd_names = [str(crd["metadata"]["name"]) for crd in crds]
    crd_groups = {str(crd["spec"]["group"]) for crd in crds}
    delete: list[dict[str, Any]] = []
    keep: list[dict[str, Any]] = []
    for obj in reversed(rendered):
        of_a_crd = str(obj.get("apiVersion", "")).split("/")[0] in crd_groups
        if kept(obj) and not (delete_crds and of_a_crd):
            keep.append(obj)
        else:
            delete.append(obj)
    if not delete_crds:
        return UninstallPlan(delete, keep)
    busy = {name: count for name, count in sorted(remaining.items()) if count}
    if busy and not force:
        listing = ", ".join(f"{name} ({count})" for name, count in busy.items())
        return UninstallPlan(
            [],
            rendered,
            refusal=(
                f"refusing to delete OLM's CRDs: objects of them still exist: {listing}. "
                "Deleting a CRD deletes all its objects (every installed operator's CSV, "
                "Subscription, InstallPlan...). Remove them first, or add --force to delete "
                "them with the CRDs."
            ),
        )
    return UninstallPlan(delete, keep, crds=crd_names)


def leader_of(leases: Iterable[Mapping[str, Any]], pods: Iterable[str], now: datetime) -> str:
    """The pod (among `pods`) holding an unexpired Lease, or "" (no leader yet)."""
    current = set(pods)
    for lease in leases:
        spec = lease.get("spec") or {}
        holder = str(spec.get("holderIdentity") or "")
        renewed = parse_time(str(spec.get("renewTime") or ""))
        duration = float(spec.get("leaseDurationSeconds") or 0)
        if holder in current and renewed and (now - renewed).total_seconds() <= duration:
            return holder
    return ""


def leader_elected(objects: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the rendered olm-py Deployment runs with --leader-elect."""
    for obj in objects:
        if obj.get("kind") == "Deployment":
            for container in obj["spec"]["template"]["spec"]["containers"]:
                if "--leader-elect" in (container.get("args") or []):
                    return True
    return False
