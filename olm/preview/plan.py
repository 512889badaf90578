"""The upgrade preview of one InstallPlan: what approving it does, from plain data.

Read from the plan's `status.plan` steps (olm.installplan.stepref.step_manifest, as the
InstallPlan controller reads them) against what the cluster has (`Snapshot`):
- each CSV step is paired with the installed CSV it replaces (`replaced_csv`: the Subscription
  moving to it names its installedCSV; else `spec.replaces`, else `spec.skips`), and the two
  install strategies are compared: RBAC (olm.preview.rbac) and Deployments
  (olm.preview.deployments); a CSV replacing nothing is a fresh install (everything granted);
- each CRD step is compared with the live CRD (olm.preview.crds, whose safety verdict is the
  InstallPlan's own check);
- objects: every step's object is created (absent) or updated (present); the replaced CSV is
  deleted once its successor succeeds, and with it (garbage collector) the Deployments and the
  generated RBAC (olm.installplan.steps.rbac_for) the new CSV does not bring again.
`Preview.flags` are what a person must not miss (olm.api.preview.Flag); `summary` is the
compact JSON of the `olm-py.io/preview-summary` annotation (written once by the InstallPlan
controller, `needs_summary`), `as_json` the full `-o json`.

Invariants: pure (reads only its arguments, changes none); the same snapshot gives the same
preview, in the plan's step order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from olm.api import body
from olm.api.installplan import DONE_STEP_STATUSES, TERMINAL_PHASES, InstallPlanPhase
from olm.api.preview import PREVIEW_SUMMARY_ANNOTATION, Change, Count, Flag, RuleFlag
from olm.installplan.handmade import owned_by_subscription
from olm.installplan.stepref import CRD_KIND, CSV_KIND, Ref, step_manifest, step_ref
from olm.installplan.steps import rbac_for
from olm.preview.crds import CrdChange, CustomResources, crd_change
from olm.preview.deployments import DeploymentChange, FieldChange, deployment_changes
from olm.preview.rbac import RbacDiff, RuleChange, rbac_diff


@dataclass(frozen=True)
class Snapshot:
    plan: Mapping[str, Any]
    # The live object of each step's ref (None: absent). A ref not listed is read as absent.
    live: Mapping[Ref, Mapping[str, Any] | None] = field(default_factory=dict)
    # The CSVs of the plan's namespace, by name (which one a new CSV replaces, and its rules).
    installed_csvs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # The Subscriptions of the plan's namespace (the one moving to a CSV names what it replaces).
    subscriptions: Sequence[Mapping[str, Any]] = ()
    # (CRD name, version) -> existing objects; None: not read (CRD safety judges stored
    # versions only).
    custom_resources: CustomResources | None = None
    # The namespace's OperatorGroup targets every namespace: namespaced rules are cluster-wide.
    all_namespaces: bool = False


@dataclass(frozen=True)
class Upgrade:
    csv: str
    replaces: str | None  # None: a fresh install


@dataclass(frozen=True)
class ObjectChange:
    change: Change  # CREATE, UPDATE or DELETE
    kind: str
    namespace: str
    name: str
    why: str = ""


@dataclass(frozen=True)
class Preview:
    name: str
    namespace: str
    phase: str
    approval: str
    approved: bool
    upgrades: tuple[Upgrade, ...] = ()
    rbac: RbacDiff = field(default_factory=lambda: RbacDiff((), 0))
    crds: tuple[CrdChange, ...] = ()
    deployments: tuple[DeploymentChange, ...] = ()
    objects: tuple[ObjectChange, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def flags(self) -> tuple[Flag, ...]:
        granted = self.rbac.granted
        on = {
            Flag.WIDENS_RBAC: any(RuleFlag.WIDENS in c.flags for c in granted),
            Flag.CLUSTER_WIDE: any(RuleFlag.CLUSTER_WIDE in c.flags for c in granted),
            Flag.WILDCARDS: any(RuleFlag.WILDCARD in c.flags for c in granted),
            Flag.SENSITIVE: any(RuleFlag.SENSITIVE in c.flags for c in granted),
            Flag.CRD_VERSION_REMOVED: any(c.versions_removed for c in self.crds),
            Flag.CRD_UNSAFE: any(c.problem for c in self.crds),
            Flag.CRD_FIELDS_REMOVED: any(c.fields_removed for c in self.crds),
        }
        return tuple(flag for flag in Flag if on[flag])

    @property
    def counts(self) -> dict[Count, int]:
        def objects(change: Change) -> int:
            return sum(1 for o in self.objects if o.change is change)

        return {
            Count.GRANTED: len(self.rbac.granted),
            Count.REVOKED: len(self.rbac.revoked),
            Count.CRDS_CHANGED: sum(1 for c in self.crds if c.changed),
            Count.DEPLOYMENTS_CHANGED: len(self.deployments),
            Count.CREATED: objects(Change.CREATE),
            Count.UPDATED: objects(Change.UPDATE),
            Count.DELETED: objects(Change.DELETE),
        }


def replaced_csv(
    new: Mapping[str, Any],
    installed: Mapping[str, Mapping[str, Any]],
    subscriptions: Sequence[Mapping[str, Any]] = (),
) -> str | None:
    """The installed CSV that `new` replaces, or None for a fresh install."""
    name = str(body.meta(new).get("name", ""))
    for subscription in subscriptions:
        status = subscription.get("status") or {}
        current, old = status.get("currentCSV"), status.get("installedCSV")
        if current == name and old and old != name and old in installed:
            return str(old)
    spec = new.get("spec") or {}
    for candidate in [spec.get("replaces"), *(spec.get("skips") or [])]:
        if candidate and candidate != name and candidate in installed:
            return str(candidate)
    return None


def _deleted_with(
    old: Mapping[str, Any], new: Mapping[str, Any], namespace: str, planned: set[Ref]
) -> list[ObjectChange]:
    """The replaced CSV, and what goes with it that the new CSV does not bring again."""
    old_name = str(body.meta(old).get("name", ""))
    new_name = str(body.meta(new).get("name", ""))
    deleted = [
        ObjectChange(
            Change.DELETE,
            CSV_KIND,
            namespace,
            old_name,
            f"replaced: deleted once {new_name} has succeeded",
        )
    ]
    why = f"with {old_name}"
    new_deployments = {c.name for c in deployment_changes(new, None)}
    deleted.extend(
        ObjectChange(Change.DELETE, "Deployment", namespace, c.name, why)
        for c in deployment_changes(old, None)
        if c.name not in new_deployments
    )
    for obj in rbac_for(dict(old), namespace):
        ref = step_ref(obj)
        if obj["kind"] != "ServiceAccount" and ref not in planned:
            deleted.append(ObjectChange(Change.DELETE, ref[1], ref[2], ref[3], why))
    return deleted


def preview(snapshot: Snapshot) -> Preview:
    plan = snapshot.plan
    meta, spec, status = (
        body.meta(plan),
        plan.get("spec") or {},
        plan.get("status") or {},
    )
    namespace = str(meta.get("namespace") or "")
    notes: list[str] = []
    manifests: list[dict[str, Any]] = []
    for index, entry in enumerate(status.get("plan") or []):
        manifest = step_manifest(entry) if isinstance(entry, Mapping) else None
        if manifest is None:
            resource = (entry.get("resource") if isinstance(entry, Mapping) else None) or {}
            notes.append(
                f"step {index} ({resource.get('kind', '?')} {resource.get('name', '?')}) has no "
                "readable manifest: not previewed"
            )
            continue
        manifests.append(manifest)
    if not manifests:
        notes.append("the plan lists no steps yet: nothing to preview")
    if status.get("phase") in TERMINAL_PHASES:
        notes.append(
            f"this plan has already run ({status['phase']}): it is compared with what is "
            "installed now"
        )
    planned = {step_ref(m) for m in manifests}
    upgrades: list[Upgrade] = []
    changes: list[RuleChange] = []
    unchanged = 0
    deployments: list[DeploymentChange] = []
    crds: list[CrdChange] = []
    objects: list[ObjectChange] = []
    deleted: list[ObjectChange] = []
    for manifest in manifests:
        ref = step_ref(manifest)
        live = snapshot.live.get(ref)
        objects.append(ObjectChange(Change.UPDATE if live is not None else Change.CREATE, *ref[1:]))
        if ref[1] == CSV_KIND:
            old_name = replaced_csv(manifest, snapshot.installed_csvs, snapshot.subscriptions)
            old = snapshot.installed_csvs.get(old_name) if old_name else None
            upgrades.append(Upgrade(ref[3], old_name))
            diff = rbac_diff(manifest, old, all_namespaces=snapshot.all_namespaces)
            changes.extend(diff.changes)
            unchanged += diff.unchanged
            deployments.extend(deployment_changes(manifest, old))
            if old is not None:
                deleted.extend(_deleted_with(old, manifest, ref[2] or namespace, planned))
        elif ref[1] == CRD_KIND:
            crds.append(crd_change(manifest, live, snapshot.custom_resources))
    return Preview(
        name=str(meta.get("name") or ""),
        namespace=namespace,
        phase=str(status.get("phase") or ""),
        approval=str(spec.get("approval") or ""),
        approved=bool(spec.get("approved")),
        upgrades=tuple(upgrades),
        rbac=RbacDiff(tuple(changes), unchanged),
        crds=tuple(crds),
        deployments=tuple(deployments),
        objects=(*objects, *deleted),
        notes=tuple(notes),
    )


def needs_summary(plan: Mapping[str, Any]) -> bool:
    """Should the InstallPlan controller annotate `plan` with its summary? Once, for a plan a
    Subscription made, listing steps, not yet run (waiting for approval, or Installing with no
    step done): afterwards a preview would compare the plan with its own results."""
    meta, status = body.meta(plan), plan.get("status") or {}
    steps = [e for e in status.get("plan") or [] if isinstance(e, Mapping)]
    return (
        PREVIEW_SUMMARY_ANNOTATION not in (meta.get("annotations") or {})
        and owned_by_subscription(plan)
        and status.get("phase") in (InstallPlanPhase.REQUIRES_APPROVAL, InstallPlanPhase.INSTALLING)
        and bool(steps)
        and not any(e.get("status") in DONE_STEP_STATUSES for e in steps)
    )


def summary(result: Preview) -> dict[str, Any]:
    """The `olm-py.io/preview-summary` annotation's content: flags and counts."""
    return {
        "flags": [f.value for f in result.flags],
        **{k.value: v for k, v in result.counts.items()},
    }


def summary_annotation(result: Preview) -> str:
    return json.dumps(summary(result), separators=(",", ":"))


def as_json(result: Preview) -> dict[str, Any]:
    """The whole preview (`olm plan show -o json`); docs/plan-preview.md describes the shape."""
    return {
        "installPlan": {
            "name": result.name,
            "namespace": result.namespace,
            "phase": result.phase,
            "approval": result.approval,
            "approved": result.approved,
        },
        "summary": summary(result),
        "csvs": [{"name": u.csv, "replaces": u.replaces} for u in result.upgrades],
        "rbac": {
            "unchanged": result.rbac.unchanged,
            "rules": [
                {
                    "change": c.change.value,
                    "csv": c.csv,
                    "serviceAccount": c.service_account,
                    "scope": c.scope.value,
                    "rule": c.rule.as_dict(),
                    "flags": [f.value for f in c.flags],
                }
                for c in result.rbac.changes
            ],
        },
        "crds": [
            {
                "name": c.name,
                "created": c.created,
                "versionsAdded": list(c.versions_added),
                "versionsRemoved": list(c.versions_removed),
                "versionsRemovedInUse": list(c.removed_in_use),
                "storageVersion": {"from": c.storage[0], "to": c.storage[1]} if c.storage else None,
                "storedVersions": list(c.stored_versions),
                "fieldsRemoved": [{"version": v, "field": f} for v, f in c.fields_removed],
                "existingObjects": dict(c.objects) if c.objects_read else None,
                "safe": c.problem is None,
                "problem": c.problem,
            }
            for c in result.crds
        ],
        "deployments": [
            {
                "csv": d.csv,
                "name": d.name,
                "change": d.change.value,
                "fields": [_field(f) for f in d.fields],
                "containers": [
                    {
                        "name": c.name,
                        "change": c.change.value,
                        "fields": [_field(f) for f in c.fields],
                    }
                    for c in d.containers
                ],
            }
            for d in result.deployments
        ],
        "objects": [
            {
                "change": o.change.value,
                "kind": o.kind,
                "namespace": o.namespace,
                "name": o.name,
                "why": o.why,
            }
            for o in result.objects
        ],
        "notes": list(result.notes),
    }


def _field(change: FieldChange) -> dict[str, str]:
    return {"field": change.field, "from": change.before, "to": change.after}
