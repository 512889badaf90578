"""Benchmark: kill -9 of `olm run` at a random moment of each user story, then restart it.

For each story of benchmarks/fault_stories.py (kubectl; Subscription Automatic; Subscription
Manual with approvals): one run without a fault (its duration is the window the kill moment
is drawn from, uniformly), then N trials (default 30), each in a fresh namespace, one after
the other. Reported per story: % converged, median and max time from the restart to the end
state, duplicates, InstallPlans with an empty phase, operand UID changes; every trial's details
go to the JSON. Issue 8's bar: 100 % converge, median <= 5 s, max <= 15 s, none of the rest.

    python -m benchmarks.faults            # 30 trials per story -> benchmarks/results/faults.*
    python -m benchmarks.faults --quick    # 3 per story -> a temporary directory (printed)
    OLM_FAULT_TRIALS=10 OLM_FAULT_SEED=42 python -m benchmarks.faults

Runs on a local cluster of its own (started and stopped here); `olm run` is started exactly
as a user starts it.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from html import escape
from pathlib import Path
from typing import Any

from benchmarks.cli import RESULTS, parser
from benchmarks.fault_stories import (
    KINDS,
    OLD,
    SAMPLE,
    STORIES,
    Restartable,
    TrialResult,
    csv_manifest,
    phase,
    prepare_cluster,
    run_trial,
)
from benchmarks.watching import Kube, Observer
from olm.devcluster import manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.progress import Progress

GOAL_MEDIAN, GOAL_MAX = 5.0, 15.0
TIMEOUT = 60.0  # seconds after the restart before a trial counts as not converged
CONTROLS = 3  # runs without a fault per story
WARM_UP = 10.0  # seconds for a freshly started `olm run` to list everything once


class OlmRun:
    """`olm run` as a user starts it, killable and restartable; its log is appended to."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.env, self.log = env, log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "olm.cli", "run"],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=self.env,
            )

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def start_up(
    kube: Kube, observer: Observer, operator: Restartable, namespace: str, timeout: float = 60
) -> float | None:
    """Seconds from starting `olm run` to its first decision: a CSV applied while it was down
    gets a phase. The floor under every time measured after a restart."""
    STORIES[0].prepare(kube, namespace, {})
    kube.apply_file(SAMPLE / "rbac.yaml", namespace)
    operator.kill()
    kube.apply(csv_manifest("0.0.1"), namespace)
    operator.start()
    started = time.monotonic()
    try:
        while time.monotonic() - started < timeout:
            if phase(observer, namespace, OLD) not in ("absent", "/"):
                return round(time.monotonic() - started, 2)
            time.sleep(0.05)
        return None
    finally:
        kube.run("delete", "namespace", namespace, "--wait=false", check=False)
        observer.forget(namespace)


def summarize(controls: list[TrialResult], trials: list[TrialResult]) -> dict[str, Any]:
    times = sorted(t.seconds for t in trials if t.converged and t.seconds is not None)
    converged = sum(1 for t in trials if t.converged)
    mid = [
        t.seconds
        for t in trials
        if t.converged and t.seconds is not None and not t.done_before_kill
    ]
    return {
        "trials": len(trials),
        "converged": converged,
        "converged_percent": round(100.0 * converged / len(trials), 1) if trials else 0.0,
        "convergence_seconds_median": round(statistics.median(times), 2) if times else None,
        "convergence_seconds_max": times[-1] if times else None,
        # Kills that landed before the end state was reached (the others measure a restart
        # over a steady state, usually 0 s).
        "convergence_seconds_median_killed_mid_story": round(statistics.median(mid), 2)
        if mid
        else None,
        "trials_with_duplicates": sum(1 for t in trials if t.duplicates),
        "duplicate_installplans": sum(
            max(0, n - 1) for t in trials for n in t.plans_per_csv.values()
        ),
        "empty_phase_plans": sum(len(t.empty_phase_plans) for t in trials),
        "operand_uid_changes": sum(len(t.operand_uid_changes) for t in trials),
        "recreated_deployments": sum(len(t.recreated_deployments) for t in trials),
        "left_end_state": sum(t.left_end_state for t in trials),
        "killed_after_the_end_state": sum(1 for t in trials if t.done_before_kill),
        "trials_with_problems": sum(1 for t in trials if not t.ok),
        "controls": [c.to_json() for c in controls],
        "runs": [t.to_json() for t in trials],
    }


def meets_goals(story: dict[str, Any]) -> bool:
    return bool(
        story["converged_percent"] == 100.0
        and story["convergence_seconds_median"] is not None
        and story["convergence_seconds_median"] <= GOAL_MEDIAN
        and story["convergence_seconds_max"] <= GOAL_MAX
        and story["trials_with_problems"] == 0
    )


def run(results_dir: Path, trials: int | None = None, seed: int | None = None) -> dict[str, Any]:
    trials = trials if trials is not None else int(os.environ.get("OLM_FAULT_TRIALS", "30"))
    seed = seed if seed is not None else int(os.environ.get("OLM_FAULT_SEED", time.time()))
    rng = random.Random(seed)
    progress = Progress()
    stories: dict[str, Any] = {}
    starts: list[float | None] = []
    with tempfile.TemporaryDirectory(prefix="olm-bench-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=ensure_binaries(), progress=progress)
        cluster.up()
        # Kept after the run: slow or failed trials are found in it by their restart time.
        log = Path(tempfile.gettempdir()) / f"olm-faults-{seed}-olm-run.log"
        operator = OlmRun({**os.environ, **cluster.env()}, log)
        observer: Observer | None = None
        try:
            manifests.install(cluster)
            assert cluster.bin_dir is not None
            kube = Kube(cluster.bin_dir / "kubectl", {**os.environ, **cluster.env()})
            prepare_cluster(kube)
            operator.start()
            time.sleep(WARM_UP)
            observer = Observer(kube, KINDS, keep=lambda n: n.startswith("fault-")).start()
            starts = [
                start_up(kube, observer, operator, f"fault-start-up-{n}") for n in range(CONTROLS)
            ]
            progress.say(f"olm run start -> first CSV phase: {starts} s")
            for story in STORIES:
                # Runs without a fault: the story must converge, and their median time is
                # the window the kill moment is drawn from.
                controls = [
                    run_trial(
                        kube, observer, operator, story, f"fault-{story.name}-c{n}", rng, None
                    )
                    for n in range(CONTROLS)
                ]
                for control in controls:
                    progress.say(control.summary())
                times = [c.seconds for c in controls if c.converged and c.seconds]
                window = round(statistics.median(times), 2) if times else 10.0
                results = []
                for index in range(trials):
                    result = run_trial(
                        kube,
                        observer,
                        operator,
                        story,
                        f"fault-{story.name}-{index}",
                        rng,
                        window,
                        timeout=TIMEOUT,
                    )
                    progress.say(f"[{index + 1}/{trials}] {result.summary()}")
                    results.append(result)
                stories[story.name] = {
                    "kill_window_seconds": window,
                    **summarize(controls, results),
                }
        finally:
            if observer is not None:
                observer.close()
            operator.stop()
            cluster.down()
    summary = {
        "benchmark": "faults",
        "seed": seed,
        "trials_per_story": trials,
        "olm_run_log": str(log),
        "start_to_first_decision_seconds": starts,
        "timeout_seconds": TIMEOUT,
        "goals": {
            "converged_percent": 100.0,
            "median_seconds": GOAL_MEDIAN,
            "max_seconds": GOAL_MAX,
        },
        "stories": stories,
        "all_goals_met": all(meets_goals(s) for s in stories.values()),
    }
    results_dir.mkdir(parents=True, exist_ok=True)
    (results_dir / "faults.json").write_text(json.dumps(summary, indent=2))
    strip_chart(results_dir / "faults.svg", summary)
    return summary


def strip_chart(path: Path, summary: dict[str, Any]) -> None:
    """One row per story: a dot per trial at its convergence time (red cross: not converged),
    the median as a bar, the goals (median 5 s, max 15 s) as dashed lines."""
    stories = summary["stories"]
    width, left, right, top, row = 760, 190, 40, 56, 70
    height = top + row * len(stories) + 56
    times = [r["seconds"] for s in stories.values() for r in s["runs"] if r["seconds"]]
    peak = max([GOAL_MAX * 1.1, *times])
    scale = (width - left - right) / peak
    title = (
        f"kill -9 of olm run at a random moment: time from restart to converged "
        f"({summary['trials_per_story']} trials per story)"
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="22" font-size="14" font-weight="bold">{escape(title)}</text>',
        '<text x="10" y="40" fill="#555">dot = one trial (orange: converged but with problems); red cross = not converged within '
        f"{summary['timeout_seconds']:.0f} s; black bar = median</text>",
    ]
    for index, (name, story) in enumerate(stories.items()):
        y = top + index * row + row / 2
        parts.append(f'<text x="{left - 10}" y="{y - 6}" text-anchor="end">{escape(name)}</text>')
        line = (
            f"{story['converged']}/{story['trials']} converged, "
            f"{story['trials_with_problems']} with problems"
        )
        parts.append(
            f'<text x="{left - 10}" y="{y + 10}" text-anchor="end" fill="#555" '
            f'font-size="10">{escape(line)}</text>'
        )
        parts.append(f'<line x1="{left}" y1="{y}" x2="{width - right}" y2="{y}" stroke="#ddd"/>')
        for number, trial in enumerate(story["runs"]):
            jitter = ((number * 7) % 11 - 5) * 2.2
            if trial["converged"] and trial["seconds"] is not None:
                colour = "#4878a8" if not trial["problems"] else "#d08020"
                parts.append(
                    f'<circle cx="{left + trial["seconds"] * scale:.1f}" cy="{y + jitter:.1f}" '
                    f'r="3.5" fill="{colour}" fill-opacity="0.7"/>'
                )
            else:
                x = width - right + 14
                parts.append(
                    f'<text x="{x}" y="{y + jitter + 4:.1f}" fill="#c03030" '
                    'text-anchor="middle" font-weight="bold">&#215;</text>'
                )
        median = story["convergence_seconds_median"]
        if median is not None:
            x = left + median * scale
            parts.append(
                f'<line x1="{x:.1f}" y1="{y - 16}" x2="{x:.1f}" y2="{y + 16}" '
                'stroke="black" stroke-width="2"/>'
            )
    bottom = top + row * len(stories)
    floor = [t for t in summary.get("start_to_first_decision_seconds") or [] if t is not None]
    if floor:
        x = left + statistics.median(floor) * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#888" '
            'stroke-dasharray="2,3"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{bottom + 30}" fill="#888" text-anchor="middle" '
            f'font-size="10">olm run start-up {statistics.median(floor):.1f} s</text>'
        )
    for goal, label in ((GOAL_MEDIAN, "goal: median"), (GOAL_MAX, "goal: max")):
        x = left + goal * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="#c03030" '
            'stroke-dasharray="4"/>'
        )
        parts.append(
            f'<text x="{x:.1f}" y="{top - 4}" fill="#c03030" text-anchor="middle" '
            f'font-size="10">{label} {goal:g} s</text>'
        )
    for tick in range(0, int(peak) + 1, 5 if peak <= 40 else 10):
        x = left + tick * scale
        parts.append(
            f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 5}" stroke="black"/>'
        )
        parts.append(f'<text x="{x:.1f}" y="{bottom + 18}" text-anchor="middle">{tick}</text>')
    parts.append(
        f'<text x="{(left + width - right) / 2:.1f}" y="{bottom + 44}" text-anchor="middle">'
        "seconds after the restart</text>"
    )
    parts.append("</svg>")
    path.write_text("\n".join(parts))


def main(argv: list[str] | None = None) -> int:
    command = parser(
        "benchmarks.faults",
        __doc__,
        takes="about an hour with 30 trials per story, a few minutes with --quick (one local "
        "cluster; needs the built binaries)",
        writes="faults.json and faults.svg to benchmarks/results/ (--quick: to a temporary "
        "directory, printed; --out: there)",
    )
    command.add_argument("--quick", action="store_true", help="3 trials per story (a check)")
    command.add_argument(
        "--trials", type=int, help="trials per story (default 30, or $OLM_FAULT_TRIALS)"
    )
    command.add_argument(
        "--seed", type=int, help="random seed (default: $OLM_FAULT_SEED, else the time)"
    )
    command.add_argument("--out", type=Path, help="results directory")
    args = command.parse_args(argv)
    trials = args.trials or (3 if args.quick else None)
    out = args.out or (Path(tempfile.mkdtemp(prefix="olm-faults-")) if args.quick else RESULTS)
    summary = run(out, trials=trials, seed=args.seed)
    print(json.dumps({k: v for k, v in summary.items() if k != "stories"}, indent=2))
    for name, story in summary["stories"].items():
        print(name, json.dumps({k: v for k, v in story.items() if k not in ("runs", "controls")}))
    print(f"results in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
