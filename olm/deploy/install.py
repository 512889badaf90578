"""The I/O of `olm install` / `olm uninstall` / `olm status`, through `olm.kube.Gateway`.

Invariants:
- Everything is server-side applied under the field manager `olm-install` (conflicts
  forced), so re-running `olm install` is an upgrade/repair, never an error.
- Objects of the CRDs are applied only once every CRD is Established.
- `install` returns only when the olm-py Deployment is Available (or raises `InstallError`
  after the timeout, naming what was not ready).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

import olm
from olm.api import body
from olm.api.conditions import utc_now
from olm.data import CRDS
from olm.deploy.plan import (
    NO_IMAGE,
    Availability,
    UninstallPlan,
    availability,
    choose_image,
    deployed_image,
    deployment_of,
    describe,
    documents,
    ident,
    leader_elected,
    leader_of,
    plan_uninstall,
    with_image,
)
from olm.kube.connect import Unreachable, reach, user_gateway
from olm.kube.gateway import Gateway, GatewayError, NotFound, UnservedKind
from olm.progress import QUIET, Progress
from olm.waiting import attempts

FIELD_MANAGER = "olm-install"
RENDERED = "olm-py.yaml"
CRD_API = "apiextensions.k8s.io/v1"
SAMPLES_SOURCE = ("olm", "samples")  # registered by olm-py itself, not a user's object


class InstallError(RuntimeError):
    """Something the user can act on; printed as one line by the olm command."""


def rendered_path() -> Path:
    resource = files(__package__) / RENDERED
    if not isinstance(resource, Path) or not resource.is_file():
        raise InstallError(f"olm-py's rendered manifests are not installed ({resource})")
    return resource


def rendered_objects() -> list[dict[str, Any]]:
    return documents(rendered_path().read_text(encoding="utf-8"))


def crd_objects(crds: Path = CRDS) -> list[dict[str, Any]]:
    return [obj for path in sorted(crds.glob("*.yaml")) for obj in documents(path.read_text())]


def gateway_for(kubeconfig: str | None) -> Gateway:
    try:
        return user_gateway(kubeconfig, FIELD_MANAGER)
    except Unreachable as exc:
        raise InstallError(str(exc)) from exc


def _reach(gateway: Gateway) -> str:
    """The cluster's Kubernetes version, or InstallError saying why it cannot be reached."""
    try:
        return reach(gateway)
    except Unreachable as exc:
        raise InstallError(str(exc)) from exc


def _wait(
    check: Callable[[], tuple[bool, str]], timeout: float, what: str, progress: Progress
) -> None:
    said = detail = ""
    for _ in attempts(timeout, 0.25):
        done, detail = check()
        if done:
            return
        if detail != said:
            progress.say(f"{what}: {detail}")
            said = detail
    raise InstallError(f"timed out after {timeout:.0f}s waiting for {what} ({detail})")


def _established(gateway: Gateway, names: list[str]) -> tuple[bool, str]:
    pending = []
    for name in names:
        try:
            crd = gateway.get(CRD_API, "CustomResourceDefinition", None, name)
        except NotFound:
            pending.append(name)
            continue
        conditions = (crd.get("status") or {}).get("conditions") or []
        if not any(
            c.get("type") == "Established" and c.get("status") == "True" for c in conditions
        ):
            pending.append(name)
    return (not pending, f"{len(names) - len(pending)}/{len(names)} established")


def _leader(gateway: Gateway, objects: list[dict[str, Any]]) -> str:
    """The olm-py pod holding the leader Lease now ("" when none does)."""
    namespace, _ = deployment_of(objects)
    deployment = next(o for o in objects if o.get("kind") == "Deployment")
    selector = ",".join(
        f"{k}={v}" for k, v in sorted(deployment["spec"]["selector"]["matchLabels"].items())
    )
    try:
        pods = gateway.list_names("v1", "Pod", namespace, selector)
        leases = gateway.list_path(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases")
    except GatewayError:
        return ""
    return leader_of(leases, pods, utc_now())


def _gone(gateway: Gateway, deployment: dict[str, Any]) -> tuple[bool, str]:
    """Whether a Deployment and its pods are gone, and how many pods remain."""
    _, _, namespace, name = ident(deployment)
    selector = ",".join(
        f"{k}={v}" for k, v in sorted(deployment["spec"]["selector"]["matchLabels"].items())
    )
    pods = gateway.list_names("v1", "Pod", namespace, selector)
    present = _deployment(gateway, namespace, name) is not None
    return (not pods and not present, f"{len(pods)} pod(s) stopping")


def _deployment(gateway: Gateway, namespace: str, name: str) -> dict[str, Any] | None:
    try:
        return gateway.get("apps/v1", "Deployment", namespace, name)
    except NotFound:
        return None


@dataclass(frozen=True)
class InstallResult:
    seconds: float
    olm_py_version: str
    image: str
    server_version: str
    leader: str = ""


def install(
    gateway: Gateway,
    *,
    image: str | None = None,
    timeout: float = 120.0,
    progress: Progress = QUIET,
) -> InstallResult:
    started = time.monotonic()
    try:
        server = _reach(gateway)
        crds = crd_objects()
        rendered = rendered_objects()
        chosen = choose_image(image, deployed_image(_deployment(gateway, *deployment_of(rendered))))
        if chosen is None:
            raise InstallError(NO_IMAGE)
        objects = with_image(rendered, chosen)
        progress.say(f"Installing olm-py {olm.__version__} into the cluster (Kubernetes {server})")
        for crd in crds:
            gateway.apply(crd)
        names = [str(crd["metadata"]["name"]) for crd in crds]
        progress.say(f"Applied {len(crds)} CRDs")
        _wait(lambda: _established(gateway, names), timeout, "CRDs", progress)
        for obj in objects:
            gateway.apply(obj)
            progress.say(f"Applied {describe(obj)}")
        namespace, name = deployment_of(objects)

        def ready() -> tuple[bool, str]:
            state = availability(_deployment(gateway, namespace, name))
            return state.ready, state.message

        remaining = max(1.0, timeout - (time.monotonic() - started))
        _wait(ready, remaining, f"Deployment {namespace}/{name}", progress)
        if leader_elected(objects):
            # Available pods are not yet reconciling: wait until one of them leads.
            remaining = max(1.0, timeout - (time.monotonic() - started))
            _wait(
                lambda: (bool(_leader(gateway, objects)), "no replica leads yet"),
                remaining,
                "a leader",
                progress,
            )
    except GatewayError as exc:
        raise InstallError(str(exc)) from exc
    result = InstallResult(
        seconds=time.monotonic() - started,
        olm_py_version=olm.__version__,
        image=deployed_image(_deployment(gateway, namespace, name)) or "",
        server_version=server,
        leader=_leader(gateway, objects),
    )
    progress.say(
        f"olm-py {result.olm_py_version} is ready ({result.image}"
        + (f", leader {result.leader}" if result.leader else "")
        + f") in {result.seconds:.1f}s on Kubernetes {server}"
    )
    return result


def _remaining(gateway: Gateway, crds: list[dict[str, Any]], ours: set[Any]) -> dict[str, int]:
    """CRD name -> how many of its objects exist that `olm install` did not create."""
    counts: dict[str, int] = {}
    for crd in crds:
        spec = crd["spec"]
        name = str(crd["metadata"]["name"])
        counts[name] = 0
        for version in spec["versions"]:
            if not version.get("storage"):
                continue
            path = f"/apis/{spec['group']}/{version['name']}/{spec['names']['plural']}"
            try:
                items = gateway.list_path(path)
            except NotFound:
                continue
            for item in items:
                meta = body.meta(item)
                key = (str(meta.get("namespace") or ""), str(meta.get("name", "")))
                if (spec["names"]["kind"], *key) in ours or key == SAMPLES_SOURCE:
                    continue
                counts[name] += 1
    return counts


def _crds_gone(gateway: Gateway, names: list[str]) -> tuple[bool, str]:
    left = 0
    for name in names:
        with contextlib.suppress(NotFound):
            gateway.get(CRD_API, "CustomResourceDefinition", None, name)
            left += 1
    return (not left, f"{left} still terminating")


def _drop_finalizers(gateway: Gateway, crd: dict[str, Any], progress: Progress) -> None:
    """Remove the finalizers of every object of a (terminating) CRD."""
    spec = crd["spec"]
    for version in spec["versions"]:
        if not version.get("storage"):
            continue
        api_version = f"{spec['group']}/{version['name']}"
        path = f"/apis/{api_version}/{spec['names']['plural']}"
        with contextlib.suppress(NotFound):
            for item in gateway.list_path(path):
                meta = body.meta(item)
                if not meta.get("finalizers"):
                    continue
                with contextlib.suppress(NotFound):
                    gateway.patch(
                        api_version,
                        spec["names"]["kind"],
                        meta.get("namespace") or None,
                        meta["name"],
                        {"metadata": {"finalizers": None}},
                    )
                progress.say(f"Removed the finalizers of {spec['names']['kind']} {meta['name']}")


def uninstall(
    gateway: Gateway,
    *,
    delete_crds: bool = False,
    force: bool = False,
    timeout: float = 60.0,
    progress: Progress = QUIET,
) -> UninstallPlan:
    objects = rendered_objects()
    crds = crd_objects()
    _reach(gateway)
    try:
        ours = {ident(obj)[1:] for obj in objects}
        remaining = _remaining(gateway, crds, ours) if delete_crds else {}
        plan = plan_uninstall(objects, crds, remaining, delete_crds=delete_crds, force=force)
        if plan.refusal:
            raise InstallError(plan.refusal)
        if plan.crds:
            # First, while olm-py still runs its finalizers (e.g. a CSV's cluster RBAC).
            for crd in plan.crds:
                gateway.delete(CRD_API, "CustomResourceDefinition", None, crd)
                progress.say(f"Deleting CustomResourceDefinition {crd}")
            if _deployment(gateway, *deployment_of(objects)) is not None:
                with contextlib.suppress(InstallError):
                    _wait(lambda: _crds_gone(gateway, plan.crds), timeout / 2, "CRDs", progress)
        for obj in plan.delete:
            api_version, kind, namespace, name = ident(obj)
            with contextlib.suppress(UnservedKind):  # an object of a CRD deleted above
                gateway.delete(api_version, kind, namespace or None, name)
            progress.say(f"Deleted {describe(obj)}")
            if kind == "Deployment":
                # Its pods stop (and the leader hands over its Lease) while they still hold
                # their ServiceAccount and RBAC, which go next.
                _wait(
                    lambda gone=obj: _gone(gateway, gone),  # type: ignore[misc]
                    timeout,
                    f"{describe(obj)}'s pods",
                    progress,
                )
        if plan.crds and not _crds_gone(gateway, plan.crds)[0]:
            # olm-py is gone: nobody else will finish its finalizers (that is what --force is).
            for definition in crds:
                if definition["metadata"]["name"] in plan.crds:
                    _drop_finalizers(gateway, definition, progress)
            _wait(lambda: _crds_gone(gateway, plan.crds), timeout, "CRDs", progress)
        for crd in plan.crds:
            progress.say(f"Deleted CustomResourceDefinition {crd}")
    except GatewayError as exc:
        raise InstallError(str(exc)) from exc
    for obj in plan.keep:
        progress.say(f"Kept {describe(obj)}")
    if not plan.crds:
        progress.say(f"Kept OLM's {len(crds)} CRDs and their objects (--delete-crds removes them)")
    return plan


@dataclass(frozen=True)
class Status:
    installed: bool
    crds: list[tuple[str, bool]]  # (name, established)
    deployment: Availability
    version: str
    image: str
    leader: str
    server_version: str

    @property
    def healthy(self) -> bool:
        return self.installed and self.deployment.ready and all(ok for _, ok in self.crds)


def status(gateway: Gateway) -> Status:
    try:
        server = _reach(gateway)
        crds = []
        for crd in crd_objects():
            name = str(crd["metadata"]["name"])
            crds.append((name, _established(gateway, [name])[0]))
        namespace, name = deployment_of(rendered_objects())
        deployment = _deployment(gateway, namespace, name)
        labels = body.labels(deployment or {})
        leader = _leader(gateway, rendered_objects()) if deployment else ""
    except GatewayError as exc:
        raise InstallError(str(exc)) from exc
    return Status(
        installed=deployment is not None,
        crds=crds,
        deployment=availability(deployment),
        version=str(labels.get("app.kubernetes.io/version", "")),
        image=deployed_image(deployment) or "",
        leader=leader,
        server_version=server,
    )
