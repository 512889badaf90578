"""APIServices labelled as owned by a CSV that is gone are deleted, as OLM's syncAPIService
does; those of a CSV that exists, or of no CSV, are left alone."""

from __future__ import annotations

from typing import Any

from olm.controllers.csv import CsvController
from olm.controllers.queue import WorkQueue
from olm.controllers.store import Store, StoreKind
from olm.install.apiservices import legacy_removable, legacy_resources, orphaned_apiservices
from olm.kube.fake import FakeGateway


def apiservice(name: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name, "labels": labels},
    }


def owned(name: str, owner: str, namespace: str) -> dict[str, Any]:
    labels = {
        "olm.owner": owner,
        "olm.owner.namespace": namespace,
        "olm.owner.kind": "ClusterServiceVersion",
    }
    return apiservice(name, **labels)


def test_only_the_gone_csvs_apiservices_are_orphans() -> None:
    found = [
        owned("v1.b.example.org", "gone", "ns"),
        owned("v1.a.example.org", "gone", "ns"),
        owned("v1.c.example.org", "gone", "other"),
        owned("v1.d.example.org", "kept", "ns"),
        apiservice("v1.e.example.org"),
    ]
    assert orphaned_apiservices("ns", "gone", found) == ["v1.a.example.org", "v1.b.example.org"]


def test_the_controller_deletes_the_orphans_of_a_csv_it_does_not_have() -> None:
    fake, store = FakeGateway(), Store()
    orphan = owned("v1.a.example.org", "gone", "ns")
    fake.put(orphan)
    fake.put(apiservice("v1.e.example.org"))
    store.upsert(StoreKind.CSV_API_SERVICE, orphan)  # the only one the watch keeps
    controller = CsvController(store, fake, WorkQueue())
    assert controller.reconcile("ns", "gone") is None
    names = {key[3] for key in fake.objects if key[1] == "APIService"}
    assert names == {"v1.e.example.org"}


def hat_csv() -> dict[str, Any]:
    return {
        "metadata": {"name": "csv-hat-1", "namespace": "ns"},
        "spec": {
            "apiservicedefinitions": {
                "owned": [
                    {"group": "hats.example.org", "version": "v1alpha1", "deploymentName": "hat"}
                ]
            }
        },
    }


def test_the_legacy_objects_of_an_owned_apiservice_are_named_after_it() -> None:
    assert legacy_resources(hat_csv()) == [
        ("v1", "Service", "ns", "v1alpha1-hats-example-org"),
        ("v1", "Secret", "ns", "v1alpha1.hats.example.org-cert"),
        ("rbac.authorization.k8s.io/v1", "Role", "ns", "v1alpha1.hats.example.org-cert"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding", "ns", "v1alpha1.hats.example.org-cert"),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            None,
            "v1alpha1.hats.example.org-system:auth-delegator",
        ),
        (
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "kube-system",
            "v1alpha1.hats.example.org-auth-reader",
        ),
    ]


def test_only_legacy_objects_labelled_as_the_csvs_are_removed() -> None:
    assert legacy_removable(owned("x", "csv-hat-1", "ns"), hat_csv())
    assert not legacy_removable(owned("x", "csv-hat-0", "ns"), hat_csv())
    assert not legacy_removable(apiservice("x"), hat_csv())
