"""Why a ClusterServiceVersion is not Succeeded (OLM v0 §2, §3), in the order OLM checks:

1. a copy (`olm.copiedFrom`): the original, in the operator's namespace, is what to look at;
2. OperatorGroup membership and fit (NoOperatorGroup, TooManyOperatorGroups, the install modes)
   and the provided-API checks between groups (`olm.explain.groups`);
3. Pending: an OperatorCondition that holds the upgrade back; unmet requirements, first of
   all a CRD: owned by another installed CSV (whose own chain follows), owned by no installed
   CSV (install the operator that owns it, or apply it), or owned by this CSV itself but
   absent (a CSV applied by hand brings no CRDs); ServiceAccounts and their rules; APIServices;
   a replaced CSV that has not stepped aside;
4. Failed, Installing, Replacing: the status message, the replacement, what to look at.

Invariants: pure; a CSV already on the chain ends it (`Seen`), so two CSVs that wait on each
other cannot loop.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from olm.api.body import labels, name, namespace
from olm.api.csv import GROUP_FAILURE_REASONS, CsvPhase, CsvReason, RequirementState, RuleState
from olm.api.kinds import Kind
from olm.api.labels import Label
from olm.api.views import CsvView, InstallModeType
from olm.csv.replacement import is_copy, replacers, replaces
from olm.explain import commands
from olm.explain.groups import api_conflict, membership
from olm.explain.model import (
    CRD_KIND,
    NOTHING_SEEN,
    Explanation,
    Fix,
    Link,
    Obj,
    Seen,
    Snapshot,
    healthy,
    in_progress,
    problem,
    status,
)

KIND = Kind.CLUSTER_SERVICE_VERSION.value
MET = (RequirementState.PRESENT.value, RequirementState.DEPLOYMENT_FOUND.value)
IN_PROGRESS_PHASES = (CsvPhase.INSTALL_READY, CsvPhase.INSTALLING, CsvPhase.DELETING)


def _state(csv: Obj) -> str:
    phase, reason = str(status(csv).get("phase") or ""), str(status(csv).get("reason") or "")
    return f"{phase}/{reason}" if reason else phase or "no phase"


def _link(csv: Obj, says: str = "") -> Link:
    return Link(
        KIND, name(csv), namespace(csv), _state(csv), says or str(status(csv).get("message") or "")
    )


def explain_csv(snapshot: Snapshot, csv: Obj, seen: Seen = NOTHING_SEEN) -> Explanation:
    seen = seen.add(KIND, csv)
    csv_name, csv_ns = name(csv), namespace(csv)
    phase, reason = status(csv).get("phase") or "", status(csv).get("reason") or ""
    message = str(status(csv).get("message") or "")
    link = _link(csv)
    if is_copy(csv):
        origin = labels(csv).get(Label.COPIED_FROM.value, "")
        says = f"a copy of the operator installed in namespace {origin}"
        if phase == CsvPhase.SUCCEEDED:
            return healthy(
                _link(csv, says),
                f"CSV {csv_name} is a copy of {origin}/{csv_name}, which Succeeded",
            )
        return problem(
            _link(csv, says),
            f"CSV {csv_name} is a copy; the operator itself is in namespace {origin}",
            Fix(
                "explain the original",
                commands.explain(Kind.CLUSTER_SERVICE_VERSION, csv_name, origin),
            ),
        )
    if phase == CsvPhase.SUCCEEDED:
        return healthy(link, f"CSV {csv_name} Succeeded: its operator is installed and running")
    if not phase:
        return in_progress(link, f"CSV {csv_name} has no phase yet: olm-py has not looked at it")
    if reason in (*GROUP_FAILURE_REASONS, CsvReason.TOO_MANY_OPERATOR_GROUPS):
        group = membership(snapshot, csv_ns, csv)
        if group is not None:
            return group.after(link)
        return _install_modes(snapshot, csv, link)
    if reason == CsvReason.INTER_OPERATOR_GROUP_OWNER_CONFLICT:
        conflict = api_conflict(snapshot, csv)
        if conflict is not None:
            return conflict.after(link)
    if reason == CsvReason.CANNOT_MODIFY_STATIC_OPERATOR_GROUP_PROVIDED_APIS:
        groups = snapshot.groups_in(csv_ns)
        fixes = [
            Fix(
                f"let OperatorGroup {name(g)} record the APIs its operators provide",
                commands.merge_patch(
                    Kind.OPERATOR_GROUP, name(g), csv_ns, {"spec": {"staticProvidedAPIs": False}}
                ),
            )
            for g in groups[:1]
        ]
        return problem(
            link,
            message or f"CSV {csv_name} provides APIs its static OperatorGroup does not list",
            *fixes,
        )
    if reason == CsvReason.OPERATOR_CONDITION_NOT_UPGRADEABLE:
        return _not_upgradeable(snapshot, csv, link)
    if phase == CsvPhase.PENDING:
        return _pending(snapshot, csv, link, seen)
    if phase == CsvPhase.REPLACING:
        return _replacing(snapshot, csv, link, seen)
    if phase in IN_PROGRESS_PHASES:
        return in_progress(link, message or f"CSV {csv_name} is {phase}")
    return _failed(snapshot, csv, link)


def _install_modes(snapshot: Snapshot, csv: Obj, link: Link) -> Explanation:
    csv_name, csv_ns = name(csv), namespace(csv)
    view = CsvView.of(csv)
    supported = [mode for mode in InstallModeType if view.supports(mode)]
    groups = snapshot.groups_in(csv_ns)
    fixes = []
    if groups and InstallModeType.OWN_NAMESPACE in supported:
        fixes.append(
            Fix(
                f"make OperatorGroup {name(groups[0])} target only namespace {csv_ns} (OwnNamespace)",
                commands.merge_patch(
                    Kind.OPERATOR_GROUP,
                    name(groups[0]),
                    csv_ns,
                    {"spec": {"targetNamespaces": [csv_ns]}},
                ),
            )
        )
    elif groups and InstallModeType.ALL_NAMESPACES in supported:
        fixes.append(
            Fix(
                f"make OperatorGroup {name(groups[0])} target every namespace (AllNamespaces)",
                commands.json_patch(
                    Kind.OPERATOR_GROUP,
                    name(groups[0]),
                    csv_ns,
                    [{"op": "remove", "path": "/spec/targetNamespaces"}],
                ),
            )
        )
    cause = (
        str(status(csv).get("message") or "")
        or f"CSV {csv_name} does not support its OperatorGroup's targets"
    )
    return problem(
        link,
        f"{cause} (the operator supports: {', '.join(supported) or 'no install mode'})",
        *fixes,
    )


def _not_upgradeable(snapshot: Snapshot, csv: Obj, link: Link) -> Explanation:
    old = replaces(csv)
    message = str(status(csv).get("message") or "")
    fixes = (
        [
            Fix(
                "wait for the running operator to allow the upgrade, or, if you are sure, override "
                f"its OperatorCondition {old}",
                commands.merge_patch(
                    Kind.OPERATOR_CONDITION,
                    old,
                    namespace(csv),
                    {
                        "spec": {
                            "overrides": [
                                {
                                    "type": "Upgradeable",
                                    "status": "True",
                                    "reason": "Override",
                                    "message": "olm explain",
                                }
                            ]
                        }
                    },
                ),
            )
        ]
        if old
        else []
    )
    return problem(link, message or f"the running CSV {old} does not allow the upgrade", *fixes)


def _pending(snapshot: Snapshot, csv: Obj, link: Link, seen: Seen) -> Explanation:
    csv_name, csv_ns = name(csv), namespace(csv)
    unmet = [e for e in status(csv).get("requirementStatus") or [] if e.get("status") not in MET]
    for entry in unmet:
        if entry.get("kind") == CRD_KIND:
            return _missing_crd(snapshot, csv, entry, link, seen)
    for entry in unmet:
        if entry.get("kind") == "ServiceAccount":
            return _service_account(csv, entry, link)
    if unmet:
        first = unmet[0]
        return problem(
            link,
            f"CSV {csv_name} waits for {first.get('kind')} {first.get('name')}: "
            f"{first.get('message') or first.get('status')}",
            Fix("see every requirement", commands.describe("csv", csv_name, csv_ns)),
        )
    old_name = replaces(csv)
    old = snapshot.csv(old_name, csv_ns) if old_name else None
    if (
        old is not None
        and (status(old).get("phase") or "") != CsvPhase.REPLACING
        and (KIND, csv_ns, old_name) not in seen
    ):
        waiting = explain_csv(snapshot, old, seen)
        step = _link(csv, f"waits for CSV {old_name}, which it replaces, to step aside")
        if waiting.healthy:
            return in_progress(
                step, f"CSV {csv_name} waits for {old_name} to step aside (it does so by itself)"
            )
        return waiting.after(step)
    return in_progress(link, str(status(csv).get("message") or "") or f"CSV {csv_name} is Pending")


def _crd_owners(snapshot: Snapshot, crd: str, csv: Obj) -> list[Obj]:
    return [
        c
        for c in snapshot.all_csvs()
        if not is_copy(c)
        and (namespace(c), name(c)) != (namespace(csv), name(csv))
        and crd in CsvView.of(c).owned_crd_names
    ]


def _packages_owning(snapshot: Snapshot, crd: str) -> list[tuple[str, str, str, str]]:
    """(package, channel, catalog namespace, catalog) whose channel head owns `crd`."""
    found = []
    for manifest in snapshot.package_manifests:
        manifest_status = status(manifest)
        for channel in manifest_status.get("channels") or []:
            description = channel.get("currentCSVDesc") or {}
            owned = (description.get("customresourcedefinitions") or {}).get("owned") or []
            if any(isinstance(o, Mapping) and o.get("name") == crd for o in owned):
                found.append(
                    (
                        str(manifest_status.get("packageName") or name(manifest)),
                        str(channel.get("name") or ""),
                        str(manifest_status.get("catalogSourceNamespace") or namespace(manifest)),
                        str(manifest_status.get("catalogSource") or ""),
                    )
                )
                break
    return sorted(set(found))


def _missing_crd(
    snapshot: Snapshot, csv: Obj, entry: Mapping[str, Any], link: Link, seen: Seen
) -> Explanation:
    csv_name, csv_ns = name(csv), namespace(csv)
    crd = str(entry.get("name") or "")
    said = str(entry.get("message") or entry.get("status") or "")
    owners = _crd_owners(snapshot, crd, csv)
    crd_link_state = "missing" if snapshot.crd(crd) is None else str(entry.get("status") or "")
    if owners:
        owner = owners[0]
        crd_link = Link(
            CRD_KIND,
            crd,
            "",
            crd_link_state,
            f"{said}; owned by CSV {name(owner)} in namespace {namespace(owner)}",
        )
        if (KIND, namespace(owner), name(owner)) in seen:
            return problem(
                crd_link,
                f"CRD {crd} is owned by CSV {name(owner)}, which waits on this CSV in turn",
            ).after(link)
        return explain_csv(snapshot, owner, seen).after(crd_link).after(link)
    own = crd in CsvView.of(csv).owned_crd_names
    crd_link = Link(
        CRD_KIND,
        crd,
        "",
        crd_link_state,
        f"{said}; "
        + ("owned by this CSV, which did not bring it" if own else "owned by no installed CSV"),
    )
    if own:
        cause = (
            f"CSV {csv_name} owns CRD {crd}, which is not in the cluster: a CSV applied by hand "
            "brings no CRDs (an InstallPlan, made for a Subscription, does)"
        )
    else:
        cause = f"CSV {csv_name} requires CRD {crd}, which no installed CSV owns"
    fixes = [
        Fix(
            f"install package {package} (channel {channel}) from CatalogSource {source_ns}/{source}, which owns it",
            commands.subscription(package, csv_ns, package, source, source_ns, channel),
        )
        for package, channel, source_ns, source in _packages_owning(snapshot, crd)[:2]
    ]
    fixes.append(
        Fix(
            f"{'or ' if fixes else ''}apply the CRD {crd} (from the operator's bundle)",
            "kubectl apply -f <file with CustomResourceDefinition " + crd + ">",
        )
    )
    if not own and not fixes[:-1]:
        fixes.insert(
            0,
            Fix(
                f"install the operator that owns CRD {crd} with a Subscription; see what the "
                "catalogs in scope offer",
                commands.get("packagemanifests", csv_ns),
            ),
        )
    return problem(crd_link, cause, *fixes).after(link)


def _service_account(csv: Obj, entry: Mapping[str, Any], link: Link) -> Explanation:
    csv_name, csv_ns = name(csv), namespace(csv)
    account = str(entry.get("name") or "")
    state = str(entry.get("status") or "")
    account_link = Link(
        "ServiceAccount", account, csv_ns, state, str(entry.get("message") or state)
    )
    if state == RequirementState.NOT_PRESENT:
        return problem(
            account_link,
            f"ServiceAccount {account}, which CSV {csv_name} runs as, does not exist: a CSV "
            "applied by hand brings no ServiceAccount or RBAC (an InstallPlan does)",
            Fix(
                "create it, then grant it the rules of the CSV's permissions",
                commands.create_service_account(account, csv_ns),
            ),
        ).after(link)
    fixes = []
    for dependent in entry.get("dependents") or []:
        if dependent.get("status") == RuleState.SATISFIED:
            continue
        scope, _, rule_text = str(dependent.get("message") or "").partition(" rule:")
        try:
            rule = json.loads(rule_text)
        except ValueError:
            continue
        command = (
            commands.grant(rule, account, csv_ns, cluster=scope == "cluster")
            if isinstance(rule, dict)
            else ""
        )
        fixes.append(Fix(f"grant ServiceAccount {account} the {scope} rule {rule_text}", command))
    return problem(
        account_link,
        f"ServiceAccount {account} lacks rules CSV {csv_name} asks for in its permissions",
        *fixes[:4],
    ).after(link)


def _replacing(snapshot: Snapshot, csv: Obj, link: Link, seen: Seen) -> Explanation:
    csvs = {name(c): dict(c) for c in snapshot.csvs if namespace(c) == namespace(csv)}
    found = [c for c in replacers(name(csv), csvs) if (KIND, namespace(c), name(c)) not in seen]
    if not found:
        return in_progress(link, f"CSV {name(csv)} is being replaced")
    successor = found[0]
    step = _link(csv, f"is being replaced by CSV {name(successor)}")
    following = explain_csv(snapshot, successor, seen)
    if following.healthy:
        return in_progress(step, f"CSV {name(successor)} Succeeded; {name(csv)} is deleted next")
    return following.after(step)


def _failed(snapshot: Snapshot, csv: Obj, link: Link) -> Explanation:
    csv_name, csv_ns = name(csv), namespace(csv)
    message = str(status(csv).get("message") or "") or snapshot.last_warning(KIND, csv_name)
    reason = status(csv).get("reason") or ""
    fixes = []
    deployments = [d.name for d in CsvView.of(csv).deployments]
    if reason in (
        CsvReason.INSTALL_CHECK_FAILED,
        CsvReason.COMPONENT_UNHEALTHY,
        CsvReason.INSTALL_COMPONENT_FAILED,
    ):
        fixes += [
            Fix(
                f"see why Deployment {d} is not available",
                commands.describe("deployment", d, csv_ns),
            )
            for d in deployments[:2]
        ]
    fixes.append(
        Fix("see its conditions and requirements", commands.describe("csv", csv_name, csv_ns))
    )
    return problem(link, message or f"CSV {csv_name} is {_state(csv)}", *fixes)
