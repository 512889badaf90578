"""Property: the CSV, OperatorGroup and CatalogSource decisions never raise and always decide
on objects derived from the community corpus (their own fuzz tests, beside each package,
use hand-made shapes): real CSVs, mutated, in every phase, with their Deployments rendered
healthy, unhealthy or absent; groups holding them; catalogs read from corpus packages."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm.api.csv import CsvPhase, CsvReason
from olm.catalogsource.decide import Fetched, SourcePlan, SourceSnapshot
from olm.catalogsource.decide import decide as decide_source
from olm.csv.phase import Plan, decide
from olm.groups.decide import GroupPlan, GroupSnapshot
from olm.groups.decide import decide as decide_group
from olm.install.deployments import render_deployment
from olm.install.strategy import InvalidStrategy, parse_strategy
from tests.support.fuzz_corpus import FUZZ_SETTINGS, catalogs, corpus_csv
from tests.unit.csv.world import NS, healthy, world

NOW = datetime.datetime(2026, 11, 23, 12, 0, 0, tzinfo=datetime.UTC)
SETTINGS = FUZZ_SETTINGS
pytestmark = pytest.mark.skipif(not catalogs(), reason="needs ../shared/corpus beside the repo")


@st.composite
def csv_world(draw: st.DrawFn) -> Any:
    subject = draw(corpus_csv(NS))
    if draw(st.integers(0, 4)):
        subject["status"] = {
            "phase": draw(st.sampled_from([p.value for p in CsvPhase])),
            "reason": draw(st.sampled_from([r.value for r in CsvReason])),
            "lastTransitionTime": "2026-11-23T11:00:00Z",
        }
    deployments: dict[str, Any] = {}
    try:
        entries = parse_strategy(subject).deployments
    except (InvalidStrategy, KeyError, TypeError, AttributeError):
        entries = []
    for entry in entries:
        shape = draw(st.integers(0, 2))
        if shape:
            try:
                rendered = render_deployment(subject, entry)
            except (KeyError, TypeError, AttributeError, ValueError):
                continue
            deployments[entry.name] = healthy(rendered) if shape == 2 else rendered
    others = [draw(corpus_csv(NS)) for _ in range(draw(st.integers(0, 2)))]
    others = [o for o in others if o["metadata"]["name"] != subject["metadata"]["name"]]
    return world(subject, others=others, deployments=deployments, now=NOW)


@SETTINGS
@given(csv_world())
def test_csv_decide_always_decides(snapshot: Any) -> None:
    assert isinstance(decide(snapshot), Plan)


@SETTINGS
@given(
    st.lists(corpus_csv(NS, max_changes=2), max_size=3),
    st.one_of(st.none(), st.lists(st.sampled_from([NS, "a", "gone"]), max_size=3)),
    st.booleans(),
)
def test_group_decide_always_decides(
    csvs: list[dict[str, Any]], targets: list[str] | None, terminating: bool
) -> None:
    group = {
        "metadata": {"name": "og", "namespace": NS, "uid": "uid-og"},
        "spec": {} if targets is None else {"targetNamespaces": targets},
    }
    snapshot = GroupSnapshot(
        namespace=NS,
        name="og",
        group=group,
        sibling_names=("og",),
        namespaces={NS: {}, "a": {"team": "x"}},
        namespace_terminating=terminating,
        csvs=tuple(csvs),
        now=NOW,
    )
    assert isinstance(decide_group(snapshot), GroupPlan)


@SETTINGS
@given(st.sampled_from(range(4)), st.sampled_from(["grpc", "configmap", "", "helm"]), st.booleans())
def test_catalogsource_decide_always_decides(index: int, kind: str, has_status: bool) -> None:
    seeds = catalogs()
    catalog = seeds[index % len(seeds)][1]
    source: dict[str, Any] = {
        "metadata": {"name": "src", "namespace": NS},
        "spec": {"sourceType": kind, "address": "127.0.0.1:1", "configMap": "cm"},
    }
    if has_status:
        source["status"] = {"reason": "RegistryServerError", "message": "x"}
    plan = decide_source(SourceSnapshot(NS, "src", source, NOW), Fetched(catalog=catalog))
    assert isinstance(plan, SourcePlan)
