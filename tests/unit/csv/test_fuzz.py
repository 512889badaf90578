"""Property: the CSV decision never raises and always decides, over random namespaces of CSVs
that replace each other in every shape (chains, cycles, rivals, copies, CSVs being deleted)
and Deployments owned by any of them; and an OwnerConflict, once decided, is a fixed point
(deciding again over it writes nothing: no write loop)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from olm.api.csv import CsvPhase, CsvReason
from olm.csv.phase import Plan, decide
from olm.csv.replacement import cycle, lineage
from olm.install.deployments import render_deployment
from olm.install.strategy import parse_strategy
from tests.unit.csv.world import csv, healthy, world

NAMES = ["a", "b", "c", "d"]
phases = st.one_of(st.sampled_from([p.value for p in CsvPhase]), st.just("Bogus"))
reasons = st.one_of(st.sampled_from([r.value for r in CsvReason]), st.text(max_size=4))


@st.composite
def a_csv(draw: st.DrawFn, name: str) -> dict[str, Any]:
    replaces = draw(st.one_of(st.none(), st.sampled_from([*NAMES, "", "gone"])))
    body = csv(
        name,
        phase=draw(phases),
        reason=draw(reasons),
        **({"replaces": replaces} if replaces is not None else {}),
    )
    meta = body["metadata"]
    if draw(st.booleans()):
        meta["creationTimestamp"] = f"2026-11-22T11:00:{draw(st.integers(0, 3)):02d}Z"
    if draw(st.integers(0, 9)) == 0:
        meta["labels"] = {"olm.copiedFrom": "elsewhere"}
    if draw(st.integers(0, 9)) == 0:
        meta["deletionTimestamp"] = "2026-11-22T11:59:00Z"
    if draw(st.booleans()):
        body["status"]["message"] = draw(st.text(max_size=8))
    return body


@st.composite
def namespace(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    present = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    csvs = [draw(a_csv(n)) for n in present]
    deployments: dict[str, Any] = {}
    owner = draw(st.one_of(st.none(), st.sampled_from([*NAMES, "gone"])))
    if owner is not None:
        template = csv(owner)
        deployment = render_deployment(template, parse_strategy(template).deployments[0])
        deployments["op"] = healthy(deployment) if draw(st.booleans()) else deployment
    subject = csvs[draw(st.integers(0, len(csvs) - 1))]
    return subject, [c for c in csvs if c is not subject], deployments


@settings(deadline=None)
@given(namespace())
def test_decide_always_decides(
    drawn: tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]],
) -> None:
    subject, others, deployments = drawn
    plan = decide(world(subject, others=others, deployments=deployments))
    assert isinstance(plan, Plan)
    # A decided owner conflict (Failed/OwnerConflict) is settled: deciding again changes and
    # wakes nothing. (A Pending status that merely keeps a drawn OwnerConflict reason while it
    # waits for the CSV it replaces is not one: that wait wakes the Succeeded old CSV.)
    if (
        plan.status is not None
        and plan.status.get("reason") == CsvReason.OWNER_CONFLICT
        and plan.status.get("phase") == CsvPhase.FAILED
    ):
        settled = copy.deepcopy(subject)
        settled["status"] = plan.status
        again = decide(world(settled, others=others, deployments=deployments))
        assert again.status is None and not again.apply and not again.wake


@settings(deadline=None)
@given(st.dictionaries(st.sampled_from(NAMES), st.sampled_from([*NAMES, "", "gone"])))
def test_chain_walks_end(edges: dict[str, str]) -> None:
    csvs = {n: csv(n, replaces=r) for n, r in edges.items()}
    for name in csvs:
        found = cycle(name, csvs)
        assert found is None or (found[0] == name and len(set(found)) == len(found))
        assert name in lineage(name, csvs) <= set(csvs)
