"""The I/O of `olm plan show`: read the plan and what it would change, preview, print.

Invariants:
- Read-only: it never writes to the cluster (not even the summary annotation).
- It reads with the user's own kubeconfig: what the user may not read is said in a note and
  left out of the comparison, never worked around; only the InstallPlan itself is required.
- The CRD safety verdict is the InstallPlan's own (olm.installplan.crdsafety via
  olm.preview.crds), over the custom resources of every version the live CRD serves, listed
  in all namespaces.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from olm.api.kinds import KINDS, Kind
from olm.installplan.stepref import CRD_KIND, Ref, step_manifest, step_ref
from olm.kube.connect import Unreachable, user_gateway
from olm.kube.errors import GatewayError, NotFound
from olm.kube.gateway import Gateway
from olm.kube.protocol import KubeGateway
from olm.kube.resources import path_for
from olm.preview.crds import versions_to_read
from olm.preview.plan import Preview, Snapshot, as_json, preview
from olm.preview.render import lines

Obj = dict[str, Any]


class PlanShowError(RuntimeError):
    """Something the user can act on; printed as one line by the olm command."""


def gateway_for(kubeconfig: str | None) -> Gateway:
    try:
        return user_gateway(kubeconfig, "olm-py-plan-show")
    except Unreachable as exc:
        raise PlanShowError(str(exc)) from None


def _items(gateway: KubeGateway, kind: Kind, namespace: str) -> list[Obj]:
    info = KINDS[kind]
    return gateway.list_path(path_for(info.api_version, info.kind.value, namespace))


def _custom_resources(
    gateway: KubeGateway, live: Obj, notes: list[str]
) -> dict[tuple[str, str], list[Obj]]:
    spec = live.get("spec") or {}
    name, plural = live["metadata"]["name"], (spec.get("names") or {}).get("plural")
    found: dict[tuple[str, str], list[Obj]] = {}
    for version in versions_to_read(live):
        try:
            found[(name, version)] = gateway.list_path(
                f"/apis/{spec.get('group')}/{version}/{plural}"
            )
        except NotFound:
            found[(name, version)] = []
        except GatewayError as exc:
            notes.append(f"cannot list the {version} objects of CRD {name}: {exc}")
    return found


def read(gateway: KubeGateway, name: str, namespace: str) -> tuple[Snapshot, list[str]]:
    """The snapshot `preview` needs, and notes on what could not be read."""
    info = KINDS[Kind.INSTALL_PLAN]
    try:
        plan = gateway.get(info.api_version, info.kind.value, namespace, name)
    except NotFound:
        raise PlanShowError(
            f"no InstallPlan {name} in namespace {namespace} "
            f"(list them: kubectl get installplan -n {namespace})"
        ) from None
    except GatewayError as exc:
        raise PlanShowError(f"cannot read InstallPlan {namespace}/{name}: {exc}") from exc
    notes: list[str] = []
    live: dict[Ref, Obj | None] = {}
    custom_resources: dict[tuple[str, str], list[Obj]] = {}
    for entry in (plan.get("status") or {}).get("plan") or []:
        manifest = step_manifest(entry) if isinstance(entry, dict) else None
        if manifest is None:
            continue
        ref = step_ref(manifest)
        try:
            live[ref] = gateway.get(ref[0], ref[1], ref[2] or None, ref[3])
        except NotFound:
            live[ref] = None
        except GatewayError as exc:
            notes.append(f"cannot read {ref[1]} {ref[3]}: {exc} (shown as created)")
            continue
        found = live[ref]
        if ref[1] == CRD_KIND and found is not None:
            custom_resources.update(_custom_resources(gateway, found, notes))
    reads: dict[str, list[Obj]] = {}
    for label, kind in (
        ("ClusterServiceVersions", Kind.CLUSTER_SERVICE_VERSION),
        ("Subscriptions", Kind.SUBSCRIPTION),
        ("OperatorGroups", Kind.OPERATOR_GROUP),
    ):
        try:
            reads[label] = _items(gateway, kind, namespace)
        except GatewayError as exc:
            notes.append(f"cannot list the {label} of {namespace}: {exc}")
            reads[label] = []
    groups = reads["OperatorGroups"]
    all_namespaces = len(groups) == 1 and (
        (groups[0].get("status") or {}).get("namespaces") or []
    ) == [""]
    snapshot = Snapshot(
        plan,
        live,
        {c["metadata"]["name"]: c for c in reads["ClusterServiceVersions"]},
        reads["Subscriptions"],
        custom_resources,
        all_namespaces,
    )
    return snapshot, notes


def show(
    gateway: KubeGateway, name: str, namespace: str, output: str, say: Callable[[str], None] = print
) -> Preview:
    snapshot, notes = read(gateway, name, namespace)
    result = preview(snapshot)
    if notes:
        result = replace(result, notes=(*result.notes, *notes))
    if output == "json":
        say(json.dumps(as_json(result), indent=2))
    else:
        for line in lines(result):
            say(line)
    return result
