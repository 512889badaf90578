"""Typed read-only views over a CSV's raw dict, and the one ownerReference builder."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from olm.api.kinds import KINDS, Kind
from olm.api.views import (
    ApiServiceDescription,
    CrdDescription,
    CsvView,
    Gvk,
    InstallMode,
    InstallModeType,
    StrategyPermission,
    owner_reference,
)

CSV: dict[str, Any] = {
    "apiVersion": "operators.coreos.com/v1alpha1",
    "kind": "ClusterServiceVersion",
    "metadata": {
        "name": "etcd.v0.9.2",
        "namespace": "operators",
        "uid": "uid-1",
        "annotations": {"olm.skipRange": "<0.9.2"},
    },
    "spec": {
        "version": "0.9.2",
        "replaces": "etcd.v0.9.0",
        "skips": ["etcd.v0.9.1"],
        "installModes": [
            {"type": "OwnNamespace", "supported": True},
            {"type": "AllNamespaces", "supported": False},
        ],
        "customresourcedefinitions": {
            "owned": [
                {
                    "name": "etcdclusters.etcd.database.coreos.com",
                    "version": "v1beta2",
                    "kind": "EtcdCluster",
                    "displayName": "etcd Cluster",
                }
            ],
            "required": [{"name": "backups.backup.io", "version": "v1", "kind": "Backup"}],
        },
        "apiservicedefinitions": {
            "owned": [
                {
                    "group": "metrics.example.com",
                    "version": "v1",
                    "kind": "Metric",
                    "name": "metrics",
                    "deploymentName": "etcd-operator",
                }
            ],
            "required": [{"group": "audit.example.com", "version": "v2", "kind": "Audit"}],
        },
        "install": {
            "strategy": "deployment",
            "spec": {
                "deployments": [
                    {
                        "name": "etcd-operator",
                        "label": {"app": "etcd"},
                        "spec": {
                            "template": {
                                "spec": {
                                    "serviceAccountName": "etcd-sa",
                                    "containers": [{"name": "op", "image": "etcd:1"}],
                                    "initContainers": [{"name": "init", "image": "init:1"}],
                                }
                            }
                        },
                    }
                ],
                "permissions": [
                    {"serviceAccountName": "etcd-sa", "rules": [{"verbs": ["get"]}]},
                ],
                "clusterPermissions": [
                    {"serviceAccountName": "etcd-sa", "rules": [{"verbs": ["list"]}]},
                    {"serviceAccountName": "other-sa", "rules": []},
                ],
            },
        },
    },
}


def test_a_full_csv_reads_into_typed_fields() -> None:
    view = CsvView.of(CSV)
    assert (view.name, view.namespace, view.uid) == ("etcd.v0.9.2", "operators", "uid-1")
    assert (view.version, view.replaces, view.skips) == ("0.9.2", "etcd.v0.9.0", ("etcd.v0.9.1",))
    assert view.annotations["olm.skipRange"] == "<0.9.2"
    assert view.owned_crds == (
        CrdDescription(
            "etcdclusters.etcd.database.coreos.com", "v1beta2", "EtcdCluster", "etcd Cluster"
        ),
    )
    assert view.required_crds == (CrdDescription("backups.backup.io", "v1", "Backup"),)
    assert view.owned_api_services == (
        ApiServiceDescription("metrics.example.com", "v1", "Metric", "metrics", "etcd-operator"),
    )
    assert view.required_api_services == (
        ApiServiceDescription("audit.example.com", "v2", "Audit"),
    )
    assert view.install_modes == (
        InstallMode("OwnNamespace", True),
        InstallMode("AllNamespaces", False),
    )
    assert view.strategy == "deployment"
    assert [d.name for d in view.deployments] == ["etcd-operator"]
    assert view.deployments[0].labels == {"app": "etcd"}
    assert view.deployments[0].service_account == "etcd-sa"
    assert [c["name"] for c in view.deployments[0].containers] == ["op", "init"]
    assert view.permissions == (
        StrategyPermission("etcd-sa", ({"verbs": ["get"]},), cluster_scoped=False),
        StrategyPermission("etcd-sa", ({"verbs": ["list"]},), cluster_scoped=True),
        StrategyPermission("other-sa", (), cluster_scoped=True),
    )
    assert view.service_accounts == ("etcd-sa", "other-sa")


def test_derived_names_and_gvks() -> None:
    view = CsvView.of(CSV)
    crd = view.owned_crds[0]
    assert (crd.plural, crd.group) == ("etcdclusters", "etcd.database.coreos.com")
    assert crd.gvk.provided_api == "EtcdCluster.v1beta2.etcd.database.coreos.com"
    assert view.owned_api_services[0].api_service_name == "v1.metrics.example.com"
    assert view.owned_crd_names == {"etcdclusters.etcd.database.coreos.com"}
    assert view.required_crd_names == {"backups.backup.io"}
    assert view.owned_gvks == {
        Gvk("etcd.database.coreos.com", "v1beta2", "EtcdCluster"),
        Gvk("metrics.example.com", "v1", "Metric"),
    }
    assert view.required_gvks == {
        Gvk("backup.io", "v1", "Backup"),
        Gvk("audit.example.com", "v2", "Audit"),
    }


@pytest.mark.parametrize(
    ("modes", "mode", "supported"),
    [
        ([{"type": "OwnNamespace", "supported": True}], InstallModeType.OWN_NAMESPACE, True),
        ([{"type": "OwnNamespace", "supported": False}], InstallModeType.OWN_NAMESPACE, False),
        ([{"type": "OwnNamespace", "supported": True}], InstallModeType.ALL_NAMESPACES, False),
        ([], InstallModeType.SINGLE_NAMESPACE, False),
        ([{"type": "MultiNamespace"}], InstallModeType.MULTI_NAMESPACE, False),
    ],
)
def test_supports(modes: list[dict[str, Any]], mode: InstallModeType, supported: bool) -> None:
    assert CsvView.of({"spec": {"installModes": modes}}).supports(mode) is supported


def test_install_mode_types_are_olms() -> None:
    # operator-framework/api ClusterServiceVersion InstallModeType constants.
    assert {m.value for m in InstallModeType} == {
        "OwnNamespace",
        "SingleNamespace",
        "MultiNamespace",
        "AllNamespaces",
    }


@pytest.mark.parametrize(
    "csv",
    [
        {},
        {"metadata": None, "spec": None},
        {"spec": {"customresourcedefinitions": None, "apiservicedefinitions": "x"}},
        {"spec": {"customresourcedefinitions": {"owned": "not a list", "required": [3, None]}}},
        {"spec": {"installModes": ["OwnNamespace"], "skips": "etcd.v1"}},
        {"spec": {"install": {"strategy": "deployment", "spec": {"deployments": [None, "x"]}}}},
        {"spec": {"install": {"spec": {"permissions": [{"rules": "all"}], "deployments": None}}}},
    ],
)
def test_malformed_input_reads_as_empty_never_raises(csv: dict[str, Any]) -> None:
    view = CsvView.of(csv)
    assert view.owned_crds == view.required_crds == ()
    assert view.owned_api_services == view.required_api_services == ()
    assert view.install_modes == view.skips == view.deployments == ()
    assert all(p.rules == () for p in view.permissions)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"name": "no-dot", "version": 1, "kind": None}, CrdDescription("no-dot", "1", "")),
        ({}, CrdDescription("", "", "")),
    ],
)
def test_crd_scalars_read_as_strings(raw: dict[str, Any], expected: CrdDescription) -> None:
    assert CrdDescription.of(raw) == expected
    assert expected.group == ""


def test_views_neither_copy_nor_change_the_raw_dict() -> None:
    before = copy.deepcopy(CSV)
    view = CsvView.of(CSV)
    assert view.deployments[0].spec is CSV["spec"]["install"]["spec"]["deployments"][0]["spec"]
    assert before == CSV
    with pytest.raises(AttributeError):
        view.name = "other"  # type: ignore[misc]


CSV_INFO = KINDS[Kind.CLUSTER_SERVICE_VERSION]


@pytest.mark.parametrize(
    ("owner", "options", "expected"),
    [
        (
            CSV,
            {},
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "ClusterServiceVersion",
                "name": "etcd.v0.9.2",
                "uid": "uid-1",
                "controller": False,
                "blockOwnerDeletion": False,
            },
        ),
        (
            CSV,
            {"controller": True, "block_owner_deletion": True},
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "ClusterServiceVersion",
                "name": "etcd.v0.9.2",
                "uid": "uid-1",
                "controller": True,
                "blockOwnerDeletion": True,
            },
        ),
        (
            {"metadata": {"name": "etcd.v0.9.2"}},
            {"kind": CSV_INFO},
            {
                "apiVersion": CSV_INFO.api_version,
                "kind": "ClusterServiceVersion",
                "name": "etcd.v0.9.2",
                "uid": "",
                "controller": False,
                "blockOwnerDeletion": False,
            },
        ),
        (
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "Subscription",
                "metadata": {"name": "etcd", "uid": "u2"},
            },
            {"controller": False},
            {
                "apiVersion": "operators.coreos.com/v1alpha1",
                "kind": "Subscription",
                "name": "etcd",
                "uid": "u2",
                "controller": False,
                "blockOwnerDeletion": False,
            },
        ),
    ],
)
def test_owner_reference(
    owner: dict[str, Any], options: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert owner_reference(owner, **options) == expected


def test_owner_reference_without_apiversion_or_kind_names_the_fix() -> None:
    with pytest.raises(ValueError, match=r"'etcd' .* no apiVersion/kind.*kind="):
        owner_reference({"metadata": {"name": "etcd"}})
