"""Per-API ClusterRoles and OperatorGroup aggregation ClusterRoles, as OLM v0 names and builds
them. Hash vectors were computed with Go's standard library (hash/fnv, crypto/sha256, math/big
Text(62)), the functions OLM calls."""

from __future__ import annotations

from typing import Any

import pytest

from olm.api.scope import RoleSuffix
from olm.api.views import Gvk
from olm.scope.apiroles import (
    aggregation_label,
    aggregation_rule,
    fnv64a,
    format_provided_apis,
    group_apis,
    operator_group_cluster_role_name,
    operator_group_cluster_roles,
    operator_group_cluster_roles_to_delete,
    parse_provided_apis,
    provided_api_cluster_roles,
)

ETCD = Gvk("etcd.database.coreos.com", "v1beta2", "EtcdCluster")
MEMCACHED = Gvk("cache.example.com", "v1alpha1", "Memcached")


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        ("EtcdCluster.v1beta2.etcd.database.coreos.com", "c571d720f17289d3"),
        ("Memcached.v1alpha1.cache.example.com", "7d4be2dfad49a2af"),
        ("Foo.v1.example.com", "d2b708116f971c41"),
    ],
)
def test_fnv64a_matches_go(text: str, digest: str) -> None:
    assert fnv64a(text) == digest


@pytest.mark.parametrize(
    ("namespace", "name", "suffix", "expected"),
    [
        (
            "operators",
            "global-operators",
            RoleSuffix.ADMIN,
            "olm.og.global-operators.admin-5UD4U2IfBGbw51Qy2Jaefk1uawvkj2OJILlc3w",
        ),
        (
            "operators",
            "global-operators",
            RoleSuffix.EDIT,
            "olm.og.global-operators.edit-9ZbzBIwu1SlHO7KbWinNtOfyGaVjTWIYhNkNP",
        ),
        (
            "operators",
            "global-operators",
            RoleSuffix.VIEW,
            "olm.og.global-operators.view-6lzJtrbG08ne4wrZHGxP3h1MBUjq5e7nOF4gax",
        ),
        ("ns", "og", RoleSuffix.ADMIN, "olm.og.og.admin-7hdvs1pJiMS8ikuUkvThunsWUnvSLPNYPbr0ec"),
    ],
)
def test_group_role_names_match_olm(
    namespace: str, name: str, suffix: RoleSuffix, expected: str
) -> None:
    assert operator_group_cluster_role_name(namespace, name, suffix) == expected


def test_long_group_names_are_cut_to_253() -> None:
    name = operator_group_cluster_role_name("ns", "g" * 300, RoleSuffix.ADMIN)
    assert len(name) <= 253
    assert name.startswith("olm.og." + "g" * 100)
    assert ".admin-" in name


@pytest.mark.parametrize(
    ("value", "apis"),
    [
        ("", frozenset()),
        ("EtcdCluster.v1beta2.etcd.database.coreos.com", frozenset({ETCD})),
        (
            "Memcached.v1alpha1.cache.example.com, EtcdCluster.v1beta2.etcd.database.coreos.com",
            frozenset({ETCD, MEMCACHED}),
        ),
        ("Broken.v1,Nope", frozenset()),  # fewer than three parts: skipped, as OLM
    ],
)
def test_provided_apis_annotation_round_trip(value: str, apis: frozenset[Gvk]) -> None:
    assert parse_provided_apis(value) == apis
    assert parse_provided_apis(format_provided_apis(apis)) == apis


def test_format_is_sorted_kind_version_group() -> None:
    assert format_provided_apis({MEMCACHED, ETCD}) == (
        "EtcdCluster.v1beta2.etcd.database.coreos.com,Memcached.v1alpha1.cache.example.com"
    )


def csv(
    owned: list[dict[str, str]] | None = None, services: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"name": "etcd.v1", "namespace": "operators", "uid": "csv-uid"},
        "spec": {
            "customresourcedefinitions": {"owned": owned or []},
            "apiservicedefinitions": {"owned": services or []},
        },
    }


ETCD_OWNED = {
    "name": "etcdclusters.etcd.database.coreos.com",
    "version": "v1beta2",
    "kind": "EtcdCluster",
}
CRDS = {
    "etcdclusters.etcd.database.coreos.com": {
        "metadata": {"name": "etcdclusters.etcd.database.coreos.com", "uid": "crd-uid"}
    }
}
CRD_OWNER = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "customresourcedefinition",
    "name": "etcdclusters.etcd.database.coreos.com",
    "uid": "crd-uid",
    "controller": False,
    "blockOwnerDeletion": False,
}


def test_per_crd_roles_match_olm() -> None:
    plan = provided_api_cluster_roles(csv([ETCD_OWNED]), CRDS, {})
    assert plan.missing == []
    by_name = {r["metadata"]["name"]: r for r in plan.apply}
    prefix = "etcdclusters.etcd.database.coreos.com-v1beta2-"
    assert sorted(by_name) == sorted(prefix + s for s in ("admin", "edit", "view", "crdview"))
    hash_ = "c571d720f17289d3"
    expected_rules = {
        "admin": {
            "verbs": ["*"],
            "apiGroups": ["etcd.database.coreos.com"],
            "resources": ["etcdclusters"],
        },
        "edit": {
            "verbs": ["create", "update", "patch", "delete"],
            "apiGroups": ["etcd.database.coreos.com"],
            "resources": ["etcdclusters"],
        },
        "view": {
            "verbs": ["get", "list", "watch"],
            "apiGroups": ["etcd.database.coreos.com"],
            "resources": ["etcdclusters"],
        },
        "crdview": {
            "verbs": ["get"],
            "apiGroups": ["apiextensions.k8s.io"],
            "resources": ["customresourcedefinitions"],
            "resourceNames": ["etcdclusters.etcd.database.coreos.com"],
        },
    }
    for suffix, rule in expected_rules.items():
        level = "view" if suffix == "crdview" else suffix
        role = by_name[prefix + suffix]
        assert role["rules"] == [rule]
        assert role["metadata"]["labels"] == {
            f"rbac.authorization.k8s.io/aggregate-to-{level}": "true",
            f"olm.opgroup.permissions/aggregate-to-{hash_}-{level}": "true",
            "olm.managed": "true",
        }
        assert role["metadata"]["ownerReferences"] == [CRD_OWNER]
        assert "namespace" not in role["metadata"]


def test_api_service_roles_match_olm() -> None:
    service = {
        "group": "packages.example.com",
        "version": "v1",
        "kind": "PackageManifest",
        "name": "packagemanifests",
    }
    services = {
        "v1.packages.example.com": {
            "metadata": {"name": "v1.packages.example.com", "uid": "svc-uid"}
        }
    }
    plan = provided_api_cluster_roles(csv(services=[service]), {}, services)
    names = sorted(r["metadata"]["name"] for r in plan.apply)
    assert names == [
        "packagemanifests-v1-admin",
        "packagemanifests-v1-edit",
        "packagemanifests-v1-view",
    ]
    owner = plan.apply[0]["metadata"]["ownerReferences"][0]
    assert (owner["apiVersion"], owner["kind"], owner["name"], owner["uid"]) == (
        "apiregistration.k8s.io/v1",
        "APIService",
        "v1.packages.example.com",
        "svc-uid",
    )
    assert plan.apply[0]["rules"][0]["resources"] == ["packagemanifests"]


@pytest.mark.parametrize(
    ("owned", "crds", "missing"),
    [
        ([ETCD_OWNED], {}, ["crd 'etcdclusters.etcd.database.coreos.com' not found"]),
        (
            [{"name": "nodots", "version": "v1", "kind": "X"}],
            {},
            ["spec.customresourcedefinitions.owned name 'nodots' is not <plural>.<group>"],
        ),
    ],
)
def test_missing_apis_are_reported(
    owned: list[dict[str, str]], crds: dict[str, Any], missing: list[str]
) -> None:
    plan = provided_api_cluster_roles(csv(owned), crds, {})
    assert plan.apply == []
    assert plan.missing == missing


def og(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "global-operators",
            "namespace": "operators",
            "uid": "og-uid",
            "annotations": annotations or {},
        }
    }


def test_group_roles_aggregate_each_provided_api_sorted() -> None:
    apis = group_apis(
        og({"olm.providedAPIs": "Memcached.v1alpha1.cache.example.com"}), [csv([ETCD_OWNED])]
    )
    assert apis == {ETCD, MEMCACHED}
    roles = operator_group_cluster_roles(og(), apis)
    assert [r["metadata"]["name"] for r in roles] == [
        "olm.og.global-operators.admin-5UD4U2IfBGbw51Qy2Jaefk1uawvkj2OJILlc3w",
        "olm.og.global-operators.edit-9ZbzBIwu1SlHO7KbWinNtOfyGaVjTWIYhNkNP",
        "olm.og.global-operators.view-6lzJtrbG08ne4wrZHGxP3h1MBUjq5e7nOF4gax",
    ]
    admin = roles[0]
    assert admin["metadata"]["labels"] == {
        "olm.owner": "global-operators",
        "olm.owner.namespace": "operators",
        "olm.owner.kind": "OperatorGroup",
        "olm.managed": "true",
    }
    assert "ownerReferences" not in admin["metadata"]
    assert "rules" not in admin
    assert admin["aggregationRule"] == {
        "clusterRoleSelectors": [
            {
                "matchLabels": {
                    "olm.opgroup.permissions/aggregate-to-7d4be2dfad49a2af-admin": "true"
                }
            },
            {
                "matchLabels": {
                    "olm.opgroup.permissions/aggregate-to-c571d720f17289d3-admin": "true"
                }
            },
        ]
    }
    # the selectors pick exactly the per-API roles of that level
    per_api = provided_api_cluster_roles(csv([ETCD_OWNED]), CRDS, {}).apply
    admin_role = next(r for r in per_api if r["metadata"]["name"].endswith("-admin"))
    assert aggregation_label(ETCD, RoleSuffix.ADMIN) in admin_role["metadata"]["labels"]


def test_group_without_apis_has_no_aggregation_rule() -> None:
    assert aggregation_rule([], RoleSuffix.VIEW) is None
    assert all("aggregationRule" not in r for r in operator_group_cluster_roles(og(), []))


def test_deleted_group_roles_are_found_by_owner_labels() -> None:
    roles = operator_group_cluster_roles(og(), [ETCD])
    other = {
        "metadata": {
            "name": "x",
            "labels": {
                "olm.owner": "global-operators",
                "olm.owner.kind": "OperatorGroup",
                "olm.owner.namespace": "elsewhere",
            },
        }
    }
    assert operator_group_cluster_roles_to_delete(
        "operators", "global-operators", [*roles, other]
    ) == sorted(r["metadata"]["name"] for r in roles)
