"""The table of OLM's e2e suite in docs/olm-e2e.md: every spec, its outcome on olm-py and on
the reference OLM (each from one run's `outcomes.json`), and a note saying why where a spec
does not pass (docs/olm-e2e-notes.yaml: spec name -> note).

`python -m olm.devcluster.olm_e2e_report OLM_PY_DIR REFERENCE_DIR [--notes FILE]` prints the
totals lines and the table (Markdown). Pure but for reading those files. The notes file is a
list of `{match: <regex>, note: <why>}`: a spec's note is that of the first regex found in its
name.

Invariants: a spec is counted once (the last outcome of its name that ran wins: a re-run
replaces an earlier one, a shard that did not select it does not); `pending` specs are not
active; a spec that ran on neither side is `not run`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

NOT_RUN = "not run"
RAN = ("passed", "failed")


@dataclass(frozen=True)
class Row:
    spec: str
    olm_py: str
    reference: str
    note: str


def load_outcomes(directory: Path) -> dict[str, str]:
    """Spec name (without Ginkgo's `[It] ` prefix) -> state, from `outcomes.json` files under
    `directory` (a run's, or each shard's and re-run's, read in name order)."""
    states: dict[str, str] = {}
    for path in sorted(directory.rglob("outcomes.json")):
        for item in json.loads(path.read_text()):
            name = str(item.get("name", ""))
            if not name.startswith("[It] "):
                continue
            spec, state = name.removeprefix("[It] "), str(item.get("state", ""))
            # A shard reports the specs it did not select as skipped: only a run replaces.
            if state in RAN or spec not in states:
                states[spec] = state
    return states


def note_for(name: str, notes: Sequence[Mapping[str, str]]) -> str:
    """The note of the first `match` regex found in the spec's name ("" when none)."""
    return next((n["note"] for n in notes if re.search(n["match"], name)), "")


def rows(
    olm_py: Mapping[str, str], reference: Mapping[str, str], notes: Sequence[Mapping[str, str]]
) -> list[Row]:
    names = sorted(set(olm_py) | set(reference))
    return [
        Row(
            name,
            olm_py.get(name, NOT_RUN),
            reference.get(name, NOT_RUN),
            note_for(name, notes) if olm_py.get(name) != "passed" else "",
        )
        for name in names
    ]


def totals(table: Sequence[Row]) -> list[str]:
    active = [r for r in table if "pending" not in (r.olm_py, r.reference)]
    on_reference = [r for r in active if r.reference == "passed"]
    both = [r for r in on_reference if r.olm_py == "passed"]
    passed = [r for r in active if r.olm_py == "passed"]
    return [
        f"olm-py passes {len(both)} of {len(on_reference)} specs that pass on the reference OLM",
        f"olm-py passes {len(passed)} of {len(active)} active specs",
    ]


def markdown(table: Sequence[Row]) -> str:
    lines = ["| spec | olm-py | reference OLM | why |", "|---|---|---|---|"]
    for row in table:
        spec = row.spec.replace("|", "\\|")
        note = row.note.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {spec} | {row.olm_py} | {row.reference} | {note} |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m olm.devcluster.olm_e2e_report",
        description=(
            "Compare two runs of OLM's e2e suite (olm-py's and the reference OLM's results"
            " directories) spec by spec and print the totals and a markdown table."
        ),
        epilog="Takes seconds. Writes nothing (prints to stdout).",
    )
    parser.add_argument("olm_py", type=Path, help="the olm-py run's results directory")
    parser.add_argument("reference", type=Path, help="the reference OLM run's results directory")
    parser.add_argument("--notes", type=Path, default=Path("docs/olm-e2e-notes.yaml"))
    args = parser.parse_args(argv)
    notes = yaml.safe_load(args.notes.read_text()) if args.notes.is_file() else []
    table = rows(load_outcomes(args.olm_py), load_outcomes(args.reference), notes or [])
    print("\n".join(totals(table)) + "\n")
    print(markdown(table), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
