"""Diff the snapshots of the last parity run again, without clusters: after a change of the
normalizer or of known_differences.yaml. `python -m tests.parity.rediff [--all] [SCENARIO...]`
prints the unlisted differences (with --all, every difference and the entry that lists it),
then the entries of known_differences.yaml that no difference used (fixed ones to remove)."""

from __future__ import annotations

import argparse
import json

import yaml

from tests.parity.harness import state_root
from tests.parity.known import KNOWN, load_known, unlisted
from tests.parity.normalize import diff_runs


def main() -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.parity.rediff",
        description=(
            "Diff the snapshots of the last parity run again (no cluster), after a change of"
            " the normalizer or known_differences.yaml; exit 1 if a difference is unlisted."
        ),
        epilog="Takes seconds. Writes nothing (reads the parity run's reports).",
    )
    parser.add_argument("scenarios", nargs="*", help="only these scenarios (default: all)")
    parser.add_argument(
        "--all", action="store_true", help="print every difference and the entry listing it"
    )
    args = parser.parse_args()
    known = load_known(yaml.safe_load(KNOWN.read_text()) or [])
    total = 0
    used: set[int] = set()
    compared = False
    for path in sorted((state_root() / "report").glob("*.json")):
        report = json.loads(path.read_text())
        name = report["scenario"]
        if args.scenarios and name not in args.scenarios:
            continue
        snapshots = report["snapshots"]
        if not all(isinstance(snapshots.get(s), dict) for s in ("reference", "olm-py")):
            print(f"== {name}: a side failed, nothing to diff")
            continue
        differences = diff_runs(snapshots["reference"], snapshots["olm-py"])
        compared = True
        used |= {i for i, k in enumerate(known) for d in differences if k.matches(name, d)}
        open_ = unlisted(name, differences, known)
        total += len(open_)
        print(f"== {name}: {len(differences)} differences, {len(open_)} unlisted")
        for difference in differences if args.all else open_:
            entry = next((k for k in known if k.matches(name, difference)), None)
            print(f"  {difference}" + (f"\n      <- {entry.heading}" if entry and args.all else ""))
    if compared and not args.scenarios:
        for index, entry in enumerate(known):
            if index not in used:  # fixed, or a scenario that did not run: remove when fixed
                print(
                    f"unused entry: {entry.scenario} {entry.kind} {entry.object} {entry.path!r} ({entry.heading})"
                )
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main())
