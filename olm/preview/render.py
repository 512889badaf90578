"""What `olm plan show` prints: the preview of one InstallPlan, for a person about to approve it.

Sections in a fixed order (summary, CSVs, RBAC, CRDs, Deployments, objects, notes); a section
with nothing to say says so in one line. Flagged lines start with `!` so they stand out and can
be grepped; granted rules start with `+`, revoked with `-`.

Invariant: pure (a preview in, lines out).
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from olm.api.installplan import InstallPlanPhase
from olm.api.preview import Change, Flag, RuleFlag, RuleScope
from olm.preview.crds import CrdChange
from olm.preview.deployments import DeploymentChange, FieldChange
from olm.preview.plan import Preview
from olm.preview.rbac import RuleChange, describe_rule

FLAG_WORDS = {
    Flag.WIDENS_RBAC: "widens RBAC",
    Flag.CLUSTER_WIDE: "grants cluster-wide rights",
    Flag.WILDCARDS: "grants wildcard (*) rights",
    Flag.SENSITIVE: "grants sensitive rights (secrets, RBAC, impersonation, exec)",
    Flag.CRD_VERSION_REMOVED: "a CRD stops serving a version",
    Flag.CRD_UNSAFE: "a CRD update fails OLM's upgrade safety check: the plan will fail",
    Flag.CRD_FIELDS_REMOVED: "a CRD drops schema fields",
}


def _rule_line(change: RuleChange) -> str:
    sign = "+" if change.change is Change.GRANTED else "-"
    scope = "cluster-wide" if change.scope is RuleScope.CLUSTER else "namespaced"
    flags = f" [{', '.join(f.value for f in change.flags)}]" if change.flags else ""
    flagged = change.change is Change.GRANTED and any(
        f is not RuleFlag.WIDENS for f in change.flags
    )
    mark = "!" if flagged else " "
    return f"{mark} {sign} {change.change.value:8} {scope:12} {describe_rule(change.rule)}{flags}"


def _crd_lines(crd: CrdChange) -> list[str]:
    if crd.created:
        return [f"  CRD {crd.name}: created (versions {', '.join(crd.versions_added) or '-'})"]
    checked = "existing objects validate" if crd.objects_read else "existing objects not read"
    if not crd.changed:
        return [f"  CRD {crd.name}: versions and fields unchanged; upgrade safety ok ({checked})"]
    out = [f"  CRD {crd.name}:"]
    if crd.versions_added:
        out.append(f"      versions added: {', '.join(crd.versions_added)}")
    in_use = set(crd.removed_in_use)
    counts = dict(crd.objects)
    for version in crd.versions_removed:
        why = []
        if version in crd.stored_versions:
            why.append("a stored version")
        if counts.get(version):
            why.append(f"{counts[version]} existing object(s)")
        detail = f" (in use: {', '.join(why)})" if version in in_use else ""
        mark = "!" if version in in_use else " "
        out.append(f"{mark}     version removed: {version}{detail}")
    if crd.storage:
        out.append(f"      storage version: {crd.storage[0] or '-'} -> {crd.storage[1] or '-'}")
    for version, path in crd.fields_removed:
        out.append(f"!     field removed: {version} {path}")
    if crd.objects:
        existing = ", ".join(f"{v}: {n}" for v, n in crd.objects)
        out.append(f"      existing objects: {existing}")
    if crd.problem:
        out.append(f"!     unsafe: {crd.problem}")
    else:
        out.append(f"      upgrade safety: ok (stored versions kept; {checked})")
    return out


def _field_text(field: FieldChange) -> str:
    if not field.before:
        return f"{field.field} = {field.after}"
    if not field.after:
        return f"{field.field} removed (was {field.before})"
    return f"{field.field}: {field.before} -> {field.after}"


def _deployment_lines(deployment: DeploymentChange) -> list[str]:
    out = [f"  Deployment {deployment.name} ({deployment.csv}): {deployment.change.value}"]
    out.extend(f"      {_field_text(f)}" for f in deployment.fields)
    for container in deployment.containers:
        out.append(f"      container {container.name}: {container.change.value}")
        out.extend(f"        {_field_text(f)}" for f in container.fields)
    return out


def _section(title: str, body: list[str], empty: str) -> list[str]:
    return ["", title, *(body or [f"  {empty}"])]


def _rbac_lines(changes: Sequence[RuleChange]) -> list[str]:
    accounts: dict[tuple[str, str], list[RuleChange]] = {}
    for change in changes:
        accounts.setdefault((change.csv, change.service_account), []).append(change)
    out: list[str] = []
    for (csv, account), listed in accounts.items():
        out.append(f"  ServiceAccount {account or '(none)'} of {csv}:")
        out.extend(f"  {_rule_line(c)}" for c in listed)
    return out


def lines(result: Preview) -> list[str]:
    approved = "approved" if result.approved else "not approved"
    out = [
        f"InstallPlan {result.namespace}/{result.name}: {result.phase or 'no phase yet'}, "
        f"approval {result.approval or '-'} ({approved})"
    ]
    flags = result.flags
    out.append(
        "Summary: " + ("; ".join(FLAG_WORDS[f] for f in flags) if flags else "nothing flagged")
    )
    counts = ", ".join(f"{k.value} {v}" for k, v in result.counts.items())
    out.append(f"  ({counts})")
    upgrades = [
        f"  {u.csv}: {f'replaces {u.replaces}' if u.replaces else 'a fresh install'}"
        for u in result.upgrades
    ]
    out += _section("ClusterServiceVersions:", upgrades, "none")
    rbac = (
        f"RBAC ({len(result.rbac.granted)} granted, {len(result.rbac.revoked)} revoked, "
        f"{result.rbac.unchanged} unchanged):"
    )
    out += _section(rbac, _rbac_lines(result.rbac.changes), "no rule granted or revoked")
    crds = [line for crd in result.crds for line in _crd_lines(crd)]
    out += _section("CRDs:", crds, "none in this plan")
    deployments = [line for d in result.deployments for line in _deployment_lines(d)]
    out += _section("Deployments:", deployments, "unchanged")
    objects = [
        f"  {o.change.value:6} {o.kind} {f'{o.namespace}/' if o.namespace else ''}{o.name}"
        + (f" ({o.why})" if o.why else "")
        for o in result.objects
    ]
    out += _section("Objects:", objects, "none")
    if result.notes:
        out.append("")
        out.extend(f"note: {note}" for note in result.notes)
    if result.phase == InstallPlanPhase.REQUIRES_APPROVAL and not result.approved:
        out.append("")
        patch = shlex.join(
            [
                "kubectl",
                "patch",
                "installplan",
                result.name,
                "-n",
                result.namespace,
                "--type=merge",
                "-p",
                '{"spec":{"approved":true}}',
            ]
        )
        out.append(f"approve: {patch}")
    return out
