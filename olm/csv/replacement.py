"""A CSV's replacement chain (OLM v0 §3.1, `spec.replaces`) and the shapes of it OLM never
settles: a cycle, two CSVs that replace the same one, and two unrelated CSVs that claim the
same Deployment.

OLM v0 leaves the CSVs of a cycle `Pending` forever (each waits for the other to step
aside), lets whichever replacer its map iteration meets first take over the old CSV (the
others install too and fight over its Deployments), and PUTs a Deployment whatever CSV owns
it. olm-py judges each shape from the CSVs themselves, so every CSV involved gets a stable,
explained answer and nothing is written twice.

Invariants:
- Pure: plain dicts in, names and messages out.
- Copied CSVs and CSVs being deleted take no part in a chain (they are on their way out).
- Every walk is cycle-safe and visits each CSV at most once.
- Of several CSVs that replace the same one, the chosen one depends only on fields the
  controller never writes (`metadata.creationTimestamp`, then the name), so the choice cannot
  flip as statuses change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from olm.api import body
from olm.api.csv import CsvReason
from olm.api.labels import Label
from olm.api.views import CsvView

Csv = dict[str, Any]


def is_copy(csv: Mapping[str, Any]) -> bool:
    return (
        Label.COPIED_FROM in body.labels(csv)
        or (csv.get("status") or {}).get("reason") == CsvReason.COPIED
    )


def replaces(csv: Mapping[str, Any]) -> str:
    """The name in `spec.replaces`, or "" when unset or naming the CSV itself (ignored)."""
    value = (csv.get("spec") or {}).get("replaces")
    if not isinstance(value, str) or not value or value == body.name(csv):
        return ""
    return value


def _active(csvs: Mapping[str, Csv]) -> dict[str, Csv]:
    return {
        name: csv
        for name, csv in csvs.items()
        if not is_copy(csv) and not body.meta(csv).get("deletionTimestamp")
    }


def _age_key(csv: Mapping[str, Any]) -> tuple[str, str]:
    # RFC 3339 timestamps in UTC sort as text; a missing one sorts first.
    return (str(body.meta(csv).get("creationTimestamp") or ""), body.name(csv))


def replacers(name: str, csvs: Mapping[str, Csv]) -> list[Csv]:
    """The active CSVs whose `spec.replaces` names `name`, oldest first."""
    found = [c for n, c in _active(csvs).items() if n != name and replaces(c) == name]
    return sorted(found, key=_age_key)


def chosen_replacer(name: str, csvs: Mapping[str, Csv]) -> Csv | None:
    """The one CSV allowed to replace `name`: the oldest of its replacers (OLM: any one)."""
    found = replacers(name, csvs)
    return found[0] if found else None


def cycle(name: str, csvs: Mapping[str, Csv]) -> list[str] | None:
    """The CSVs of the `spec.replaces` cycle that `name` is on, starting at `name`, or None.

    A CSV whose chain only leads into a cycle is not on it.
    """
    active = _active(csvs)
    path = [name]
    current = active.get(name)
    while current is not None:
        following = replaces(current)
        if not following or following not in active:
            return None
        if following == name:
            return path
        if following in path:
            return None
        path.append(following)
        current = active[following]
    return None


def lineage(name: str, csvs: Mapping[str, Csv]) -> set[str]:
    """The CSVs connected to `name` through `spec.replaces`, in either direction: the versions
    of one operator. A Deployment may pass between them (that is how an upgrade takes it
    over); which of them may act is settled by the replacement rules (cycle, one replacer).
    """
    active = _active(csvs)
    neighbours: dict[str, set[str]] = {n: set() for n in active}
    for other, csv in active.items():
        older = replaces(csv)
        if older in active:
            neighbours[other].add(older)
            neighbours[older].add(other)
    family = {name}
    todo = [name]
    while todo:
        for near in neighbours.get(todo.pop(), set()) - family:
            family.add(near)
            todo.append(near)
    return family


def newest_in_chain(start: Csv, csvs: Mapping[str, Csv]) -> Iterable[Csv]:
    """`start`, then the chosen replacer of each in turn (cycle-safe)."""
    seen: set[str] = set()
    current: Csv | None = start
    while current is not None and body.name(current) not in seen:
        seen.add(body.name(current))
        yield current
        current = chosen_replacer(body.name(current), csvs)


def _cycle_message(path: list[str]) -> str:
    steps = ", ".join(f"{a} replaces {b}" for a, b in zip(path, [*path[1:], path[0]], strict=True))
    return (
        f"spec.replaces forms a cycle ({steps}), so none of these ClusterServiceVersions can "
        "install or be replaced. Fix spec.replaces so the chain has a start: remove it from the "
        "oldest one, or point it at the ClusterServiceVersion that one really upgrades."
    )


def _rival_message(me: str, old: str, winner: str) -> str:
    return (
        f"spec.replaces names {old}, which ClusterServiceVersion {winner} already replaces; "
        f"only one ClusterServiceVersion may replace another. Delete {me}, or set its "
        f"spec.replaces to {winner} to upgrade from {winner} instead."
    )


def replacement_problem(csv: Csv, csvs: Mapping[str, Csv]) -> str | None:
    """Why `spec.replaces` cannot be followed, in words that name the field and the fix."""
    name = body.name(csv)
    found = cycle(name, csvs)
    if found:
        return _cycle_message(found)
    old = replaces(csv)
    if old:
        winner = chosen_replacer(old, {**csvs, name: csv})
        if winner is not None and body.name(winner) != name:
            return _rival_message(name, old, body.name(winner))
    return None


def deployment_owner_problem(
    csv: Csv,
    csvs: Mapping[str, Csv],
    deployment_names: Iterable[str],
    deployments: Mapping[str, Mapping[str, Any]],
) -> str | None:
    """A Deployment this CSV would install that another live CSV outside its lineage owns.

    Taking it would start a tug of war: each CSV's health check would see the other's labels
    and put its own back. A Deployment whose owner is gone (or in the lineage) is taken over,
    as in an upgrade.
    """
    name, namespace = body.name(csv), body.meta(csv).get("namespace")
    active = _active(csvs)
    family: set[str] | None = None
    for deployment in deployment_names:
        existing = deployments.get(deployment)
        if existing is None:
            continue
        labels = body.labels(existing)
        owner = labels.get(Label.OWNER)
        if not owner or owner == name or labels.get(Label.OWNER_NAMESPACE) != namespace:
            continue
        if owner not in active:
            continue
        family = family if family is not None else lineage(name, {**csvs, name: csv})
        if owner in family:
            continue
        return (
            f"Deployment {deployment} (spec.install.spec.deployments) belongs to "
            f"ClusterServiceVersion {owner}, which this one does not replace; two operators "
            f"cannot share a Deployment. Rename the deployment, delete {owner}, or set "
            f"spec.replaces: {owner} if this ClusterServiceVersion upgrades it."
        )
    return None


def _chain(csv: Csv, csvs: Mapping[str, Csv]) -> set[str]:
    """Names in this CSV's replacement chain, both directions. Unlike `lineage`, copies and
    CSVs being deleted still link the chain (as OLM's CRD owner check does)."""
    names = {csv["metadata"]["name"]}
    changed = True
    while changed:
        changed = False
        for other in csvs.values():
            other_name = other["metadata"]["name"]
            replaces = (other.get("spec") or {}).get("replaces")
            if other_name in names and replaces and replaces not in names:
                names.add(replaces)
                changed = True
            if replaces in names and other_name not in names:
                names.add(other_name)
                changed = True
    return names


def crd_owner_problem(csv: Csv, csvs: Mapping[str, Csv]) -> str | None:
    """An owned CRD another CSV of the namespace, outside this one's chain, owns too."""
    mine = CsvView.of(csv).owned_crd_names
    chain = _chain(csv, csvs)
    for other in csvs.values():
        other_name = other["metadata"]["name"]
        if other_name in chain or is_copy(other):
            continue
        shared = mine & CsvView.of(other).owned_crd_names
        if shared:
            return f"conflicting CRD owner in namespace: {', '.join(sorted(shared))} is also owned by ClusterServiceVersion {other_name}"
    return None
