"""The in-memory gateway behaves like the API server where controllers can tell, and records
every write, so "the second pass writes nothing" can be asserted."""

from __future__ import annotations

from typing import Any

import pytest

from olm.kube.errors import Conflict, GatewayError, NotFound
from olm.kube.fake import FakeGateway
from olm.kube.protocol import KubeGateway

CSV_API = "operators.coreos.com/v1alpha1"


def deployment(name: str = "op", namespace: str = "ns", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"replicas": 1},
    }


def csv(name: str = "op.v1", namespace: str = "ns", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": CSV_API,
        "kind": "ClusterServiceVersion",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": {"displayName": "Op"},
    }


def live(fake: FakeGateway, obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return fake.get(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])


# ----- server-side apply -------------------------------------------------------------------------


def test_apply_creates_then_an_identical_apply_changes_nothing() -> None:
    fake = FakeGateway()
    created = fake.apply(deployment())
    again = fake.apply(deployment())
    assert [(w.verb, w.changed) for w in fake.writes] == [("apply", True), ("apply", False)]
    assert again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert created["metadata"]["uid"] and created["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        ({"a": "1", "b": "2"}, {"a": "1"}, {"a": "1", "c": "user"}),  # dropped field goes
        ({"a": "1"}, {"a": "2"}, {"a": "2", "c": "user"}),  # changed field is replaced
        ({"a": "1"}, {"a": "1", "b": "2"}, {"a": "1", "b": "2", "c": "user"}),
        ({"a": "1"}, {}, {"c": "user"}),
    ],
)
def test_apply_removes_only_fields_the_manager_stopped_sending(
    first: dict[str, str], second: dict[str, str], expected: dict[str, str]
) -> None:
    fake = FakeGateway([deployment(labels={"c": "user"})])  # a field someone else set
    fake.apply(deployment(labels=first))
    fake.apply(deployment(labels=second))
    assert live(fake, deployment())["metadata"].get("labels") == expected


def test_apply_does_not_write_status_and_lists_are_replaced_whole() -> None:
    fake = FakeGateway()
    fake.apply({**deployment(finalizers=["a", "b"]), "status": {"replicas": 3}})
    fake.apply(deployment(finalizers=["b"]))
    obj = live(fake, deployment())
    assert "status" not in obj
    assert obj["metadata"]["finalizers"] == ["b"]


@pytest.mark.parametrize(
    ("change", "generation"),
    [({"spec": {"replicas": 2}}, 2), ({"metadata": {"labels": {"x": "y"}}}, 1)],
)
def test_generation_follows_the_spec_only(change: dict[str, Any], generation: int) -> None:
    fake = FakeGateway()
    fake.apply(deployment())
    changed = deployment()
    for key, value in change.items():
        changed[key] = {**changed[key], **value}
    assert fake.apply(changed)["metadata"]["generation"] == generation


# ----- create, status, patch, delete -------------------------------------------------------------


def test_create_names_from_generate_name_and_refuses_duplicates() -> None:
    fake = FakeGateway()
    body = {**csv(), "metadata": {"generateName": "install-", "namespace": "ns"}}
    first, second = fake.create(body), fake.create(body)
    names = [first["metadata"]["name"], second["metadata"]["name"]]
    assert all(n.startswith("install-") and len(n) == len("install-") + 5 for n in names)
    assert names[0] != names[1]
    with pytest.raises(Conflict) as raised:
        fake.create(csv(name=names[0]))
    assert raised.value.status == 409 and isinstance(raised.value, GatewayError)


def test_patch_status_merges_and_refuses_stale_writes() -> None:
    fake = FakeGateway([{**csv(), "status": {"phase": "Pending", "reason": "X"}}])
    version = live(fake, csv())["metadata"]["resourceVersion"]
    fake.patch_status(CSV_API, "ClusterServiceVersion", "ns", "op.v1", {"reason": None}, version)
    assert live(fake, csv())["status"] == {"phase": "Pending"}
    with pytest.raises(Conflict):
        fake.patch_status(
            CSV_API, "ClusterServiceVersion", "ns", "op.v1", {"phase": "Failed"}, version
        )
    with pytest.raises(NotFound):
        fake.patch_status(CSV_API, "ClusterServiceVersion", "ns", "gone", {"phase": "Failed"})


@pytest.mark.parametrize(
    ("patch", "content_type", "labels"),
    [
        (
            {"metadata": {"labels": {"a": None, "b": "2"}}},
            "application/merge-patch+json",
            {"b": "2"},
        ),
        (
            [{"op": "replace", "path": "/metadata/labels/a", "value": "9"}],
            "application/json-patch+json",
            {"a": "9"},
        ),
    ],
)
def test_patch(patch: Any, content_type: str, labels: dict[str, str]) -> None:
    fake = FakeGateway([csv(labels={"a": "1"})])
    fake.patch(CSV_API, "ClusterServiceVersion", "ns", "op.v1", patch, content_type=content_type)
    assert live(fake, csv())["metadata"]["labels"] == labels


def test_a_failed_json_patch_test_is_a_422() -> None:
    fake = FakeGateway([csv(finalizers=["x"])])
    with pytest.raises(GatewayError) as raised:
        fake.patch(
            CSV_API,
            "ClusterServiceVersion",
            "ns",
            "op.v1",
            [{"op": "test", "path": "/metadata/finalizers/0", "value": "other"}],
            content_type="application/json-patch+json",
        )
    assert raised.value.status == 422


def test_delete_waits_for_finalizers() -> None:
    fake = FakeGateway([csv(finalizers=["operators.coreos.com/csv-cleanup"])])
    fake.delete(CSV_API, "ClusterServiceVersion", "ns", "op.v1")
    assert live(fake, csv())["metadata"]["deletionTimestamp"]
    fake.patch(
        CSV_API,
        "ClusterServiceVersion",
        "ns",
        "op.v1",
        [{"op": "remove", "path": "/metadata/finalizers/0"}],
        content_type="application/json-patch+json",
    )
    with pytest.raises(NotFound):
        live(fake, csv())


def test_deleting_what_is_gone_is_recorded_but_changes_nothing() -> None:
    fake = FakeGateway()
    fake.delete("apps/v1", "Deployment", "ns", "op")
    assert [(w.verb, w.changed) for w in fake.writes] == [("delete", False)]
    assert fake.changes() == []


def test_events_are_recorded_as_objects() -> None:
    fake = FakeGateway([csv(uid="u1")])
    fake.event(live(fake, csv()), "Warning", "InstallCheckFailed", "x" * 2000)
    ((name, kind, reason, message),) = fake.events()
    assert (name, kind, reason, len(message)) == ("op.v1", "Warning", "InstallCheckFailed", 1024)
    assert fake.writes[0].verb == "event"


# ----- reads -------------------------------------------------------------------------------------


def test_lists_by_path_namespace_and_selector() -> None:
    fake = FakeGateway(
        [
            deployment("a", "ns1", labels={"olm.owner": "x"}),
            deployment("b", "ns2", labels={"olm.owner": "y"}),
            deployment("c", "ns1"),
            csv("op.v1", "ns1"),
        ]
    )
    names = [o["metadata"]["name"] for o in fake.list_path("/apis/apps/v1/deployments")]
    assert names == ["a", "c", "b"]  # sorted by namespace, then name
    assert fake.list_keys("/apis/apps/v1/namespaces/ns1/deployments") == [
        ("ns1", "a"),
        ("ns1", "c"),
    ]
    assert fake.list_keys("/apis/apps/v1/deployments", "olm.owner") == [("ns1", "a"), ("ns2", "b")]
    assert fake.list_names("apps/v1", "Deployment", "ns1", "olm.owner in (x,z)") == ["a"]
    assert fake.list_names("apps/v1", "Deployment", None, "!olm.owner") == ["c"]
    assert fake.list_names("apps/v1", "Deployment", None, "olm.owner!=x") == ["c", "b"]


def test_reads_return_copies() -> None:
    fake = FakeGateway([deployment()])
    live(fake, deployment())["spec"]["replicas"] = 99
    assert live(fake, deployment())["spec"]["replicas"] == 1


def test_missing_objects_are_not_found_which_is_a_gateway_error() -> None:
    with pytest.raises(GatewayError) as raised:
        FakeGateway().get("apps/v1", "Deployment", "ns", "op")
    assert isinstance(raised.value, NotFound) and raised.value.status == 404


def test_unicode_survives_the_fake_as_it_does_the_wire() -> None:
    text = "\U0001f600 Tiny \U0001f680 日本語"
    fake = FakeGateway()
    fake.apply(deployment(annotations={"d": text}))
    assert live(fake, deployment())["metadata"]["annotations"] == {"d": text}


# ----- tests drive controllers through it --------------------------------------------------------


def test_injected_failures_fire_once_on_their_target() -> None:
    fake = FakeGateway()
    fake.fail("apply", GatewayError("forbidden", 403), kind="Deployment", name="op")
    fake.apply(deployment("other"))
    with pytest.raises(GatewayError) as raised:
        fake.apply(deployment("op"))
    assert raised.value.status == 403
    fake.apply(deployment("op"))


def reconcile(gateway: KubeGateway, name: str) -> None:
    """A controller in miniature: apply what it owns, write status only when it changed."""
    owner = gateway.get(CSV_API, "ClusterServiceVersion", "ns", name)
    gateway.apply(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": f"{name}-config", "namespace": "ns"},
            "data": {"owner": owner["metadata"]["uid"]},
        }
    )
    wanted = {"phase": "Succeeded"}
    if owner.get("status") != wanted:
        gateway.patch_status(
            CSV_API,
            "ClusterServiceVersion",
            "ns",
            name,
            wanted,
            owner["metadata"]["resourceVersion"],
        )


def test_the_second_pass_over_the_same_state_writes_nothing() -> None:
    fake = FakeGateway([csv()])
    reconcile(fake, "op.v1")
    assert [(w.verb, w.kind, w.changed) for w in fake.take_writes()] == [
        ("apply", "ConfigMap", True),
        ("patch_status", "ClusterServiceVersion", True),
    ]
    reconcile(fake, "op.v1")
    assert fake.changes() == []  # the apply is still sent: only a no-op...
    assert [w.verb for w in fake.writes] == ["apply"]  # ...which a test can also forbid
