"""When a soak namespace is converged, and how long it took after each action or fault.

Pure: judged on recorded watch events (`benchmarks.watching.Seen`) and the soak's own log of
what the user asked for (`Desired`) and when something touched a namespace (`Touch`).

"Converged" is defined from what the user's actions asked for (`Desired`), as a person at a
terminal would check it:

- every namespace: its OperatorGroup `og` reports the asked target (`status.namespaces` is
  the namespace itself, or its peer `<namespace>-t`); the Memcached instance `cache-a`
  exists exactly when the user created it (and not deleted it since);
- `empty` (nothing installed, or uninstalled): no Subscription, no CSV of its own (copied CSVs
  do not count), no operator Deployment `memcached-operator`;
- `kubectl` (CSVs applied by hand): the CSV last applied is Succeeded, no other CSV is left,
  the operator Deployment is labelled `olm.owner=<that CSV>`;
- `subscription`, Automatic: the Subscription is AtLatestKnown with installedCSV = currentCSV
  = the head of its channel in the catalog as it is now, that CSV Succeeded, no other CSV;
- `subscription`, Manual: installedCSV (if any) is Succeeded, and either AtLatestKnown at the
  channel head, or UpgradePending on an InstallPlan that RequiresApproval and the user has
  not approved (waiting for the user is a resting state);
- with an installed, Succeeded CSV: the Subscription's `config` env (`SOAK_CONFIG`) is on the
  operator Deployment exactly as asked; when the operator watches its own namespace and the
  instance exists, the operand Deployment `cache-a` exists; without an instance it does not;
- `deleted` (between a namespace's deletion and its recreation): not judged.

Episodes: every touch (an action in the namespace, or the end of a fault, which touches every
namespace) starts one, ending at the next touch; the start of a fault ends one too, and
nothing is judged while the fault lasts. Its convergence time is from its start to the
first recorded moment the namespace is converged (0 when it already was). An episode that got
`LIMIT` seconds without a new touch and did not converge in them is a violation; one cut
short by the next touch is `superseded` (the next episode is judged instead).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.watching import Seen

LIMIT = 60.0  # seconds a namespace has to converge after the last touch
OPERATOR = "memcached-operator"
OPERAND = "cache-a"
SUBSCRIPTION = "memcached"
GROUP = "og"
CONFIG_ENV = "SOAK_CONFIG"

Objects = Mapping[tuple[str, str], dict[str, Any]]  # (kind, name) -> latest object


@dataclass(frozen=True)
class Desired:
    """What the user's actions asked of one namespace."""

    mode: str = "empty"  # empty | kubectl | subscription | deleted
    csv: str = ""  # kubectl: the CSV applied last
    approval: str = "Automatic"
    channel: str = "alpha"
    config: str = ""  # the SOAK_CONFIG value of Subscription.spec.config ("" none)
    operand: bool = False
    target: str = "own"  # own | peer
    approved: frozenset[str] = frozenset()  # InstallPlans the user approved


@dataclass(frozen=True)
class Touch:
    """Something that may change what a namespace looks like, at `at` (monotonic seconds)."""

    at: float
    namespace: str
    cause: str  # "action:<name>" or "fault:<name>"
    desired: Desired  # what is asked from then on
    judged: bool = True  # False: the start of a fault (nothing is owed until it is over)


@dataclass
class Episode:
    namespace: str
    cause: str
    start: float
    end: float
    seconds: float | None = None  # start -> converged; None: not converged in the episode
    missing: list[str] = field(default_factory=list)  # at the end, when not converged

    @property
    def superseded(self) -> bool:
        return self.seconds is None and self.end - self.start < LIMIT

    @property
    def violation(self) -> bool:
        return (self.seconds is None and not self.superseded) or (
            self.seconds is not None and self.seconds > LIMIT
        )


def _phase(csv: dict[str, Any] | None) -> str:
    return str(((csv or {}).get("status") or {}).get("phase", ""))


def own_csvs(objects: Objects) -> dict[str, dict[str, Any]]:
    """The namespace's CSVs that are its own (not copied in by an OperatorGroup)."""
    return {
        name: obj
        for (kind, name), obj in objects.items()
        if kind == "csv" and "olm.copiedFrom" not in (obj["metadata"].get("labels") or {})
    }


def _env(deployment: dict[str, Any] | None) -> dict[str, str]:
    spec = ((deployment or {}).get("spec") or {}).get("template", {}).get("spec") or {}
    found: dict[str, str] = {}
    for container in spec.get("containers") or []:
        for item in container.get("env") or []:
            found[str(item.get("name"))] = str(item.get("value", ""))
    return found


def missing(
    desired: Desired, objects: Objects, heads: Mapping[str, str], namespace: str
) -> list[str]:
    """What of `desired` is not (yet) true of `objects` (empty: converged). `heads` is the
    catalog's channel -> head CSV as it is now."""
    if desired.mode == "deleted":
        return []
    gaps: list[str] = []
    group = objects.get(("operatorgroup", GROUP))
    want = [namespace if desired.target == "own" else f"{namespace}-t"]
    if group is None or (group.get("status") or {}).get("namespaces") != want:
        gaps.append(f"OperatorGroup targets {(group or {}).get('status', {}).get('namespaces')}")
    csvs = own_csvs(objects)
    subscription = objects.get(("subscription", SUBSCRIPTION))
    operator = objects.get(("deployment", OPERATOR))
    installed = ""
    if desired.mode == "empty":
        if csvs:
            gaps.append(f"CSVs left: {sorted(csvs)}")
        if subscription is not None:
            gaps.append("the Subscription is still there")
        if operator is not None:
            gaps.append("the operator Deployment is still there")
    elif desired.mode == "kubectl":
        installed = desired.csv
        owner = ((operator or {}).get("metadata", {}).get("labels") or {}).get("olm.owner")
        if owner != desired.csv:
            gaps.append(f"operator Deployment owned by {owner}")
    elif desired.mode == "subscription":
        if subscription is None:
            return [*gaps, "no Subscription"]
        status = subscription.get("status") or {}
        state, installed = status.get("state"), str(status.get("installedCSV") or "")
        head = heads.get(desired.channel, "")
        if state == "AtLatestKnown":
            if (installed, status.get("currentCSV")) != (head, head):
                gaps.append(f"AtLatestKnown at {installed}/{status.get('currentCSV')}, head {head}")
        elif desired.approval == "Manual" and state == "UpgradePending":
            plan_name = str((status.get("installPlanRef") or {}).get("name", ""))
            plan = objects.get(("installplan", plan_name)) or {}
            if (plan.get("status") or {}).get("phase") != "RequiresApproval":
                gaps.append(f"UpgradePending on {plan_name!r} that does not wait for approval")
            elif plan_name in desired.approved:
                gaps.append(f"{plan_name} was approved but still waits")
        else:
            gaps.append(f"Subscription state {state!r}")
    if installed:
        if _phase(csvs.get(installed)) != "Succeeded":
            gaps.append(f"{installed} is {_phase(csvs.get(installed)) or 'absent'}")
        extra = sorted(set(csvs) - {installed})
        if extra:
            gaps.append(f"other CSVs: {extra}")
        if desired.mode == "subscription":
            value = _env(operator).get(CONFIG_ENV, "")
            if value != desired.config:
                gaps.append(f"{CONFIG_ENV}={value!r} on the operator, asked {desired.config!r}")
    instance = objects.get(("memcached", OPERAND))
    if desired.operand != (instance is not None):
        gaps.append(f"Memcached {OPERAND} present={instance is not None}, asked {desired.operand}")
    operand = objects.get(("deployment", OPERAND))
    running = bool(installed) and desired.target == "own" and not gaps
    if desired.operand and running and operand is None:
        gaps.append(f"no operand Deployment {OPERAND}")
    if not desired.operand and operand is not None:
        gaps.append(f"operand Deployment {OPERAND} is still there")
    return gaps


def episodes(
    namespace: str,
    history: Iterable[Seen],
    touches: Iterable[Touch],
    heads: list[tuple[float, dict[str, str]]],
    end: float,
) -> list[Episode]:
    """Replay `history` (one namespace's watch events) against its `touches`; `heads` is the
    catalog's channel heads from each moment on (sorted by time); `end` is when recording
    stopped."""
    events = sorted(history, key=lambda s: s.at)
    marks = sorted((t for t in touches if t.namespace == namespace), key=lambda t: t.at)
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    index = 0
    found: list[Episode] = []

    def apply(seen: Seen) -> None:
        key = (seen.kind, seen.name)
        if seen.type == "DELETED":
            latest.pop(key, None)
        else:
            latest[key] = seen.obj

    def heads_at(moment: float) -> dict[str, str]:
        current: dict[str, str] = {}
        for at, value in heads:
            if at > moment:
                break
            current = value
        return current

    for number, touch in enumerate(marks):
        stop = marks[number + 1].at if number + 1 < len(marks) else end
        while index < len(events) and events[index].at <= touch.at:
            apply(events[index])
            index += 1
        if touch.desired.mode == "deleted" or not touch.judged:
            continue
        episode = Episode(namespace, touch.cause, touch.at, stop)
        gaps = missing(touch.desired, latest, heads_at(touch.at), namespace)
        if not gaps:
            episode.seconds = 0.0
        while index < len(events) and events[index].at <= stop:
            apply(events[index])
            moment = events[index].at
            index += 1
            if episode.seconds is None:
                gaps = missing(touch.desired, latest, heads_at(moment), namespace)
                if not gaps:
                    episode.seconds = round(moment - touch.at, 3)
        if episode.seconds is None:
            episode.missing = gaps
        found.append(episode)
    return found
