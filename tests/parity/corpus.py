"""`make parity-corpus`: every package of the community corpus on the real OLM v0, then on
olm-py, diffed, reported in docs/parity-corpus.md.

    python -m tests.parity.corpus [--only PKG,PKG] [--workers N] [--report FILE]

One cluster at a time (the reference first; the real OLM binds fixed ports): the corpus
catalog (corpus_catalog.py) is served as CatalogSource olm/corpus, the packages are planned
(corpus_plan.py) and driven (corpus_drive.py) group by group, `--workers` groups side by side
(a group's packages one after another). Each package's full report (every difference and both
sides' snapshots) lands in ~/.local/state/olm-py/parity/report/corpus/ for triage and
`python -m tests.parity.rediff`. Exit status 1 if any difference is unlisted.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from tests.parity import corpus_catalog, corpus_drive, corpus_plan
from tests.parity.corpus_drive import SOURCE, Outcome, clean_up, drive
from tests.parity.corpus_plan import PackagePlan
from tests.parity.corpus_report import Row, compare, markdown
from tests.parity.harness import reference_kind, started, state_root, sweep_crashed_runs
from tests.parity.known import KNOWN, load_known
from tests.parity.normalize import Difference
from tests.support.paths import SHARED

CORPUS = SHARED / "corpus" / "community-operators"
SIDES = ("reference", "olm-py")
# Fast subset, chosen for coverage: an upgrade in its own namespace with webhooks-free RBAC
# (pelorus), a global operator with copies and a skipRange upgrade (skupper), a dependency
# resolved from another package (noobaa -> lib-bucket-provisioner's CRDs), a package that
# cannot resolve (dbaas: its olm.package dependency is in no catalog), webhooks (gitops-primer).
FAST = (
    "pelorus-operator",
    "skupper-operator",
    "noobaa-operator",
    "dbaas-operator",
    "gitops-primer",
)

_print_lock = threading.Lock()


def say(text: str) -> None:
    with _print_lock:
        print(f"{time.strftime('%H:%M:%S')} {text}", flush=True)


def run_side(
    side_name: str, catalog_dir: Path, groups: list[list[PackagePlan]], workers: int
) -> tuple[dict[str, Outcome], float]:
    began = time.monotonic()
    outcomes: dict[str, Outcome] = {}
    with started(side_name, reference_kind()) as side:
        say(f"[{side_name}] cluster up in {time.monotonic() - began:.0f}s; serving the corpus")
        side.catalog(SOURCE, catalog_dir)
        say(f"[{side_name}] CatalogSource olm/{SOURCE} READY")
        total = sum(len(g) for g in groups)

        def run_group(group: list[PackagePlan]) -> None:
            for index, plan in enumerate(group):
                try:
                    outcome = drive(side, plan)
                except Exception:  # the side's own trouble (kubectl, cluster): recorded
                    outcome = Outcome(note=f"error: {traceback.format_exc()[-1500:]}")
                outcomes[plan.package] = outcome
                say(
                    f"[{side_name}] {len(outcomes)}/{total} {plan.package}: "
                    f"{', '.join(outcome.reached) or '-'} ({outcome.seconds:.0f}s)"
                    + (f" {outcome.note[:160]}" if outcome.note else "")
                )
                if index + 1 < len(group):
                    clean_up(side, plan)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(run_group, groups))
    return outcomes, time.monotonic() - began


def report_dir() -> Path:
    folder = state_root() / "report" / "corpus"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _write_json(
    plan: PackagePlan, row: Row, differences: list[Difference], sides: dict[str, Any]
) -> None:
    (report_dir() / f"{plan.package}.json").write_text(
        json.dumps(
            {
                "scenario": f"corpus/{plan.package}",
                "plan": plan.__dict__ | {"keys": sorted(plan.keys)},
                "unlisted": [str(d) for d in row.unlisted],
                "differences": [d.__dict__ for d in differences],
                "notes": list(row.notes),
                "seconds": list(row.seconds),
                "snapshots": sides,
            },
            indent=1,
            default=str,
        )
    )


def rereport(report: str) -> int:
    """Diff the last run's snapshots again (after a change of known_differences.yaml or the
    normalizer) and write the report; no cluster."""
    run = json.loads((report_dir() / "run.json").read_text())
    known = load_known(yaml.safe_load(KNOWN.read_text()) or [])
    rows: list[Row] = []
    for package in run["packages"]:
        saved = json.loads((report_dir() / f"{package}.json").read_text())
        fields = dict(saved["plan"])
        fields["keys"] = frozenset(fields["keys"])
        fields["targets"] = tuple(fields["targets"]) if fields["targets"] is not None else None
        fields["owned_crds"] = tuple(fields["owned_crds"])
        fields["required_crds"] = tuple(fields["required_crds"])
        plan = PackagePlan(**fields)
        snaps = saved["snapshots"]
        row, differences = compare(
            plan,
            snaps["reference"],
            snaps["olm-py"],
            known,
            tuple(saved["seconds"]),
            tuple(saved["notes"]),
        )
        rows.append(row)
        _write_json(plan, row, differences, snaps)
    note = "".join(
        f"Rerun afterwards (the same way, merged here): {', '.join(r['packages'])}, in "
        f"{r['wall'] / 60:.1f} min. "
        for r in run.get("reruns", [])
    )
    text = markdown(rows, run["wall"], run["sides"], run["repairs"], note.strip())
    Path(report or report_dir() / "parity-corpus.md").write_text(text)
    unlisted_total = sum(len(r.unlisted) for r in rows)
    for row in rows:
        if row.unlisted:
            say(f"{row.plan.package}: {len(row.unlisted)} unlisted")
    say(f"{unlisted_total} unlisted difference(s)")
    return 1 if unlisted_total else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.parity.corpus",
        description="Every corpus package on the real OLM v0, then on olm-py, diffed.",
        epilog=(
            "Takes 30-60 minutes on 2 cores (seconds with --rediff). Writes the per-package "
            "reports under ~/.local/state/olm-py/parity/report/corpus/ and the Markdown report "
            "(--report, else parity-corpus.md there)."
        ),
    )
    parser.add_argument("--only", default="", help="comma-separated packages (default: all)")
    parser.add_argument("--fast", action="store_true", help=f"only {', '.join(FAST)}")
    parser.add_argument("--workers", type=int, default=8, help="groups run side by side")
    parser.add_argument("--report", default="", help="write the Markdown report here")
    parser.add_argument(
        "--rediff", action="store_true", help="no cluster: diff the last run's snapshots again"
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help="rerun --only packages and merge them into the last run's report",
    )
    parser.add_argument(
        "--step-timeout", type=float, default=corpus_drive.STEP_TIMEOUT, help="seconds per step"
    )
    args = parser.parse_args(argv)
    if args.rediff:
        return rereport(args.report)
    corpus_drive.STEP_TIMEOUT = args.step_timeout
    began = time.monotonic()
    sweep_crashed_runs()
    catalog = corpus_catalog.load_corpus(CORPUS)
    repairs = corpus_catalog.repair(catalog)
    only = list(FAST) if args.fast else [p for p in args.only.split(",") if p]
    plans = corpus_plan.plans(catalog, only or None)
    groups = corpus_plan.groups(plans)
    catalog_dir = state_root() / f"corpus-catalog-{time.strftime('%Y%m%d%H%M%S')}"
    corpus_catalog.write(catalog, catalog_dir)
    say(f"{len(plans)} packages in {len(groups)} groups; catalog {catalog_dir}")
    results: dict[str, dict[str, Outcome]] = {}
    side_seconds: dict[str, float] = {}
    for side_name in SIDES:
        try:
            results[side_name], side_seconds[side_name] = run_side(
                side_name, catalog_dir, groups, args.workers
            )
        except Exception:
            say(f"[{side_name}] cluster failed:\n{traceback.format_exc()}")
            return 2
    known = load_known(yaml.safe_load(KNOWN.read_text()) or [])
    rows: list[Row] = []
    for plan in plans:
        reference, olm_py = results["reference"][plan.package], results["olm-py"][plan.package]
        row, differences = compare(
            plan,
            reference.points,
            olm_py.points,
            known,
            (reference.seconds, olm_py.seconds),
            (reference.note, olm_py.note),
        )
        rows.append(row)
        _write_json(
            plan,
            row,
            differences,
            {"reference": reference.points, "olm-py": olm_py.points},
        )
        say(f"{plan.package}: {row.verdict} ({len(row.unlisted)} unlisted, {row.listed} listed)")
    wall = time.monotonic() - began
    repaired = [f"{r.package}/{r.channel}: {r.why}" for r in repairs]
    run_file = report_dir() / "run.json"
    if args.update and run_file.exists():  # a rerun of some packages: merged into the last run
        run = json.loads(run_file.read_text())
        run.setdefault("reruns", []).append(
            {"packages": [p.package for p in plans], "wall": wall, "sides": side_seconds}
        )
        run_file.write_text(json.dumps(run))
        return rereport(args.report)
    run_file.write_text(
        json.dumps(
            {
                "packages": [p.package for p in plans],
                "wall": wall,
                "sides": side_seconds,
                "repairs": repaired,
            }
        )
    )
    text = markdown(rows, wall, side_seconds, repaired)
    Path(args.report or report_dir() / "parity-corpus.md").write_text(text)
    unlisted_total = sum(len(r.unlisted) for r in rows)
    say(f"done in {wall / 60:.1f} min: {unlisted_total} unlisted difference(s)")
    return 1 if unlisted_total else 0


if __name__ == "__main__":
    sys.exit(main())
