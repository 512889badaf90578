"""Per-kind reshaping of the objects a parity snapshot holds, before they are normalized
(tests/parity/normalize.py): what one implementation writes in an order or at a moment the other
does not, and that is not a difference.

- A CSV's `status.conditions` history loses its timing-dependent `Installing/InstallWaiting`
  entries, consecutive repeats collapsed.
- A PackageManifest's `currentCSVDesc.relatedImages` are sorted (packageserver gathers them in a
  Go map: their order changes from call to call).
- An InstallPlan's RBAC steps, which OLM lists in groups per ServiceAccount (the account, then
  its Roles, RoleBindings, ClusterRoles, ClusterRoleBindings) taken from a Go map, have their
  groups sorted by account name within each bundle.

Pure functions on plain dicts; an object that is not shaped as expected comes back unchanged.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def csv_history(csv: Obj) -> Obj:
    """A CSV's `status.conditions` (its phase history) without the timing-dependent
    `Installing/InstallWaiting` entries (written or not depending on when the Deployment's
    status arrives), consecutive repeats collapsed."""
    status = csv.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("conditions"), list):
        return csv
    history: list[Any] = []
    for entry in status["conditions"]:
        if isinstance(entry, dict) and entry.get("reason") == "InstallWaiting":
            continue
        same = (
            history
            and isinstance(entry, dict)
            and (history[-1].get("phase"), history[-1].get("reason"))
            == (entry.get("phase"), entry.get("reason"))
        )
        if not same:
            history.append(entry)
    return {**csv, "status": {**status, "conditions": history}}


def related_images_sorted(manifest: Obj) -> Obj:
    """A PackageManifest with each channel's `currentCSVDesc.relatedImages` sorted."""
    status = manifest.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("channels"), list):
        return manifest
    channels = []
    for channel in status["channels"]:
        desc = channel.get("currentCSVDesc") if isinstance(channel, dict) else None
        images = desc.get("relatedImages") if isinstance(desc, dict) else None
        sortable = isinstance(images, list) and all(isinstance(i, str) for i in images)
        if isinstance(desc, dict) and isinstance(images, list) and sortable:
            channel = {**channel, "currentCSVDesc": {**desc, "relatedImages": sorted(images)}}
        channels.append(channel)
    return {**manifest, "status": {**status, "channels": channels}}


GROUPED_KINDS = ("Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


def _step_kind(step: Any) -> tuple[str, str, str]:
    """(resolving, kind, name) of a plan step, '' where absent."""
    step = step if isinstance(step, dict) else {}
    resource = step.get("resource") if isinstance(step.get("resource"), dict) else {}
    return (str(step.get("resolving") or ""), str(resource.get("kind")), str(resource.get("name")))


def rbac_groups_sorted(plan: Obj) -> Obj:
    """An InstallPlan whose per-ServiceAccount RBAC step groups are sorted by account name
    within each bundle: a group is a ServiceAccount step and the Role, RoleBinding,
    ClusterRole and ClusterRoleBinding steps of the same bundle right after it."""
    status = plan.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("plan"), list):
        return plan
    steps: list[Any] = list(status["plan"])
    out: list[Any] = []
    index = 0
    while index < len(steps):
        resolving, kind, _ = _step_kind(steps[index])
        if kind != "ServiceAccount":
            out.append(steps[index])
            index += 1
            continue
        groups: list[list[Any]] = []
        while index < len(steps) and _step_kind(steps[index])[:2] == (resolving, "ServiceAccount"):
            group = [steps[index]]
            index += 1
            while index < len(steps) and (
                _step_kind(steps[index])[0] == resolving
                and _step_kind(steps[index])[1] in GROUPED_KINDS
            ):
                group.append(steps[index])
                index += 1
            groups.append(group)
        for group in sorted(groups, key=lambda g: _step_kind(g[0])[2]):
            out.extend(group)
    return {**plan, "status": {**status, "plan": out}}


BY_KIND = {
    "ClusterServiceVersion": csv_history,
    "PackageManifest": related_images_sorted,
    "InstallPlan": rbac_groups_sorted,
}
