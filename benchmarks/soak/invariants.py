"""The soak's invariants, judged on recorded watch events: nothing the user has is lost.

Pure: every function takes plain data (`Seen` events of one namespace, the times the user
deleted things, a log's text, samples) and returns what it found, as `Violation`s or numbers.

- operands keep their identity: the Memcached instance `cache-a` and its Deployment are never
  deleted and never get a new UID, unless the user deleted the instance or the namespace
  (`allowed`: times of those actions) since that UID was first seen;
- a live CSV (its latest state Succeeded, no deletionTimestamp, and still so `SETTLE` seconds
  later) never loses a Deployment, ServiceAccount or Role of its own: its install
  Deployments by name, its ServiceAccounts by name, Roles it owns (ownerReference);
- at most one InstallPlan per (Subscription UID, set of CSV names);
- `olm run`'s log has no Python traceback;
- `slope`: least-squares slope of samples, per hour (RSS, open fds).

Events of different kinds come from different watch streams, so their order across kinds is
only good to about a second: `SETTLE` gives the CSV's own deletion that long to show up.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.watching import Seen

SETTLE = 5.0  # seconds of slack between events of different watch streams
OPERAND_KINDS = ("memcached", "deployment")
OPERAND = "cache-a"


@dataclass(frozen=True)
class Violation:
    invariant: str  # operand-identity | live-csv-objects | installplans | traceback | convergence
    namespace: str
    at: float  # monotonic seconds (0.0 when not tied to a moment)
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {
            "invariant": self.invariant,
            "namespace": self.namespace,
            "at": round(self.at, 3),
            "detail": self.detail,
        }


def _uid(seen: Seen) -> str:
    return str(seen.obj["metadata"].get("uid", ""))


def operand_identity(
    namespace: str, history: Iterable[Seen], allowed: Sequence[float]
) -> list[Violation]:
    """Deletions and new UIDs of the operand not explained by a user's deletion (`allowed`:
    times the user deleted the instance or the namespace)."""
    found: list[Violation] = []
    current: dict[str, tuple[str, float]] = {}  # kind -> (uid, first seen)

    def explained(since: float, until: float) -> bool:
        return any(since <= moment <= until + SETTLE for moment in allowed)

    for seen in sorted(history, key=lambda s: s.at):
        if seen.kind not in OPERAND_KINDS or seen.name != OPERAND:
            continue
        uid = _uid(seen)
        known = current.get(seen.kind)
        if seen.type == "DELETED":
            since = known[1] if known else seen.at
            if not explained(since, seen.at):
                found.append(
                    Violation(
                        "operand-identity",
                        namespace,
                        seen.at,
                        f"{seen.kind}/{OPERAND} {uid} deleted, not by the user",
                    )
                )
            current.pop(seen.kind, None)
            continue
        if known is None:
            current[seen.kind] = (uid, seen.at)
        elif known[0] != uid:
            if not explained(known[1], seen.at):
                found.append(
                    Violation(
                        "operand-identity",
                        namespace,
                        seen.at,
                        f"{seen.kind}/{OPERAND} recreated: {known[0]} -> {uid}",
                    )
                )
            current[seen.kind] = (uid, seen.at)
    return found


def _live(csv: dict[str, Any]) -> bool:
    return (
        (csv.get("status") or {}).get("phase") == "Succeeded"
        and not csv["metadata"].get("deletionTimestamp")
        and "olm.copiedFrom" not in (csv["metadata"].get("labels") or {})
    )


def _owns(csv: dict[str, Any], kind: str, obj: dict[str, Any]) -> bool:
    name = obj["metadata"]["name"]
    install = ((csv.get("spec") or {}).get("install") or {}).get("spec") or {}
    deployments = install.get("deployments") or []
    if kind == "deployment":
        return any(d.get("name") == name for d in deployments)
    if kind == "serviceaccount":
        accounts = {
            ((d.get("spec") or {}).get("template", {}).get("spec") or {}).get("serviceAccountName")
            for d in deployments
        } | {p.get("serviceAccountName") for p in install.get("permissions") or []}
        return name in accounts
    refs = obj["metadata"].get("ownerReferences") or []
    return any(
        r.get("kind") == "ClusterServiceVersion" and r.get("name") == csv["metadata"]["name"]
        for r in refs
    )


def live_csv_objects(
    namespace: str, history: Iterable[Seen], gone: Sequence[tuple[float, float]]
) -> list[Violation]:
    """Deployments, ServiceAccounts and Roles deleted while a CSV that owns them was live and
    stayed live for `SETTLE` seconds more; `gone`: (deleted, recreated) times of the
    namespace, whose deletions are the namespace's own."""
    events = sorted(history, key=lambda s: s.at)
    csv_states: dict[str, list[Seen]] = defaultdict(list)
    for seen in events:
        if seen.kind == "csv":
            csv_states[seen.name].append(seen)

    def live_through(name: str, start: float, stop: float) -> dict[str, Any] | None:
        """The CSV's state at `start` if it was live then and in every state up to `stop`."""
        before = [s for s in csv_states[name] if s.at <= start]
        if not before or before[-1].type == "DELETED" or not _live(before[-1].obj):
            return None
        during = [s for s in csv_states[name] if start < s.at <= stop]
        if any(s.type == "DELETED" or not _live(s.obj) for s in during):
            return None
        return before[-1].obj

    found: list[Violation] = []
    for seen in events:
        if seen.type != "DELETED" or seen.kind not in ("deployment", "serviceaccount", "role"):
            continue
        if any(start - SETTLE <= seen.at <= stop for start, stop in gone):
            continue
        for name in csv_states:
            csv = live_through(name, seen.at, seen.at + SETTLE)
            if csv is not None and _owns(csv, seen.kind, seen.obj):
                found.append(
                    Violation(
                        "live-csv-objects",
                        namespace,
                        seen.at,
                        f"{seen.kind}/{seen.name} deleted while {name} was Succeeded",
                    )
                )
    return found


def installplans(namespace: str, history: Iterable[Seen]) -> list[Violation]:
    """More than one InstallPlan (by UID) for one Subscription and one set of CSVs."""
    plans: dict[tuple[tuple[str, ...], tuple[str, ...]], set[str]] = defaultdict(set)
    first: dict[tuple[tuple[str, ...], tuple[str, ...]], float] = {}
    for seen in history:
        if seen.kind != "installplan" or seen.type == "DELETED":
            continue
        owners = tuple(
            sorted(
                str(r.get("uid"))
                for r in seen.obj["metadata"].get("ownerReferences") or []
                if r.get("kind") == "Subscription"
            )
        )
        if not owners:
            continue
        csvs = tuple(sorted((seen.obj.get("spec") or {}).get("clusterServiceVersionNames") or []))
        plans[(owners, csvs)].add(_uid(seen))
        first.setdefault((owners, csvs), seen.at)
    return [
        Violation(
            "installplans",
            namespace,
            first[key],
            f"{len(uids)} InstallPlans for CSVs {list(key[1])} of one Subscription",
        )
        for key, uids in plans.items()
        if len(uids) > 1
    ]


def tracebacks(log: str, context: int = 3) -> list[str]:
    """Each Python traceback in `log`: its first line and its last `context` lines."""
    lines = log.splitlines()
    found: list[str] = []
    for index, line in enumerate(lines):
        if "Traceback (most recent call last)" not in line:
            continue
        end = index + 1
        while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end]):
            end += 1
        tail = lines[max(index + 1, end + 1 - context) : end + 1]
        found.append("\n".join([line, *tail]))
    return found


def slope(samples: Sequence[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) samples, per hour; None under 3 samples."""
    if len(samples) < 3:
        return None
    n = len(samples)
    mean_t = sum(t for t, _ in samples) / n
    mean_v = sum(v for _, v in samples) / n
    spread = sum((t - mean_t) ** 2 for t, _ in samples)
    if spread == 0:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in samples) / spread * 3600.0


def within_slope(groups: Sequence[Sequence[tuple[float, float]]]) -> float | None:
    """The slope per hour common to several series (each centred on its own means: a pooled
    within-group least-squares fit), e.g. RSS against time over many process lives, each
    starting at its own level; None when no series has 3 samples."""
    top = spread = 0.0
    for samples in groups:
        if len(samples) < 3:
            continue
        mean_t = sum(t for t, _ in samples) / len(samples)
        mean_v = sum(v for _, v in samples) / len(samples)
        top += sum((t - mean_t) * (v - mean_v) for t, v in samples)
        spread += sum((t - mean_t) ** 2 for t, _ in samples)
    return top / spread * 3600.0 if spread else None


def percentile(values: Sequence[float], fraction: float) -> float | None:
    """Nearest-rank percentile (fraction in 0..1); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(fraction * len(ordered) + 0.4999)))
    return ordered[rank - 1]
