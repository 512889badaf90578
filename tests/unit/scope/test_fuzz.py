"""Property: the global-operator decisions never raise and always decide: `decide_scope`
(copies and scope RBAC of one CSV), `decide_provided_apis` (OperatorGroup API surfaces) and
`plan_olm_config` (the DisabledCopiedCSVs condition), over corpus CSVs (mutated, in any
phase) in groups of every shape, with copies, namespaces and OLMConfigs of any kind."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm.api.csv import CsvPhase, CsvReason
from olm.scope.conflicts import ApiDecision, decide_provided_apis
from olm.scope.copies import CopyMeta, copy_prototype
from olm.scope.decide import ScopePlan, ScopeSnapshot, decide_scope
from olm.scope.olmconfig import OlmConfigPlan, OlmConfigSnapshot, plan_olm_config
from tests.support.fuzz_corpus import FUZZ_SETTINGS, catalogs, corpus_csv, mutated

OWN = "op"
NAMESPACES = [OWN, "a", "b", "c", "ünï", ""]
NOW = datetime.datetime(2026, 11, 23, 12, 0, 0, tzinfo=datetime.UTC)
SETTINGS = FUZZ_SETTINGS
pytestmark = pytest.mark.skipif(not catalogs(), reason="needs ../shared/corpus beside the repo")

spaces = st.sampled_from(NAMESPACES)


@st.composite
def csv_in_phase(draw: st.DrawFn) -> dict[str, Any]:
    csv = draw(corpus_csv(OWN, max_changes=2))
    if draw(st.integers(0, 4)):
        csv["status"] = {
            "phase": draw(st.sampled_from([p.value for p in CsvPhase])),
            "reason": draw(st.sampled_from([r.value for r in CsvReason])),
        }
    if draw(st.integers(0, 9)) == 0:
        csv["metadata"]["labels"] = {"olm.copiedFrom": draw(spaces)}
    if draw(st.booleans()):
        csv["metadata"]["annotations"] = {
            "olm.operatorGroup": "og",
            "olm.operatorNamespace": OWN,
            "olm.targetNamespaces": draw(st.sampled_from(["", "a,b", OWN, "ünï,,"])),
        }
    return csv


@st.composite
def group(draw: st.DrawFn, name: str = "og") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    shape = draw(st.integers(0, 3))
    if shape == 1:
        spec["targetNamespaces"] = draw(st.lists(spaces, max_size=4, unique=True))
    elif shape == 2:
        spec["selector"] = {"matchLabels": {"team": draw(st.text(max_size=3))}}
    elif shape == 3:
        spec["staticProvidedAPIs"] = draw(st.booleans())
    body: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1",
        "kind": "OperatorGroup",
        "metadata": {"name": name, "namespace": OWN, "uid": f"uid-{name}"},
        "spec": spec,
    }
    if draw(st.booleans()):
        body["status"] = {"namespaces": draw(st.lists(spaces, max_size=4, unique=True))}
    if draw(st.booleans()):
        body["metadata"]["annotations"] = {
            "olm.providedAPIs": draw(
                st.sampled_from(["", "Widget.v1.example.com", "junk", "A.v1.x,B.v2.y"])
            )
        }
    if draw(st.integers(0, 5)) == 0:
        body = draw(mutated(body, max_changes=2))
    return body


@st.composite
def scope_snapshots(draw: st.DrawFn) -> ScopeSnapshot:
    csv = draw(csv_in_phase())
    copies = {
        space: CopyMeta(
            space,
            csv["metadata"]["name"],
            uid=f"uid-copy-{space}",
            labels=draw(st.sampled_from([{}, {"olm.copiedFrom": OWN}, {"olm.copiedFrom": "x"}])),
        )
        for space in draw(st.lists(spaces, max_size=3, unique=True))
    }
    try:
        prototype = copy_prototype(csv) if draw(st.booleans()) else None
    except (KeyError, TypeError, ValueError, AttributeError):
        prototype = None  # the controller builds it only for CSVs it can copy
    return ScopeSnapshot(
        csv=csv,
        group=draw(st.one_of(st.none(), group())),
        namespaces=draw(st.lists(spaces, max_size=5, unique=True)),
        copies=copies,
        occupied=draw(st.lists(spaces, max_size=2, unique=True)),
        copies_enabled=draw(st.booleans()),
        protected_namespaces=frozenset(draw(st.lists(spaces, max_size=2))),
        prototype=prototype,
        only_namespace=draw(st.one_of(st.none(), spaces)),
    )


@SETTINGS
@given(scope_snapshots())
def test_decide_scope_always_decides(snapshot: ScopeSnapshot) -> None:
    assert isinstance(decide_scope(snapshot), ScopePlan)


@SETTINGS
@given(csv_in_phase(), group(), st.lists(group("other"), max_size=2))
def test_decide_provided_apis_always_decides(
    csv: dict[str, Any], own: dict[str, Any], others: list[dict[str, Any]]
) -> None:
    assert isinstance(decide_provided_apis(csv, own, [own, *others]), ApiDecision)


olm_configs = st.fixed_dictionaries(
    {"metadata": st.just({"name": "cluster"})},
    optional={
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "features": st.fixed_dictionaries({}, optional={"disableCopiedCSVs": st.booleans()})
            },
        ),
        "status": st.fixed_dictionaries(
            {},
            optional={
                "conditions": st.lists(
                    st.fixed_dictionaries(
                        {"type": st.sampled_from(["DisabledCopiedCSVs", "Other"])},
                        optional={
                            "status": st.sampled_from(["True", "False", "Unknown"]),
                            "reason": st.text(max_size=4),
                            "message": st.text(max_size=4),
                            "lastTransitionTime": st.just("2026-01-01T00:00:00Z"),
                        },
                    ),
                    max_size=3,
                )
            },
        ),
    },
)


@SETTINGS
@given(
    olm_configs,
    st.booleans(),
    st.integers(0, 6),
    st.lists(spaces, max_size=3),
    st.dictionaries(
        st.tuples(spaces, st.sampled_from(["x.v1", "y.v2"])),
        st.lists(spaces, max_size=4).map(frozenset),
        max_size=3,
    ),
)
def test_plan_olm_config_always_decides(
    olm_config: dict[str, Any],
    enabled: bool,
    active: int,
    protected: list[str],
    global_csvs: dict[tuple[str, str], frozenset[str]],
) -> None:
    snapshot = OlmConfigSnapshot(enabled, active, frozenset(protected), global_csvs, NOW)
    plan = plan_olm_config(olm_config, snapshot)
    assert isinstance(plan, OlmConfigPlan)
    if plan.status is not None:
        # Written once, the condition is a fixed point.
        again = plan_olm_config({**olm_config, "status": plan.status}, snapshot)
        assert again.status is None
