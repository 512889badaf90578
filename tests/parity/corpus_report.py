"""The corpus parity report: per package, what each side reached and how they differ.

`compare` turns both sides' outcomes of one package into a `Row` (points reached on each side,
unlisted and listed differences, each side's seconds); `markdown` renders the rows, the totals
and the run's times as docs/parity-corpus.md. A package counts as *equal* (no difference at
all), *equal with listed differences* (every difference is in known_differences.yaml), or
*different* (an unlisted one); *failing alike* when both sides stopped at "failed" with no
unlisted difference.

Invariants: pure (no cluster, no I/O); the scenario name of a corpus package in
known_differences.yaml is `corpus/<package>`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tests.parity.corpus_plan import PackagePlan
from tests.parity.known import KnownDifference, unlisted
from tests.parity.normalize import Difference, diff_runs

Snapshots = Mapping[str, list[dict[str, Any]]]


def scenario_name(package: str) -> str:
    return f"corpus/{package}"


@dataclass
class Row:
    plan: PackagePlan
    reference: list[str]  # points reached
    olm_py: list[str]
    unlisted: list[Difference] = field(default_factory=list)
    listed: int = 0
    seconds: tuple[float, float] = (0.0, 0.0)
    notes: tuple[str, str] = ("", "")

    @property
    def verdict(self) -> str:
        if self.unlisted:
            return "different"
        if self.reference and self.reference[-1] in ("failed", "stuck"):
            return "failing alike"
        return "equal" if not self.listed else "equal, listed differences"


def compare(
    plan: PackagePlan,
    reference: Snapshots,
    olm_py: Snapshots,
    known: Iterable[KnownDifference],
    seconds: tuple[float, float] = (0.0, 0.0),
    notes: tuple[str, str] = ("", ""),
) -> tuple[Row, list[Difference]]:
    """The package's row and every difference (listed or not)."""
    differences = diff_runs(reference, olm_py)
    open_ = unlisted(scenario_name(plan.package), differences, known)
    row = Row(
        plan,
        list(reference),
        list(olm_py),
        open_,
        len(differences) - len(open_),
        seconds,
        notes,
    )
    return row, differences


def totals(rows: Iterable[Row]) -> dict[str, int]:
    counts = {"equal": 0, "equal, listed differences": 0, "failing alike": 0, "different": 0}
    for row in rows:
        counts[row.verdict] += 1
    return counts


def _mode(plan: PackagePlan) -> str:
    return plan.mode if plan.targets is None else f"{plan.mode} ({', '.join(plan.targets)})"


def _start(plan: PackagePlan) -> str:
    return f"{plan.starting} → {plan.head}" if plan.upgrades else plan.head


def markdown(
    rows: list[Row],
    wall_seconds: float,
    side_seconds: Mapping[str, float],
    repairs: Iterable[str] = (),
    title_note: str = "",
) -> str:
    counts = totals(rows)
    lines = [
        "# Corpus parity: every community-corpus package on the real OLM v0 and on olm-py",
        "",
        "Written by `make parity-corpus` (tests/parity/corpus.py; docs/parity.md says how the",
        "suite compares). Each package of `../shared/corpus/community-operators` is subscribed",
        "from one file-based catalog of the whole corpus (bundles inline, `opm serve` on both",
        "sides), in a namespace of its own, on the reference cluster first, then on olm-py.",
        "Points: `installed` (the start), `upgraded` (the channel head), `namespace-added` (a",
        "global operator's copy in a namespace made afterwards), `failed`, `stuck` (no end in",
        "time). Differences are counted after normalization; listed ones are in",
        "`tests/parity/known_differences.yaml` (scenario `corpus/<package>` or `*`).",
    ]
    if title_note:
        lines += ["", title_note]
    lines += [
        "",
        "## Totals",
        "",
        f"- packages: {len(rows)}",
        f"- equal: {counts['equal']}",
        f"- equal with listed differences: {counts['equal, listed differences']}",
        f"- failing on both sides alike: {counts['failing alike']}",
        f"- with unlisted differences: {counts['different']}",
        f"- unlisted differences: {sum(len(r.unlisted) for r in rows)}",
        f"- wall time: {wall_seconds / 60:.1f} min"
        + "".join(f"; {side} {sec / 60:.1f} min" for side, sec in side_seconds.items()),
        "",
        "## Packages",
        "",
        "| package | install mode | channel | start → head | reference reached | olm-py reached "
        "| unlisted | listed | verdict | reference s | olm-py s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        plan = row.plan
        lines.append(
            f"| {plan.package} | {_mode(plan)} | {plan.channel} | {_start(plan)} "
            f"| {', '.join(row.reference) or '—'} | {', '.join(row.olm_py) or '—'} "
            f"| {len(row.unlisted)} | {row.listed} | {row.verdict} "
            f"| {row.seconds[0]:.0f} | {row.seconds[1]:.0f} |"
        )
    stops = [r for r in rows if any(r.notes)]
    if stops:
        lines += ["", "## Why packages stopped", ""]
        for row in stops:
            reference, olm_py = (n.replace("\n", " ")[:300] for n in row.notes)
            lines.append(
                f"- **{row.plan.package}**: reference: {reference or '—'}; olm-py: {olm_py or '—'}"
            )
    repaired = list(repairs)
    if repaired:
        lines += [
            "",
            "## Channels served repaired",
            "",
            "opm refuses a catalog with a channel that has no single head or strands bundles;",
            "these channels were rebuilt as `opm index add --mode semver` would "
            "(tests/parity/corpus_catalog.py):",
            "",
        ]
        lines += [f"- {item}" for item in repaired]
    different = [r for r in rows if r.unlisted]
    if different:
        lines += ["", "## Unlisted differences", ""]
        for row in different:
            lines.append(f"### {row.plan.package}")
            lines.append("")
            lines += [f"- `{d}`" for d in row.unlisted[:40]]
            if len(row.unlisted) > 40:
                lines.append(f"- … {len(row.unlisted) - 40} more")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"
