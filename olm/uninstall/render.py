"""What `olm uninstall-operator` prints: one line per object, then the next command.

Invariant: pure (a plan in, lines out). Every line starts with one word saying who acts on the
object (`deleted`, `gc`, `olm-py`, `kept`, `left`, `waiting`), so the output reads as a list of
what happened and can be grepped; a dry run says `would delete` and writes nothing.
"""

from __future__ import annotations

import shlex

from olm.api.cleanup import CLEANUP_ANNOTATION, CleanupPolicy
from olm.uninstall.crds import CrdVerdict
from olm.uninstall.plan import CRD_KIND, Plan


def command(package: str, namespace: str, *extra: str) -> str:
    if not package:
        return shlex.join(["olm", "uninstall-operator", "--pending", *extra])
    return shlex.join(["olm", "uninstall-operator", package, "-n", namespace, *extra])


def crd_line(verdict: CrdVerdict, *, dry_run: bool = False, deleted: bool = False) -> str:
    name = f"{CRD_KIND} {verdict.name}"
    if verdict.gone:
        return f"gone      {name}: {verdict.gone}"
    if verdict.delete:
        if deleted:
            return f"deleted   {name}: no custom resources remain and no other operator needs it"
        return f"{'would delete' if dry_run else 'deletes'} {name}: unused"
    if verdict.policy is CleanupPolicy.KEEP:
        uses = f" ({'; '.join(verdict.blockers)})" if verdict.blockers else ""
        return f"kept      {name}: cleanup policy keep{uses}"
    return f"kept      {name}: {'; '.join(verdict.blockers)}"


def lines(
    plan: Plan,
    *,
    dry_run: bool = False,
    deleted_crds: frozenset[str] = frozenset(),
    with_next: bool = True,
) -> list[str]:
    """The report of a run (after it, or instead of it with `dry_run`); `with_next`: end with
    the command to run next, if any."""
    out: list[str] = []
    what = (
        f"{plan.package} from namespace {plan.namespace}"
        if plan.package
        else "pending CRD cleanups"
    )
    out.append(f"Uninstalling {what}; CRDs: {plan.policy.value} ({plan.policy_source})")
    out.extend(f"note      {note}" for note in plan.notes)
    if not plan.found:
        out.append(
            f"nothing to do: no Subscription, ClusterServiceVersion or CRD of package {plan.package} "
            f"in namespace {plan.namespace}"
            if plan.package
            else f"nothing to do: no CRD is annotated {CLEANUP_ANNOTATION}=crds-when-unused"
        )
        out.extend(f"left      {left.ref}: {left.why}" for left in plan.left)
        return out
    verb = "would delete" if dry_run else "deleted  "
    out.extend(f"{verb} {ref}" for ref in plan.deletes)
    then = "would then remove" if dry_run else "removes"
    for removed in plan.removed:
        who = "gc       " if removed.by == "garbage collector" else "olm-py   "
        out.append(f"{who} {removed.ref} ({removed.by} {then} it: {removed.why})")
    for verdict in plan.crds:
        if verdict.delete and dry_run:
            out.append(crd_line(verdict, dry_run=True))
        else:
            out.append(crd_line(verdict, deleted=verdict.name in deleted_crds))
    out.extend(f"left      {left.ref}: {left.why}" for left in plan.left)
    if with_next:
        out.extend(next_steps(plan, dry_run=dry_run))
    return out


def next_steps(plan: Plan, *, dry_run: bool = False) -> list[str]:
    if dry_run:
        return ["next      run it without --dry-run to do this"]
    blocked = plan.blocked
    if blocked:
        crs = any("remain" in b for v in blocked for b in v.blockers)
        what = (
            "delete those custom resources (olm-py never deletes operands)"
            if crs
            else "remove what blocks them"
        )
        return [
            f"next      {what}, then run the same command again: "
            f"{command(plan.package, plan.namespace)} (or add --wait to wait for it here)"
        ]
    kept = [v for v in plan.crds if v.policy is CleanupPolicy.KEEP and not v.gone]
    if kept:
        return [
            "next      to delete the kept CRDs once nothing uses them: "
            + command(plan.package, plan.namespace, "--crds-when-unused")
        ]
    return []
