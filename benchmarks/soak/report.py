"""The soak's results: `summary` (soak.json), a progress `line`, and `plot` (soak.svg: four
panels over the soak's time: actions and faults, convergence times, RSS of each `olm run`,
the API server's request rate). Pure except `plot` writing its file.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from typing import Any, Protocol

from benchmarks.soak import converge
from benchmarks.soak.faults import FaultRecord
from benchmarks.soak.invariants import Violation, percentile, slope, within_slope
from benchmarks.soak.sampling import Samples, rates

WARM_UP = 60.0  # seconds of each olm run process left out of its slopes

# Keys of the summary left out of the printed form (they are in soak.json).
BULKY = (
    "actions",
    "faults",
    "episodes",
    "samples",
    "request_rates",
    "violations",
    "diagnosis",
    "events_recorded",
)


class SoakLike(Protocol):
    origin: float
    names: list[str]
    actions: list[dict[str, Any]]
    faults: list[FaultRecord]


def _convergence(episodes: list[converge.Episode]) -> dict[str, Any]:
    timed = [e.seconds for e in episodes if e.seconds is not None]
    after_faults = [e.seconds for e in episodes if e.seconds is not None and "fault" in e.cause]
    after_actions = [
        e.seconds for e in episodes if e.seconds is not None and e.cause.startswith("action")
    ]
    return {
        "episodes": len(episodes),
        "converged": len(timed),
        "superseded": sum(1 for e in episodes if e.superseded),
        "not_converged": sum(1 for e in episodes if e.violation),
        "p50_seconds": percentile(timed, 0.5),
        "p99_seconds": percentile(timed, 0.99),
        "max_seconds": max(timed, default=None),
        "after_actions_p50_seconds": percentile(after_actions, 0.5),
        "after_actions_p99_seconds": percentile(after_actions, 0.99),
        "after_faults_p50_seconds": percentile(after_faults, 0.5),
        "after_faults_p99_seconds": percentile(after_faults, 0.99),
    }


def line(soak: SoakLike, episodes: list[converge.Episode], found: list[Violation]) -> str:
    """One progress line: time, actions, faults, violations, convergence so far."""
    stats = _convergence(episodes)
    kinds = Counter(v.invariant for v in found)
    return (
        f"{len(soak.actions)} actions, {len(soak.faults)} faults, "
        f"{len(found)} violations {dict(kinds) if kinds else ''}; convergence p50 "
        f"{stats['p50_seconds']} s p99 {stats['p99_seconds']} s over {stats['converged']} episodes"
    )


def _per_replica(samples: Samples) -> dict[str, Any]:
    """RSS (MiB) and fd slopes per hour for each process life (pid) and over all samples."""
    lives: dict[int, list[tuple[float, float, int]]] = {}
    for at, _, pid, rss, fds in samples.processes:
        lives.setdefault(pid, []).append((at, rss, fds))
    described: list[dict[str, Any]] = []
    for pid, every in lives.items():
        # The first minute of a process is its start (caches filling): not a trend.
        points = [p for p in every if p[0] >= every[0][0] + WARM_UP] or every[-1:]
        described.append(
            {
                "pid": pid,
                "from_seconds": points[0][0],
                "to_seconds": points[-1][0],
                "rss_mib_first_last_max": [points[0][1], points[-1][1], max(p[1] for p in points)],
                "fds_first_last_max": [points[0][2], points[-1][2], max(p[2] for p in points)],
                "rss_mib_per_hour": _round(slope([(p[0], p[1]) for p in points])),
                "fds_per_hour": _round(slope([(p[0], float(p[2])) for p in points])),
            }
        )
    first = {pid: every[0][0] for pid, every in lives.items()}
    settled = [p for p in samples.processes if p[0] >= first[p[2]] + WARM_UP]
    longest = max(
        described, key=lambda d: float(d["to_seconds"]) - float(d["from_seconds"]), default=None
    )
    settled_lives = [
        [(p[0], p[1]) for p in every if p[0] >= every[0][0] + WARM_UP] for every in lives.values()
    ]
    return {
        "lives": described,
        "longest_life": longest,
        # A leak grows each life by the same rate whatever level it starts at: the slope
        # common to every life after its first minute (a fault kills a replica every few
        # minutes, so no life spans the hour).
        "rss_mib_per_hour_within_lives": _round(within_slope(settled_lives)),
        "fds_per_hour_within_lives": _round(
            within_slope(
                [
                    [(p[0], float(p[2])) for p in every if p[0] >= every[0][0] + WARM_UP]
                    for every in lives.values()
                ]
            )
        ),
        "rss_mib_per_hour_all": _round(slope([(p[0], p[3]) for p in settled])),
        "fds_per_hour_all": _round(slope([(p[0], float(p[4])) for p in settled])),
        "rss_mib_max": max((p[3] for p in samples.processes), default=None),
    }


_LOG_TIME = r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}) "


def leader_terms(log_text: str, samples: Samples) -> dict[int, float]:
    """pid -> the soak second it became leader, from `olm run`'s log: each replica's "waiting
    to lead ... as vm_<pid>" line is its first sample (within the 5 s sampling interval), and
    its "became leader" line is that many seconds later."""
    import datetime
    import re

    def when(line: str) -> float | None:
        found = re.match(_LOG_TIME, line)
        if found is None:
            return None
        moment = datetime.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f")
        return moment.timestamp()

    first_sample: dict[int, float] = {}
    for at, _, pid, _, _ in samples.processes:
        first_sample.setdefault(pid, at)
    started: dict[int, float] = {}
    terms: dict[int, float] = {}
    for line in log_text.splitlines():
        identity = re.search(r"(waiting to lead|became leader): .* (?:as|held by) vm_(\d+)$", line)
        moment = when(line)
        if identity is None or moment is None:
            continue
        pid = int(identity.group(2))
        if identity.group(1) == "waiting to lead":
            started[pid] = moment
        elif pid in started and pid in first_sample:
            terms[pid] = first_sample[pid] + (moment - started[pid])
    return terms


def leading_slopes(samples: Samples, terms: dict[int, float]) -> dict[str, float | None]:
    """RSS and fd slopes per hour common to every leader's term, after its first minute as
    leader (a standby's RSS steps up when it starts working; that step is not a trend)."""
    rss: dict[int, list[tuple[float, float]]] = {}
    fds: dict[int, list[tuple[float, float]]] = {}
    for at, _, pid, mib, count in samples.processes:
        if pid in terms and at >= terms[pid] + WARM_UP:
            rss.setdefault(pid, []).append((at, mib))
            fds.setdefault(pid, []).append((at, float(count)))
    return {
        "terms": len(terms),
        "leading_seconds": round(sum(r[-1][0] - r[0][0] for r in rss.values()), 1),
        "rss_mib_per_hour": _round(within_slope(list(rss.values()))),
        "fds_per_hour": _round(within_slope(list(fds.values()))),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def summary(
    soak: SoakLike,
    episodes: list[converge.Episode],
    found: list[Violation],
    samples: Samples,
    end: float,
    *,
    seed: int,
    minutes: float,
    replicas: int,
    log: Path,
    exits: list[tuple[float, int, int]] | None = None,
    events: dict[str, int] | None = None,
) -> dict[str, Any]:
    origin = soak.origin
    request_rates = rates(samples.requests)
    rate_values = [r for _, r in request_rates]
    actions = Counter(a["action"] for a in soak.actions)
    failed = Counter(a["action"] for a in soak.actions if not a["ok"])
    return {
        "benchmark": "soak",
        "seed": seed,
        "minutes": minutes,
        "namespaces": len(soak.names),
        "replicas": replicas,
        "olm_run_log": str(log),
        "seconds": round(end - origin, 1),
        "action_count": len(soak.actions),
        "actions_by_kind": dict(sorted(actions.items())),
        "actions_failed": dict(sorted(failed.items())),
        "fault_count": len(soak.faults),
        "faults_by_kind": dict(sorted(Counter(f.kind for f in soak.faults).items())),
        "violation_count": len(found),
        "violations_by_invariant": dict(Counter(v.invariant for v in found)),
        "convergence": _convergence(episodes),
        "olm_run": _per_replica(samples),
        "olm_run_leading": leading_slopes(
            samples, leader_terms(log.read_text(errors="replace") if log.is_file() else "", samples)
        ),
        # (seconds, replica, status): exits on its own (a lost Lease exits 1), restarted
        "olm_run_exits": exits or [],
        "events_recorded": events or {},
        "apiserver_requests_per_second": {
            "p50": percentile(rate_values, 0.5),
            "p99": percentile(rate_values, 0.99),
            "max": max(rate_values, default=None),
        },
        "violations": [
            {**v.to_json(), "at": round(v.at - origin, 2) if v.at else 0.0} for v in found
        ],
        "actions": soak.actions,
        "faults": [
            {
                "kind": f.kind,
                "start": round(f.start - origin, 2),
                "end": round(f.end - origin, 2),
                "detail": f.detail,
            }
            for f in soak.faults
        ],
        "episodes": [
            {
                "namespace": e.namespace,
                "cause": e.cause,
                "start": round(e.start - origin, 2),
                "seconds": e.seconds,
                "superseded": e.superseded,
                "violation": e.violation,
            }
            for e in episodes
        ],
        "samples": {"olm_run": samples.processes, "apiserver_requests": samples.requests},
        "request_rates": request_rates,
    }


# ----- the plot -----------------------------------------------------------------------------

WIDTH, LEFT, RIGHT, PANEL, GAP, TOP = 900, 80, 30, 130, 40, 50


def plot(path: Path, result: dict[str, Any]) -> None:
    """Four panels sharing the time axis (minutes since the soak started)."""
    span = max(result["seconds"], 1.0)
    scale = (WIDTH - LEFT - RIGHT) / span
    height = TOP + 4 * (PANEL + GAP) + 20
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        'font-family="sans-serif" font-size="11">',
        f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(_title(result))}</text>',
    ]

    def x(seconds: float) -> float:
        return float(LEFT + seconds * scale)

    def panel(index: int, label: str, peak: float, unit: str) -> tuple[float, float]:
        top = TOP + index * (PANEL + GAP)
        bottom = top + PANEL
        parts.append(f'<text x="{LEFT}" y="{top - 6}" font-weight="bold">{escape(label)}</text>')
        parts.append(
            f'<rect x="{LEFT}" y="{top}" width="{WIDTH - LEFT - RIGHT}" height="{PANEL}" '
            'fill="none" stroke="#bbb"/>'
        )
        parts.append(
            f'<text x="{LEFT - 6}" y="{top + 10}" text-anchor="end">{peak:.0f} {unit}</text>'
        )
        parts.append(f'<text x="{LEFT - 6}" y="{bottom}" text-anchor="end">0</text>')
        step = 60 if span <= 900 else 300
        for tick in range(0, int(span) + 1, step):
            parts.append(
                f'<text x="{x(tick):.1f}" y="{bottom + 13}" text-anchor="middle" fill="#555">'
                f"{tick // 60} min</text>"
            )
        return top, bottom

    # 1. actions (ticks by kind row) and faults (red spans)
    kinds = sorted({a["action"] for a in result["actions"]})
    top, bottom = panel(0, "user actions (blue: failed in red) and faults (red bands)", 0, "")
    row = PANEL / max(1, len(kinds))
    for fault in result["faults"]:
        parts.append(
            f'<rect x="{x(fault["start"]):.1f}" y="{top}" '
            f'width="{max(1.5, (fault["end"] - fault["start"]) * scale):.1f}" height="{PANEL}" '
            'fill="#c03030" fill-opacity="0.18"/>'
        )
        parts.append(
            f'<text x="{x(fault["start"]):.1f}" y="{bottom - 2}" fill="#c03030" font-size="8" '
            f'transform="rotate(-90 {x(fault["start"]):.1f} {bottom - 2})">'
            f"{escape(fault['kind'])}</text>"
        )
    for number, kind in enumerate(kinds):
        y = top + row * number + row / 2
        parts.append(
            f'<text x="{WIDTH - RIGHT + 2}" y="{y + 3:.1f}" font-size="7">{escape(kind)}</text>'
        )
        for action in (a for a in result["actions"] if a["action"] == kind):
            colour = "#4878a8" if action["ok"] else "#c03030"
            parts.append(
                f'<line x1="{x(action["at"]):.1f}" y1="{y - row / 3:.1f}" '
                f'x2="{x(action["at"]):.1f}" y2="{y + row / 3:.1f}" stroke="{colour}"/>'
            )
    # 2. convergence times
    timed = [e for e in result["episodes"] if e["seconds"] is not None]
    peak = max([converge.LIMIT * 1.1, *(e["seconds"] for e in timed)])
    top, bottom = panel(1, "convergence after each touch (red: violation)", peak, "s")
    limit_y = bottom - converge.LIMIT / peak * PANEL
    parts.append(
        f'<line x1="{LEFT}" y1="{limit_y:.1f}" x2="{WIDTH - RIGHT}" y2="{limit_y:.1f}" '
        'stroke="#c03030" stroke-dasharray="4"/>'
    )
    for episode in result["episodes"]:
        if episode["seconds"] is None and not episode["violation"]:
            continue
        seconds = episode["seconds"] if episode["seconds"] is not None else peak
        colour = "#c03030" if episode["violation"] else "#4878a8"
        parts.append(
            f'<circle cx="{x(episode["start"]):.1f}" cy="{bottom - seconds / peak * PANEL:.1f}" '
            f'r="2" fill="{colour}" fill-opacity="0.6"/>'
        )
    # 3. RSS per olm run process life
    processes = result["samples"]["olm_run"]
    peak = max([1.0, *(p[3] for p in processes)])
    top, bottom = panel(2, "RSS of each olm run (one colour per replica)", peak, "MiB")
    colours = ("#4878a8", "#d08020", "#408040")
    for point in processes:
        parts.append(
            f'<circle cx="{x(point[0]):.1f}" cy="{bottom - point[3] / peak * PANEL:.1f}" r="1.5" '
            f'fill="{colours[point[1] % len(colours)]}"/>'
        )
    # 4. API server request rate
    rates_seen = result["request_rates"]
    peak = max([1.0, *(r for _, r in rates_seen)])
    top, bottom = panel(3, "API server requests per second (apiserver_request_total)", peak, "/s")
    points = " ".join(f"{x(t):.1f},{bottom - r / peak * PANEL:.1f}" for t, r in rates_seen)
    if points:
        parts.append(f'<polyline points="{points}" fill="none" stroke="#4878a8"/>')
    parts.append("</svg>")
    path.write_text("\n".join(parts))


def _title(result: dict[str, Any]) -> str:
    stats = result["convergence"]
    return (
        f"soak: {result['minutes']:g} min, {result['namespaces']} namespaces, "
        f"{result['action_count']} actions, {result['fault_count']} faults, "
        f"{result['violation_count']} violations, convergence p50 {stats['p50_seconds']} s "
        f"p99 {stats['p99_seconds']} s"
    )
