"""What `olm explain` accepts as a target, and the shape of its text and JSON output."""

from __future__ import annotations

import json

import pytest

from olm.api.kinds import Kind
from olm.explain.kinds import UsageError, parse_target
from olm.explain.model import Explanation, Fix, Link, Verdict
from olm.explain.render import lines, text_json


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("sub", Kind.SUBSCRIPTION),
        ("subscription", Kind.SUBSCRIPTION),
        ("subscriptions", Kind.SUBSCRIPTION),
        ("subscriptions.operators.coreos.com", Kind.SUBSCRIPTION),
        ("csv", Kind.CLUSTER_SERVICE_VERSION),
        ("ClusterServiceVersion", Kind.CLUSTER_SERVICE_VERSION),
        ("ip", Kind.INSTALL_PLAN),
        ("installplan", Kind.INSTALL_PLAN),
        ("og", Kind.OPERATOR_GROUP),
        ("operatorgroup", Kind.OPERATOR_GROUP),
        ("catsrc", Kind.CATALOG_SOURCE),
        ("catalogsource", Kind.CATALOG_SOURCE),
    ],
)
def test_kubectl_names_are_accepted(word: str, kind: Kind) -> None:
    assert parse_target([f"{word}/x"]) == (kind, "x")
    assert parse_target([word, "x"]) == (kind, "x")


@pytest.mark.parametrize(
    ("words", "said"),
    [
        (["deployment/x"], "does not explain 'deployment'"),
        (["operatorcondition/x"], "does not explain"),
        (["sub"], "name one object as KIND/NAME"),
        (["sub/"], "the name is missing"),
        (["sub/a/b"], "has a '/'"),
    ],
)
def test_what_is_refused_says_why(words: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        parse_target(words)


STUCK = Explanation(
    (
        Link("Subscription", "memcached", "team-a", "UpgradePending", "waits on InstallPlan ip-1"),
        Link("InstallPlan", "ip-1", "team-a", "RequiresApproval", "waits for approval (Manual)"),
        Link("CatalogSource", "samples", "olm", "READY", ""),
    ),
    Verdict.PROBLEM,
    "InstallPlan ip-1 waits for a person to approve it",
    (Fix("approve it", "kubectl patch ..."), Fix("wait")),
    ("could not read Events; the chain may stop short",),
)


def test_text_is_one_line_per_link_then_cause_and_fixes() -> None:
    assert lines(STUCK, "team-a") == [
        "Subscription memcached [UpgradePending]: waits on InstallPlan ip-1",
        "-> InstallPlan ip-1 [RequiresApproval]: waits for approval (Manual)",
        "-> CatalogSource samples (namespace olm) [READY]",
        "cause: InstallPlan ip-1 waits for a person to approve it",
        "fix: approve it: kubectl patch ...",
        "fix: wait",
        "note: could not read Events; the chain may stop short",
    ]


def test_healthy_is_one_line() -> None:
    ok = Explanation((STUCK.links[0],), Verdict.HEALTHY, "Subscription memcached is AtLatestKnown")
    assert lines(ok, "team-a") == ["healthy: Subscription memcached is AtLatestKnown"]


def test_json_shape() -> None:
    data = json.loads(text_json(STUCK))
    assert set(data) == {
        "kind",
        "name",
        "namespace",
        "verdict",
        "healthy",
        "chain",
        "cause",
        "fixes",
        "notes",
    }
    assert (data["kind"], data["name"], data["verdict"], data["healthy"]) == (
        "Subscription",
        "memcached",
        "problem",
        False,
    )
    assert data["chain"][1] == {
        "kind": "InstallPlan",
        "name": "ip-1",
        "namespace": "team-a",
        "state": "RequiresApproval",
        "says": "waits for approval (Manual)",
    }
    assert data["fixes"] == [
        {"what": "approve it", "command": "kubectl patch ..."},
        {"what": "wait", "command": ""},
    ]
