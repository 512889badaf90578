"""The uninstall's I/O over the in-memory gateway: what it writes, in which order, and that a
refused request stops it with what was done said (the real API server: tests/e2e)."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.cleanup import CLEANUP_ANNOTATION, CleanupPolicy
from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from olm.uninstall.run import UninstallError, uninstall

# The fake lists Memcacheds in every test here (tests/unit/conftest.py).
pytestmark = pytest.mark.usefixtures("memcached_kind")

NS, PKG, OLD = "team-a", "memcached-operator", "memcached-operator.v0.0.1"
CRD = "memcacheds.cache.example.com"
OPS = "operators.coreos.com/v1alpha1"


def world() -> list[dict[str, Any]]:
    return [
        {
            "apiVersion": OPS,
            "kind": "Subscription",
            "metadata": {"name": "memcached", "namespace": NS},
            "spec": {"name": PKG},
            "status": {"installedCSV": OLD, "currentCSV": OLD},
        },
        {
            "apiVersion": OPS,
            "kind": "ClusterServiceVersion",
            "metadata": {"name": OLD, "namespace": NS},
            "spec": {"customresourcedefinitions": {"owned": [{"name": CRD}]}},
        },
        {
            "apiVersion": OPS,
            "kind": "InstallPlan",
            "metadata": {"name": "install-1", "namespace": NS},
            "spec": {"clusterServiceVersionNames": [OLD]},
        },
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD},
            "spec": {
                "group": "cache.example.com",
                "names": {"kind": "Memcached", "plural": "memcacheds"},
                "versions": [{"name": "v1alpha1", "served": True, "storage": True}],
            },
        },
        {
            "apiVersion": "cache.example.com/v1alpha1",
            "kind": "Memcached",
            "metadata": {"name": "sample", "namespace": "default"},
        },
    ]


def written(fake: FakeGateway) -> list[tuple[str, str, str]]:
    return [(w.verb, w.kind, w.name) for w in fake.take_writes()]


def test_a_blocked_crd_is_marked_and_deleted_by_the_next_run_once_unused() -> None:
    fake = FakeGateway(world())
    said: list[str] = []
    flag = CleanupPolicy.CRDS_WHEN_UNUSED
    assert uninstall(fake, PKG, NS, flag=flag, say=said.append) == 0
    assert written(fake) == [
        ("delete", "Subscription", "memcached"),
        ("delete", "ClusterServiceVersion", OLD),
        ("delete", "InstallPlan", "install-1"),
        ("patch", "CustomResourceDefinition", CRD),
    ]
    crd = fake.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, CRD)
    assert crd["metadata"]["annotations"][CLEANUP_ANNOTATION] == "crds-when-unused"
    assert any("1 Memcached remains: default/sample" in line for line in said)

    assert uninstall(fake, PKG, NS, say=said.append) == 0  # still there: nothing written
    assert written(fake) == []
    fake.remove("cache.example.com/v1alpha1", "Memcached", "default", "sample")
    assert uninstall(fake, PKG, NS, say=said.append) == 0
    assert written(fake) == [("delete", "CustomResourceDefinition", CRD)]


def test_a_dry_run_writes_nothing() -> None:
    fake = FakeGateway(world())
    said: list[str] = []
    uninstall(fake, PKG, NS, flag=CleanupPolicy.CRDS_WHEN_UNUSED, dry_run=True, say=said.append)
    assert fake.writes == []
    assert f"would delete ClusterServiceVersion {NS}/{OLD}" in said


def test_a_refused_delete_stops_and_says_what_was_done() -> None:
    fake = FakeGateway(world())
    fake.fail("delete", GatewayError("forbidden", 403), "ClusterServiceVersion")
    said: list[str] = []
    with pytest.raises(UninstallError, match="forbidden"):
        uninstall(fake, PKG, NS, flag=CleanupPolicy.CRDS_WHEN_UNUSED, say=said.append)
    assert written(fake) == [("delete", "Subscription", "memcached")]
    assert f"deleted   Subscription {NS}/memcached" in said
    assert not any("ClusterServiceVersion" in line for line in said)
