"""The corpus parity run's pure choices: channel repairs opm would otherwise refuse, the start
and install mode per package, the groups of packages that would see each other, the report."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from olm.catalog.model import Bundle, Catalog, Channel, Entry, Package
from tests.parity.corpus_catalog import heads, load_corpus, repair, semver_chain, stranded
from tests.parity.corpus_plan import (
    PackagePlan,
    choose,
    groups,
    namespace_for,
    plan,
    plans,
    targets_for,
)
from tests.parity.corpus_report import Row, compare, markdown, totals
from tests.parity.known import KnownDifference
from tests.parity.normalize import Difference
from tests.support.paths import SHARED

ALL, OWN, SINGLE, MULTI = "AllNamespaces", "OwnNamespace", "SingleNamespace", "MultiNamespace"


def bundle(
    name: str,
    version: str,
    modes: tuple[str, ...] = (OWN, SINGLE, ALL),
    extra: list[dict[str, Any]] | None = None,
    package: str = "p",
) -> Bundle:
    csv = {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name},
        "spec": {
            "version": version,
            "installModes": [
                {"type": m, "supported": m in modes} for m in (OWN, SINGLE, MULTI, ALL)
            ],
        },
    }
    data = base64.b64encode(json.dumps(csv).encode()).decode()
    return Bundle(
        name,
        package,
        properties=[
            {"type": "olm.package", "value": {"packageName": package, "version": version}},
            {"type": "olm.bundle.object", "value": {"data": data}},
            *(extra or []),
        ],
    )


def package(
    entries: list[Entry], modes: dict[str, tuple[str, ...]] | None = None, name: str = "p"
) -> Package:
    found = Package(name, default_channel="stable")
    found.channels["stable"] = Channel("stable", name, entries)
    for index, entry in enumerate(entries):
        version = f"1.{index}.0"
        found.bundles[entry.name] = bundle(
            entry.name, version, (modes or {}).get(entry.name, (OWN, SINGLE, ALL)), package=name
        )
    return found


def chain(*names: str) -> list[Entry]:
    return [Entry(n, names[i - 1] if i else "") for i, n in enumerate(names)]


# --- channel repair --------------------------------------------------------------------


def test_a_channel_opm_accepts_is_left_alone() -> None:
    catalog = Catalog({"p": package(chain("a", "b", "c"))})
    assert repair(catalog) == []
    assert [e.replaces for e in catalog.packages["p"].channels["stable"].entries] == ["", "a", "b"]


def test_several_heads_become_one_semver_chain() -> None:
    found = package([Entry("a"), Entry("c"), Entry("b")])  # versions 1.0.0, 1.1.0, 1.2.0
    catalog = Catalog({"p": found})
    (made,) = repair(catalog)
    assert made.why.startswith("no single head")
    channel = found.channels["stable"]
    assert heads(channel) == ["b"]
    assert [(e.name, e.replaces) for e in channel.entries] == [("a", ""), ("c", "a"), ("b", "c")]


def test_a_stranded_channel_is_chained_past_skipped_names() -> None:
    """gitlab-runner's shape: a later entry skips names the chain would otherwise pass."""
    entries = [
        Entry("v1"),
        Entry("v2", "v1"),
        Entry("v3"),  # replaces nothing: v1 stranded
        Entry("v4", "v3", skips=["v2", "v3"]),
    ]
    found = package(entries)
    assert stranded(found.channels["stable"]) == ["v1"]  # v2 is skipped, not stranded
    repaired = semver_chain(found, found.channels["stable"])
    assert heads(repaired) == ["v4"] and stranded(repaired) == []
    assert [(e.name, e.replaces) for e in repaired.entries] == [
        ("v1", ""),
        ("v2", "v1"),
        ("v3", "v1"),
        ("v4", "v1"),
    ]


def test_skip_range_and_skips_survive_a_repair() -> None:
    found = package([Entry("a", skip_range="<1.0.0"), Entry("b", skips=["x"])])
    repaired = semver_chain(found, found.channels["stable"])
    assert repaired.entries[0].skip_range == "<1.0.0" and repaired.entries[1].skips == ["x"]


# --- start and install mode ------------------------------------------------------------


def test_the_start_is_two_steps_behind_the_head() -> None:
    found = package(chain("a", "b", "c", "d"))
    made = plan(found)
    assert (made.starting, made.head, made.mode, made.upgrades) == ("b", "d", ALL, True)
    assert made.targets is None and made.is_global


def test_one_step_behind_when_the_channel_has_two() -> None:
    assert plan(package(chain("a", "b"))).starting == "a"


def test_a_single_bundle_has_nothing_to_upgrade() -> None:
    made = plan(package(chain("a")))
    assert made.starting == made.head == "a" and not made.upgrades


def test_own_namespace_when_the_operator_is_not_global() -> None:
    made = plan(package(chain("a", "b"), {"a": (OWN, SINGLE), "b": (OWN, SINGLE)}))
    assert made.mode == OWN and made.targets == (made.namespace,)


def test_a_nearer_start_when_the_farther_one_shares_no_mode_with_the_head() -> None:
    found = package(chain("a", "b", "c"), {"a": (OWN,), "b": (ALL,), "c": (ALL,)})
    assert choose(found, "stable", "c") == ("b", ALL)


def test_the_mode_both_the_start_and_the_head_support() -> None:
    """openshift-qiskit's shape: the start is OS-A, the head ---A."""
    found = package(chain("a", "b"), {"a": (OWN, SINGLE, ALL), "b": (ALL,)})
    assert choose(found, "stable", "b") == ("a", ALL)


def test_multi_namespace_only_targets_two_namespaces_of_its_own() -> None:
    made = plan(package(chain("a"), {"a": (MULTI,)}))
    assert made.mode == MULTI and made.targets == (f"{made.namespace}-m1", f"{made.namespace}-m2")
    assert made.extra_namespaces == made.targets


def test_single_namespace_targets_another_namespace() -> None:
    assert targets_for(SINGLE, "pc-x") == ("pc-x-t",)


def test_no_mode_at_all_still_gets_a_plan() -> None:
    assert choose(package(chain("a"), {"a": ()}), "stable", "a") == ("a", OWN)


def test_namespace_names_fit_with_their_suffixes() -> None:
    name = namespace_for("x" * 80)
    assert len(f"{name}-added") <= 63 and name.startswith("pc-")


# --- groups ----------------------------------------------------------------------------


def _gvk(kind: str, group: str = "g.example.com", required: bool = False) -> dict[str, Any]:
    return {
        "type": "olm.gvk.required" if required else "olm.gvk",
        "value": {"group": group, "kind": kind, "version": "v1"},
    }


def test_packages_sharing_an_api_or_a_dependency_run_in_one_group() -> None:
    def single(name: str, extra: list[dict[str, Any]]) -> Package:
        found = Package(name, default_channel="stable")
        found.channels["stable"] = Channel("stable", name, [Entry(f"{name}.v1")])
        found.bundles[f"{name}.v1"] = bundle(f"{name}.v1", "1.0.0", extra=extra, package=name)
        return found

    catalog = Catalog(
        {
            "owner": single("owner", [_gvk("Bucket")]),
            "user": single("user", [_gvk("Bucket", required=True)]),
            "alone": single("alone", [_gvk("Other")]),
            "needs-owner": single(
                "needs-owner",
                [{"type": "olm.package.required", "value": {"packageName": "owner"}}],
            ),
        }
    )
    found = groups(plans(catalog))
    assert [[p.package for p in g] for g in found] == [["alone"], ["needs-owner", "owner", "user"]]


# --- the corpus itself -------------------------------------------------------------------

CORPUS = SHARED / "corpus" / "community-operators"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus beside the repo")
def test_every_corpus_package_gets_a_plan_and_a_channel_opm_accepts() -> None:
    catalog = load_corpus(CORPUS)
    repair(catalog)
    found = plans(catalog)
    assert len(found) == 44
    for package_ in catalog.packages.values():
        for channel in package_.channels.values():
            assert len(heads(channel)) == 1 and not stranded(channel), channel.name
    by_name = {p.package: p for p in found}
    assert by_name["deployment-validation-operator"].mode == ALL
    assert by_name["microcks"].mode == OWN
    together = {frozenset(p.package for p in g) for g in groups(found)}
    assert frozenset({"awss3-operator-registry", "lib-bucket-provisioner", "noobaa-operator"}) in (
        together
    )
    assert frozenset({"node-healthcheck-operator", "self-node-remediation"}) in together


# --- the report -------------------------------------------------------------------------


def _plan(name: str = "p") -> PackagePlan:
    return PackagePlan(name, "stable", f"{name}.v2", f"{name}.v1", ALL, f"pc-{name}", None)


def _csv(phase: str) -> dict[str, Any]:
    return {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "p.v2", "namespace": "pc-p"},
        "status": {"phase": phase},
    }


def test_a_listed_difference_counts_but_does_not_fail() -> None:
    known = [KnownDifference("corpus/*", "ClusterServiceVersion", "status.phase", "r", "h")]
    row, differences = compare(
        _plan(), {"upgraded": [_csv("Succeeded")]}, {"upgraded": [_csv("Failed")]}, known
    )
    assert len(differences) == 1 and row.listed == 1 and not row.unlisted
    assert row.verdict == "equal, listed differences"


def test_an_unlisted_difference_and_a_missing_point() -> None:
    row, _ = compare(_plan(), {"upgraded": [_csv("Succeeded")], "failed": []}, {"upgraded": []}, [])
    assert row.verdict == "different"
    assert any(d.object == "*" and d.point == "failed" for d in row.unlisted)


def test_failing_alike_and_totals() -> None:
    failing = Row(_plan("f"), ["failed"], ["failed"])
    equal = Row(_plan("e"), ["upgraded"], ["upgraded"])
    different = Row(_plan("d"), ["upgraded"], ["failed"], [Difference("x", "*", "", 1, 2)])
    assert totals([failing, equal, different]) == {
        "equal": 1,
        "equal, listed differences": 0,
        "failing alike": 1,
        "different": 1,
    }
    text = markdown([failing, equal, different], 600, {"reference": 300, "olm-py": 240})
    assert "| f | AllNamespaces | stable | f.v1 → f.v2 | failed | failed |" in text
    assert "- failing on both sides alike: 1" in text and "wall time: 10.0 min" in text
    assert "### d" in text
