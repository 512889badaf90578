"""Property: the Subscription (namespace) decision never raises and always decides, over
namespaces whose catalogs are corpus packages (loaded, failed or not known yet) and whose
Subscriptions name their packages, channels and CSVs, or names that do not exist, with
statuses, InstallPlans and installed CSVs in any state, in Active or terminating namespaces."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from olm.api.csv import CsvPhase
from olm.api.installplan import InstallPlanPhase
from olm.api.subscription import SubscriptionState
from olm.subscription.decide import decide
from olm.subscription.snapshot import CatalogInScope, LoadedCatalog, Plan, Snapshot
from tests.support.fuzz_corpus import FUZZ_SETTINGS, catalogs, corpus_csv, junk, mutated

NS = "fuzz"
GLOBAL = "olm"
NOW = datetime.datetime(2026, 11, 23, 12, 0, 0, tzinfo=datetime.UTC)
pytestmark = pytest.mark.skipif(not catalogs(), reason="needs ../shared/corpus beside the repo")


def packages() -> list[tuple[str, list[str], list[str]]]:
    """(package, its channels, its bundles) of every seed catalog."""
    return [
        (p.name, sorted(p.channels), sorted(p.bundles))
        for _, catalog in catalogs()
        for p in catalog.packages.values()
    ]


names = st.one_of(st.sampled_from(["", "nowhere", "😀", "Upper_Case"]), st.text(max_size=4))


@st.composite
def subscription_spec(draw: st.DrawFn, sources: list[tuple[str, str]]) -> dict[str, Any]:
    package, channels, bundles = draw(st.sampled_from(packages()))
    source_ns, source = draw(st.sampled_from([*sources, ("olm", "gone")]))
    spec: dict[str, Any] = {
        "name": draw(st.one_of(st.just(package), names)),
        "source": draw(st.one_of(st.just(source), names)),
        "sourceNamespace": source_ns,
        "installPlanApproval": draw(st.sampled_from(["Automatic", "Manual"])),
    }
    if draw(st.booleans()):
        spec["channel"] = draw(st.one_of(st.sampled_from(channels), names))
    if draw(st.integers(0, 3)) == 0:
        spec["startingCSV"] = draw(st.one_of(st.sampled_from(bundles), names))
    return spec


@st.composite
def subscription_status(draw: st.DrawFn, plan_names: list[str], csvs: list[str]) -> Any:
    status: dict[str, Any] = {
        "state": draw(st.sampled_from([s.value for s in SubscriptionState] + ["Bogus"])),
    }
    if draw(st.booleans()):
        status["currentCSV"] = draw(st.one_of(st.sampled_from(csvs or ["x"]), names))
    if draw(st.booleans()):
        status["installedCSV"] = draw(st.one_of(st.sampled_from(csvs or ["x"]), names))
    if draw(st.booleans()):
        plan = draw(st.sampled_from([*plan_names, "gone"]))
        status["installPlanRef"] = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "InstallPlan",
            "name": plan,
            "namespace": NS,
            "uid": f"uid-{plan}",
        }
        status["installplan"] = {"name": plan, "uuid": f"uid-{plan}"}
    if draw(st.booleans()):
        status["conditions"] = draw(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(
                            ["ResolutionFailed", "CatalogSourcesUnhealthy", "InstallPlanMissing"]
                        ),
                        "status": st.sampled_from(["True", "False", "Unknown"]),
                    },
                    optional={"message": st.text(max_size=5), "reason": st.text(max_size=5)},
                ),
                max_size=3,
            )
        )
    if draw(st.integers(0, 4)) == 0:
        status = draw(mutated(status, max_changes=2))
    return status


@st.composite
def install_plan(draw: st.DrawFn, name: str, csvs: list[str], owners: list[str]) -> Any:
    plan: dict[str, Any] = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "InstallPlan",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "ownerReferences": [
                {"kind": "Subscription", "name": o, "uid": f"uid-{o}", "apiVersion": "x"}
                for o in draw(st.lists(st.sampled_from(owners), max_size=2, unique=True))
            ],
        },
        "spec": {
            "clusterServiceVersionNames": draw(
                st.lists(st.sampled_from(csvs or ["x"]), max_size=2, unique=True)
            ),
            "approval": draw(st.sampled_from(["Automatic", "Manual"])),
            "approved": draw(st.booleans()),
            "generation": draw(st.integers(0, 3)),
        },
    }
    if draw(st.booleans()):
        plan["status"] = {
            "phase": draw(st.sampled_from([p.value for p in InstallPlanPhase])),
            "catalogSources": [],
            "plan": [],
        }
        if draw(st.integers(0, 4)) == 0:
            plan["status"]["message"] = draw(junk)
    return plan


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    seeds = catalogs()
    in_scope = []
    chosen = draw(st.lists(st.sampled_from(range(len(seeds))), max_size=2, unique=True))
    for index in sorted(chosen):
        catalog = seeds[index][1]
        space = draw(st.sampled_from([NS, GLOBAL]))
        health = draw(st.integers(0, 5))
        in_scope.append(
            CatalogInScope(
                namespace=space,
                name=f"cat-{index}",
                uid=f"uid-cat-{index}",
                loaded=LoadedCatalog(catalog, draw(st.integers(-5, 5))) if health else None,
                failed=health == 0 and draw(st.booleans()),
            )
        )
    sources = [(c.namespace, c.name) for c in in_scope]
    csvs = [draw(corpus_csv(NS, slim=True)) for _ in range(draw(st.integers(0, 3)))]
    for csv in csvs:
        if draw(st.booleans()):
            csv["status"] = {"phase": draw(st.sampled_from([p.value for p in CsvPhase]))}
    csv_names = [c["metadata"]["name"] for c in csvs]
    sub_names = draw(st.lists(st.sampled_from(["a", "b"]), min_size=1, max_size=2, unique=True))
    plan_names = draw(st.lists(st.sampled_from(["ip-1", "ip-2"]), max_size=2, unique=True))
    plans = {n: draw(install_plan(n, csv_names, sub_names)) for n in plan_names}
    subscriptions = []
    for name in sorted(sub_names):
        body: dict[str, Any] = {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": name, "namespace": NS, "uid": f"uid-{name}"},
            "spec": draw(subscription_spec(sources)),
        }
        if draw(st.booleans()):
            body["status"] = draw(subscription_status(plan_names, csv_names))
        subscriptions.append(body)
    terminating = draw(st.integers(0, 6)) == 0
    space: dict[str, Any] | None = {
        "metadata": {
            "name": NS,
            **({"deletionTimestamp": "2026-01-01T00:00:00Z"} if terminating else {}),
        },
        "status": {"phase": "Terminating" if terminating else "Active"},
    }
    return Snapshot(
        namespace=NS,
        namespace_object=None if draw(st.integers(0, 9)) == 0 else space,
        subscriptions=tuple(subscriptions),
        csvs={c["metadata"]["name"]: c for c in csvs},
        plans=plans,
        catalogs=tuple(sorted(in_scope, key=lambda c: (c.namespace, c.name))),
        now=NOW,
    )


@FUZZ_SETTINGS
@given(snapshots())
def test_decide_always_decides(snapshot: Snapshot) -> None:
    plan = decide(snapshot)
    assert isinstance(plan, Plan)
    if snapshot.terminating:
        assert plan.create is None, "nothing is created in a terminating namespace"
