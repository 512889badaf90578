"""The I/O of `olm uninstall-operator`: read, decide (olm.uninstall.plan), delete, report.

Invariants:
- It acts with the user's own kubeconfig (least privilege): olm-py's controller needs no new
  rights, and what the user may not read or delete is said, never worked around.
- Everything is read before anything is deleted; a read the plan cannot do without (the
  namespace's Subscriptions, CSVs and InstallPlans, the CRDs) failing deletes nothing.
- A CRD is deleted only right after a fresh listing of its custom resources in every namespace
  found none (the plan's rule, judged again at the last moment), and never without the
  `crds-when-unused` policy. Custom resources are never deleted.
- Writes are deletes (propagation Background, so the garbage collector takes the dependents)
  and a merge patch of one CRD's olm-py.io/cleanup annotations, under the field manager
  FIELD_MANAGER; a delete of an object already gone is not an error.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from olm.api import body
from olm.api.cleanup import CleanupPolicy
from olm.api.kinds import KINDS, Kind
from olm.api.labels import Label
from olm.kube.connect import Unreachable, reach, user_gateway
from olm.kube.errors import GatewayError, NotFound
from olm.kube.gateway import Gateway
from olm.kube.protocol import KubeGateway
from olm.kube.resources import api_prefix, path_for
from olm.uninstall.crds import CrdVerdict, Remaining, judge_crd
from olm.uninstall.plan import (
    CRD_API,
    CRD_KIND,
    CSV,
    Plan,
    Ref,
    Snapshot,
    candidate_crds,
    decide,
    operator_name,
    package_csvs,
)
from olm.uninstall.render import command, crd_line, lines
from olm.waiting import attempts

FIELD_MANAGER = "olm-py-uninstall"
POLL_SECONDS = 2.0
Say = Callable[[str], None]
Obj = dict[str, Any]
RBAC = "rbac.authorization.k8s.io/v1"
# Namespaced kinds whose objects a CSV (or its OperatorCondition) owns by ownerReference, read
# only to say what the garbage collector removes. Secrets are not read: their data is not ours.
DEPENDENT_KINDS = (
    ("apps/v1", "Deployment", "deployments"),
    ("v1", "ServiceAccount", "serviceaccounts"),
    ("v1", "Service", "services"),
    (RBAC, "Role", "roles"),
    (RBAC, "RoleBinding", "rolebindings"),
    (
        KINDS[Kind.OPERATOR_CONDITION].api_version,
        Kind.OPERATOR_CONDITION.value,
        KINDS[Kind.OPERATOR_CONDITION].plural,
    ),
)


class UninstallError(RuntimeError):
    """Something the user can act on; printed as one line by the olm command."""


def gateway_for(kubeconfig: str | None) -> Gateway:
    try:
        return user_gateway(kubeconfig, FIELD_MANAGER)
    except Unreachable as exc:
        raise UninstallError(str(exc)) from exc


def _list(
    gateway: KubeGateway, api_version: str, kind: str, namespace: str | None, plural: str = ""
) -> list[Obj]:
    """Every object of a kind, each with its apiVersion and kind (list items of built-in kinds
    come without them). `plural` for a kind the gateway's table does not know."""
    if plural:
        scope = f"/namespaces/{namespace}" if namespace else ""
        path = f"{api_prefix(api_version)}{scope}/{plural}"
    else:
        path = path_for(api_version, kind, namespace)
    items = gateway.list_path(path)
    return [{**item, "apiVersion": api_version, "kind": kind} for item in items]


def read(
    gateway: KubeGateway, package: str, namespace: str, flag: CleanupPolicy | None
) -> Snapshot:
    crds = _list(gateway, CRD_API, CRD_KIND, None)
    if not package:
        cluster_csvs, error = _cluster_csvs(gateway)
        return Snapshot(
            "", "", crds=crds, cluster_csvs=cluster_csvs, cluster_csvs_error=error, flag=flag
        )
    sub, ip, og = (KINDS[k] for k in (Kind.SUBSCRIPTION, Kind.INSTALL_PLAN, Kind.OPERATOR_GROUP))
    snapshot = Snapshot(
        package,
        namespace,
        subscriptions=_list(gateway, sub.api_version, sub.kind.value, namespace),
        csvs=_list(gateway, CSV.api_version, CSV.kind.value, namespace),
        install_plans=_list(gateway, ip.api_version, ip.kind.value, namespace),
        crds=crds,
        flag=flag,
    )
    cluster_csvs, error = _cluster_csvs(gateway)
    dependents: list[Obj] = []
    for api_version, kind, plural in DEPENDENT_KINDS:
        # Unreadable: only the report loses a line; nothing is decided on these.
        with contextlib.suppress(GatewayError):
            dependents += _list(gateway, api_version, kind, namespace, plural)
    label_owned: dict[str, list[Ref]] = {}
    for csv in package_csvs(snapshot):
        name = csv["metadata"]["name"]
        selector = (
            f"{Label.OWNER}={name},{Label.OWNER_NAMESPACE}={namespace},"
            f"{Label.OWNER_KIND}={CSV.kind.value}"
        )
        for kind in ("ClusterRole", "ClusterRoleBinding"):
            try:
                found = gateway.list_names(RBAC, kind, None, selector)
            except GatewayError:
                continue
            label_owned.setdefault(name, []).extend(Ref(kind, "", n, RBAC) for n in found)
    operator = KINDS[Kind.OPERATOR]
    try:
        summary: Obj | None = gateway.get(
            operator.api_version, operator.kind.value, None, operator_name(package, namespace)
        )
    except GatewayError:
        summary = None
    try:
        groups = _list(gateway, og.api_version, og.kind.value, namespace)
    except GatewayError:
        groups = []
    return dataclasses.replace(
        snapshot,
        cluster_csvs=cluster_csvs,
        cluster_csvs_error=error,
        dependents=dependents,
        label_owned=label_owned,
        operator=summary,
        operator_groups=groups,
    )


def _cluster_csvs(gateway: KubeGateway) -> tuple[list[Obj] | None, str]:
    try:
        return _list(gateway, CSV.api_version, CSV.kind.value, None), ""
    except GatewayError as exc:
        return None, str(exc)


def custom_resources(gateway: KubeGateway, crd: Mapping[str, Any]) -> Remaining:
    """The custom resources of `crd` in every namespace. Every object is served at every served
    version, so one version that lists is enough; the others are tried when one fails (e.g. a
    conversion webhook that is down)."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    kind = str(names.get("kind") or "")
    errors: list[str] = []
    for version in spec.get("versions") or []:
        if not version.get("served"):
            continue
        path = f"/apis/{spec.get('group')}/{version.get('name')}/{names.get('plural')}"
        try:
            items = gateway.list_path(path)
        except GatewayError as exc:
            errors.append(f"{version.get('name')}: {exc}")
            continue
        keys = sorted(
            "/".join(p for p in (m.get("namespace"), m.get("name")) if p)
            for m in (body.meta(item) for item in items)
        )
        return Remaining(kind, tuple(keys))
    return Remaining(kind, error="; ".join(errors) or "it serves no version")


def remaining_of(
    gateway: KubeGateway, crds: Sequence[Mapping[str, Any]], names: Sequence[str]
) -> dict[str, Remaining]:
    by_name = {c["metadata"]["name"]: c for c in crds}
    return {name: custom_resources(gateway, by_name[name]) for name in names if name in by_name}


def _get_crd(gateway: KubeGateway, name: str) -> Obj | None:
    try:
        return gateway.get(CRD_API, CRD_KIND, None, name)
    except NotFound:
        return None


def _rejudge(
    gateway: KubeGateway, verdict: CrdVerdict, ours: Sequence[tuple[str, str]], operator: str
) -> CrdVerdict:
    """The verdict on fresh data: the CRD, every CSV and the custom resources, read now."""
    crd = _get_crd(gateway, verdict.name)
    csvs, error = _cluster_csvs(gateway)
    remaining = custom_resources(gateway, crd) if crd else None
    return judge_crd(verdict.name, crd, verdict.policy, remaining, csvs, error, ours, operator)


def _settle_crds(
    gateway: KubeGateway, plan: Plan, ours: Sequence[tuple[str, str]]
) -> tuple[list[CrdVerdict], set[str]]:
    """Delete the CRDs the plan frees (judged again first), mark the blocked ones."""
    operator = operator_name(plan.package, plan.namespace) if plan.package else ""
    verdicts: list[CrdVerdict] = []
    deleted: set[str] = set()
    for verdict in plan.crds:
        if verdict.delete:
            verdict = _rejudge(gateway, verdict, ours, operator)
            if verdict.delete:
                gateway.delete(CRD_API, CRD_KIND, None, verdict.name)
                deleted.add(verdict.name)
        if verdict.patch is not None:
            with contextlib.suppress(NotFound):
                gateway.patch(CRD_API, CRD_KIND, None, verdict.name, dict(verdict.patch))
        verdicts.append(verdict)
    return verdicts, deleted


def _wait(
    gateway: KubeGateway,
    plan: Plan,
    ours: Sequence[tuple[str, str]],
    timeout: float,
    say: Say,
) -> bool:
    """Until every blocked CRD is free (then delete it) or gone; progress when a blocker
    changes. False after `timeout` seconds."""
    operator = operator_name(plan.package, plan.namespace) if plan.package else ""
    waiting = {v.name: v for v in plan.blocked}
    said: dict[str, tuple[str, ...]] = {n: v.blockers for n, v in waiting.items()}
    # Polled: the API server offers no watch across all of these at once.
    for attempt in attempts(timeout, POLL_SECONDS):
        if attempt:  # the plan judged them just now: the first look again is an interval later
            for name, verdict in list(waiting.items()):
                fresh = _rejudge(gateway, verdict, ours, operator)
                if fresh.gone:
                    say(crd_line(fresh))
                    del waiting[name]
                elif fresh.delete:
                    gateway.delete(CRD_API, CRD_KIND, None, name)
                    say(crd_line(fresh, deleted=True))
                    del waiting[name]
                elif fresh.blockers != said.get(name):
                    said[name] = fresh.blockers
                    say(f"waiting   {CRD_KIND} {name}: {'; '.join(fresh.blockers)}")
        if not waiting:
            return True
    return False


def uninstall(
    gateway: KubeGateway,
    package: str,
    namespace: str,
    *,
    flag: CleanupPolicy | None = None,
    dry_run: bool = False,
    wait: bool = False,
    timeout: float = 600.0,
    say: Say = print,
) -> int:
    """Run one uninstall; the exit status (0, or 1 when waiting ran out of time). Raises
    UninstallError on a refused or failed request."""
    try:
        reach(gateway)
    except Unreachable as exc:
        raise UninstallError(str(exc)) from exc
    try:
        snapshot = read(gateway, package, namespace, flag)
        remaining = remaining_of(gateway, snapshot.crds, candidate_crds(snapshot))
        plan = decide(snapshot, remaining)
    except GatewayError as exc:
        raise UninstallError(f"nothing was deleted: a read failed: {exc}") from exc
    if dry_run:
        for line in lines(plan, dry_run=True):
            say(line)
        return 0
    ours = [(ref.namespace, ref.name) for ref in plan.deletes if ref.kind == CSV.kind.value]
    done: list[Ref] = []
    try:
        for ref in plan.deletes:
            gateway.delete(ref.api_version, ref.kind, ref.namespace or None, ref.name)
            done.append(ref)
        verdicts, deleted = _settle_crds(gateway, plan, ours)
    except GatewayError as exc:
        for line in lines(
            dataclasses.replace(plan, deletes=tuple(done), removed=(), left=(), crds=()),
            with_next=False,
        ):
            say(line)
        raise UninstallError(f"stopped: {exc}") from exc
    plan = dataclasses.replace(plan, crds=tuple(verdicts))
    waiting = wait and bool(plan.blocked)
    # When waiting, the "next" line is what this run does itself.
    for line in lines(plan, deleted_crds=frozenset(deleted), with_next=not waiting):
        say(line)
    if not waiting:
        return 0
    say(f"waiting   for what blocks the CRDs to go (at most {timeout:.0f}s; Ctrl-C stops waiting)")
    try:
        if _wait(gateway, plan, ours, timeout, say):
            return 0
    except GatewayError as exc:
        raise UninstallError(f"stopped waiting: {exc}") from exc
    say(f"timed out after {timeout:.0f}s; run it again later: {command(package, namespace)}")
    return 1
