"""`olm plan show` over the in-memory gateway: what it reads, that it writes nothing, and what
it says when it cannot read (the real API server: tests/e2e/test_plan_show.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from olm.kube.errors import GatewayError
from olm.kube.fake import FakeGateway
from olm.planshow.run import PlanShowError, show
from tests.unit.installplan.plans import (
    NEW,
    NS,
    OLD,
    bundle_objects,
    entries,
    established,
    install_plan,
    manifest,
)

# The fake lists Memcacheds in every test here (tests/unit/conftest.py).
pytestmark = pytest.mark.usefixtures("memcached_kind")

OPS = "operators.coreos.com/v1alpha1"


def world(size: int = 3) -> list[dict[str, Any]]:
    old = [manifest(e) for e in entries(OLD)]
    csv = next(o for o in bundle_objects(OLD) if o["kind"] == "ClusterServiceVersion")
    crd = next(o for o in old if o["kind"] == "CustomResourceDefinition")
    plan = install_plan("RequiresApproval", entries(NEW), approved=False)
    return [
        plan,
        {**csv, "metadata": {**csv["metadata"], "namespace": NS}},
        established(crd),
        *(o for o in old if o["kind"] in ("ServiceAccount", "Role", "RoleBinding")),
        {
            "apiVersion": OPS,
            "kind": "Subscription",
            "metadata": {"name": "memcached", "namespace": NS},
            "status": {"installedCSV": OLD, "currentCSV": NEW},
        },
        {
            "apiVersion": "operators.coreos.com/v1",
            "kind": "OperatorGroup",
            "metadata": {"name": "og", "namespace": NS},
            "status": {"namespaces": [NS]},
        },
        {
            "apiVersion": "cache.example.com/v1alpha1",
            "kind": "Memcached",
            "metadata": {"name": "cache-a", "namespace": NS},
            "spec": {"size": size},
        },
    ]


def test_the_upgrade_is_shown_and_nothing_is_written() -> None:
    fake = FakeGateway(world())
    said: list[str] = []
    result = show(fake, "install-abc", NS, "text", say=said.append)
    assert fake.take_writes() == []
    assert (
        said[0] == f"InstallPlan {NS}/install-abc: RequiresApproval, approval Manual (not approved)"
    )
    assert (
        "  CRD memcacheds.cache.example.com: versions and fields unchanged; "
        "upgrade safety ok (existing objects validate)"
    ) in said
    assert result.crds[0].objects == (("v1alpha1", 1),)
    assert [u.replaces for u in result.upgrades] == [OLD]


def test_json_output_is_one_document() -> None:
    said: list[str] = []
    show(FakeGateway(world()), "install-abc", NS, "json", say=said.append)
    (document,) = said
    shown = json.loads(document)
    assert shown["summary"]["flags"] == [] and shown["summary"]["deploymentsChanged"] == 1
    assert shown["crds"][0]["existingObjects"] == {"v1alpha1": 1}


def test_a_missing_plan_is_an_error_naming_how_to_list_them() -> None:
    with pytest.raises(PlanShowError, match=f"no InstallPlan nope in namespace {NS}"):
        show(FakeGateway(world()), "nope", NS, "text", say=lambda _: None)


class Forbidding(FakeGateway):
    """Refuses to read ServiceAccounts and Memcacheds (the user's RBAC)."""

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
        if kind == "ServiceAccount":
            raise GatewayError("forbidden", 403)
        return super().get(api_version, kind, namespace, name)

    def list_path(self, path: str) -> list[dict[str, Any]]:
        if path.endswith("/memcacheds"):
            raise GatewayError("forbidden", 403)
        return super().list_path(path)


def test_what_cannot_be_read_is_noted_not_fatal() -> None:
    fake = Forbidding(world())
    said: list[str] = []
    show(fake, "install-abc", NS, "text", say=said.append)
    assert any(
        line.startswith("note: cannot read ServiceAccount memcached-operator") for line in said
    )
    assert any(line.startswith("note: cannot list the v1alpha1 objects of CRD") for line in said)
    # Without the objects, the preview claims no check of them.
    assert any(line.endswith("upgrade safety ok (existing objects not read)") for line in said)
