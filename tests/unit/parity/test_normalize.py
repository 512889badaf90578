"""The parity suite's normalizer and differ, on plain dicts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.parity.known import KnownDifference, headings, load_known, unlisted
from tests.parity.normalize import MISSING, Difference, diff_runs, diff_values, normalize
from tests.support.paths import REPO

UID_A = "0b9f6c1e-1111-4a2b-9c3d-000000000001"
UID_B = "0b9f6c1e-2222-4a2b-9c3d-000000000002"
UID_C = "0b9f6c1e-3333-4a2b-9c3d-000000000003"


def obj(kind: str, name: str, namespace: str = "ns", uid: str = "", **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "resourceVersion": "123"}
    if namespace:
        meta["namespace"] = namespace
    if uid:
        meta["uid"] = uid
    meta.update(rest.pop("metadata", {}))
    return {"kind": kind, "metadata": meta, **rest}


def one(objects: list[dict[str, Any]], key: str) -> dict[str, Any]:
    return normalize(objects)[key]


@pytest.mark.parametrize(
    ("given", "key", "expected"),
    [
        pytest.param(
            [
                obj(
                    "ConfigMap",
                    "a",
                    uid=UID_A,
                    metadata={
                        "creationTimestamp": "2026-01-01T00:00:00Z",
                        "managedFields": [{}],
                        "generation": 2,
                    },
                )
            ],
            "ConfigMap ns/a",
            {
                "kind": "ConfigMap",
                "metadata": {
                    "name": "a",
                    "namespace": "ns",
                    "uid": "<uid:ConfigMap/ns/a>",
                    "generation": 2,
                },
            },
            id="volatile-metadata",
        ),
        pytest.param(
            [
                obj(
                    "X",
                    "a",
                    status={
                        "lastUpdateTime": "2026-11-23T17:29:01.123456Z",
                        "message": "not a time 2026-11-23T17:29:01Z",
                    },
                )
            ],
            "X ns/a",
            {
                "kind": "X",
                "metadata": {"name": "a", "namespace": "ns"},
                "status": {
                    "lastUpdateTime": "<time>",
                    "message": "not a time 2026-11-23T17:29:01Z",
                },
            },
            id="timestamps-whole-strings-only",
        ),
        pytest.param(
            [
                obj(
                    "Namespace",
                    "t",
                    namespace="",
                    metadata={
                        "labels": {
                            f"olm.operatorgroup.uid/{UID_A}": "",
                            f"olm.operatorgroup.uid/{UID_C}": "",
                        }
                    },
                ),
                obj("OperatorGroup", "og", uid=UID_A),
            ],
            "Namespace t",
            {
                "kind": "Namespace",
                "metadata": {
                    "name": "t",
                    "labels": {
                        "olm.operatorgroup.uid/<uid:OperatorGroup/ns/og>": "",
                        "olm.operatorgroup.uid/<uid>": "",
                    },
                },
            },
            id="uid-in-label-keys",
        ),
        pytest.param(
            [
                obj(
                    "Deployment", "d", metadata={"ownerReferences": [{"kind": "CSV", "uid": UID_B}]}
                ),
                obj("ClusterServiceVersion", "c", uid=UID_B),
            ],
            "Deployment ns/d",
            {
                "kind": "Deployment",
                "metadata": {
                    "name": "d",
                    "namespace": "ns",
                    "ownerReferences": [{"kind": "CSV", "uid": "<uid:ClusterServiceVersion/ns/c>"}],
                },
            },
            id="owner-reference-uid",
        ),
        pytest.param(
            [
                obj(
                    "X",
                    "a",
                    metadata={
                        "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}
                    },
                )
            ],
            "X ns/a",
            {"kind": "X", "metadata": {"name": "a", "namespace": "ns"}},
            id="last-applied-dropped",
        ),
    ],
)
def test_normalize_objects(given: list[dict[str, Any]], key: str, expected: dict[str, Any]) -> None:
    assert one(given, key) == expected


def test_install_plans_are_numbered_in_creation_order_and_references_follow() -> None:
    plans = [
        obj("InstallPlan", "install-zzzzz", metadata={"creationTimestamp": "2026-01-01T00:00:01Z"}),
        obj("InstallPlan", "install-aaaaa", metadata={"creationTimestamp": "2026-01-01T00:00:02Z"}),
    ]
    sub = obj(
        "Subscription",
        "s",
        status={
            "installPlanRef": {"name": "install-aaaaa"},
            "message": "plan install-zzzzz failed; not install-zzzzzz",
        },
    )
    result = normalize([*plans, sub])
    assert set(result) == {
        "InstallPlan ns/install-<1>",
        "InstallPlan ns/install-<2>",
        "Subscription ns/s",
    }
    status = result["Subscription ns/s"]["status"]
    assert status["installPlanRef"]["name"] == "install-<2>"
    assert status["message"] == "plan install-<1> failed; not install-zzzzzz"


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        pytest.param("op.v1-sa-8f3a2b1c0d", "Role ns/op.v1-<hash>", id="olm-py-hex"),
        pytest.param("op.v1-sa-7bq9fcd4x5", "Role ns/op.v1-<hash>", id="olm-base62"),
        pytest.param("op.v1-sa-b5", "Role ns/op.v1-<hash>", id="short-hash"),
        pytest.param(
            "op.v-682TEHHJ8opYFHgXWxihR9G7ypjhFPNRL1aoh8",
            "Role ns/op.v1-<hash>",
            id="olm-cut-owner",
        ),
        pytest.param("unrelated-role-abc", "Role ns/unrelated-role-abc", id="not-owned-name"),
    ],
)
def test_generated_rbac_names_lose_their_hash(name: str, canonical: str) -> None:
    role = obj("Role", name, metadata={"labels": {"olm.owner": "op.v1"}})
    binding = obj(
        "RoleBinding",
        name,
        metadata={"labels": {"olm.owner": "op.v1"}},
        roleRef={"kind": "Role", "name": name},
    )
    result = normalize([role, binding])
    assert canonical in result
    assert (
        result[canonical.replace("Role ", "RoleBinding ", 1)]["roleRef"]["name"]
        == (canonical.split("/", 1)[1])
    )


def test_cut_rbac_names_compare_equal() -> None:
    owner = "a-very-long-operator-name.v1.2.3-with-a-long-suffix"
    olm = f"{owner}-a-service-account"[:52] + "-7bq9fcd4x5"
    olm_py = f"{owner}-a-service-account"[:45] + "-8f3a2b1c0d"
    keys = [
        set(
            normalize(
                [obj("ClusterRole", n, namespace="", metadata={"labels": {"olm.owner": owner}})]
            )
        )
        for n in (olm, olm_py)
    ]
    assert keys[0] == keys[1]


def test_step_manifests_are_parsed_and_normalized() -> None:
    manifest = json.dumps(
        {
            "kind": "Role",
            "metadata": {"name": "op.v1-sa-8f3a2b1c0d", "ownerReferences": [{"uid": UID_A}]},
        }
    )
    plan = obj(
        "InstallPlan",
        "install-abcde",
        status={
            "plan": [
                {"resource": {"kind": "Role", "name": "op.v1-sa-8f3a2b1c0d", "manifest": manifest}}
            ]
        },
    )
    role = obj("Role", "op.v1-sa-8f3a2b1c0d", metadata={"labels": {"olm.owner": "op.v1"}})
    step = normalize([plan, role])["InstallPlan ns/install-<1>"]["status"]["plan"][0]["resource"]
    assert step["name"] == "op.v1-<hash>"
    assert step["manifest"] == {
        "kind": "Role",
        "metadata": {"name": "op.v1-<hash>", "ownerReferences": [{"uid": "<uid>"}]},
    }


def test_events_become_distinct_reasons_per_object() -> None:
    def event(reason: str, name: str = "c", type_: str = "Normal") -> dict[str, Any]:
        return {
            "kind": "Event",
            "metadata": {"name": f"{name}.{reason}", "namespace": "ns"},
            "involvedObject": {"kind": "ClusterServiceVersion", "namespace": "ns", "name": name},
            "reason": reason,
            "type": type_,
            "count": 3,
        }

    result = normalize([event("B"), event("A"), event("A"), event("X", type_="Warning")])
    assert result == {
        "EventReasons ns/ClusterServiceVersion.c": {
            "kind": "EventReasons",
            "metadata": {"namespace": "ns", "name": "ClusterServiceVersion.c"},
            "reasons": {"Normal/A": True, "Normal/B": True, "Warning/X": True},
        }
    }


@pytest.mark.parametrize(
    ("reference", "olm_py", "expected"),
    [
        pytest.param({"a": 1}, {"a": 1}, [], id="equal"),
        pytest.param({"a": {"b": 1}}, {"a": {"b": 2}}, [("a.b", 1, 2)], id="nested"),
        pytest.param({"a": 1}, {}, [("a", 1, MISSING)], id="missing-in-olm-py"),
        pytest.param({}, {"a": 1}, [("a", MISSING, 1)], id="extra-in-olm-py"),
        pytest.param(
            {"c": [{"type": "A", "status": "True"}, {"type": "B", "status": "True"}]},
            {"c": [{"type": "A", "status": "False"}]},
            [
                ("c[type=A].status", "True", "False"),
                ("c[type=B]", {"type": "B", "status": "True"}, MISSING),
            ],
            id="keyed-list-by-type",
        ),
        pytest.param(
            {"c": [{"name": "x", "v": 1}, {"name": "y", "v": 1}]},
            {"c": [{"name": "y", "v": 1}, {"name": "x", "v": 1}]},
            [("c[*order*]", ["x", "y"], ["y", "x"])],
            id="keyed-list-order",
        ),
        pytest.param({"l": [1, 2]}, {"l": [1, 3]}, [("l[1]", 2, 3)], id="list-by-index"),
        pytest.param({"l": [1, 2]}, {"l": [1]}, [("l", [1, 2], [1])], id="list-length"),
        pytest.param({"a": 1}, {"a": "1"}, [("a", 1, "1")], id="type-change"),
        pytest.param(
            {"metadata": {"name": "p"}},
            {"metadata": {"name": "p", "annotations": {"x/y": "1", "z": "2"}}},
            [("metadata.annotations.x/y", MISSING, "1"), ("metadata.annotations.z", MISSING, "2")],
            id="annotations-on-one-side-differ-per-key",
        ),
        pytest.param(
            {"metadata": {"labels": {"l": "1"}}},
            {"metadata": {}},
            [("metadata.labels.l", "1", MISSING)],
            id="labels-on-one-side-differ-per-key",
        ),
    ],
)
def test_diff_values(reference: Any, olm_py: Any, expected: list[tuple[str, Any, Any]]) -> None:
    assert sorted(diff_values(reference, olm_py)) == sorted(expected)


def test_diff_runs_normalizes_both_sides_and_reports_missing_objects_and_points() -> None:
    reference = {
        "installed": [
            obj("ConfigMap", "a", uid=UID_A, data={"k": "v"}),
            obj("ConfigMap", "only-ref"),
        ],
        "only-ref-point": [],
    }
    olm_py = {"installed": [obj("ConfigMap", "a", uid=UID_B, data={"k": "w"})]}
    assert diff_runs(reference, olm_py) == [
        Difference("installed", "ConfigMap ns/a", "data.k", "v", "w"),
        Difference("installed", "ConfigMap ns/only-ref", "", "present", MISSING),
        Difference("only-ref-point", "*", "", "collected", MISSING),
    ]


@pytest.mark.parametrize(
    ("entry", "difference", "listed"),
    [
        (
            {"scenario": "*", "kind": "Subscription", "path": "status.conditions[type=X]*"},
            Difference("p", "Subscription ns/s", "status.conditions[type=X].reason", 1, 2),
            True,
        ),
        (
            {"scenario": "subscription-*", "kind": "*", "path": "*"},
            Difference("p", "Subscription ns/s", "spec", 1, 2),
            False,
        ),
        (
            {"scenario": "*", "kind": "ClusterRole", "path": "", "object": "*-admin"},
            Difference("p", "ClusterRole x-admin", "", "present", MISSING),
            True,
        ),
        (
            {"scenario": "*", "kind": "ClusterRole", "path": "", "object": "*-admin"},
            Difference("p", "ClusterRole x-view", "", "present", MISSING),
            False,
        ),
        (
            {"scenario": "*", "kind": "*", "path": "*", "point": "upgraded"},
            Difference("installed", "X ns/a", "a", 1, 2),
            False,
        ),
    ],
)
def test_known_differences_match(
    entry: dict[str, str], difference: Difference, listed: bool
) -> None:
    known = load_known([{**entry, "reason": "r", "heading": "h"}])
    assert unlisted("kubectl", [difference], known) == ([] if listed else [difference])


def test_known_difference_entries_are_checked() -> None:
    with pytest.raises(ValueError, match=r"missing fields.*heading"):
        load_known([{"scenario": "*", "kind": "*", "path": "*", "reason": "r"}])
    with pytest.raises(ValueError, match=r"unknown fields.*'paht'"):
        load_known([{"scenario": "*", "kind": "*", "paht": "*", "reason": "r", "heading": "h"}])
    assert isinstance(load_known([])[:1], list)
    assert KnownDifference("*", "*", "", "r", "h").object == "*"


def test_headings_include_bold_list_leads() -> None:
    text = "# Title\n\n## CRDs\n\n- **Unknown fields are kept.** More.\n- plain item\n"
    assert headings(text) == {"Title", "CRDs", "Unknown fields are kept."}


def test_every_known_difference_names_a_heading_of_differences_md() -> None:
    import yaml

    entries = yaml.safe_load((REPO / "tests" / "parity" / "known_differences.yaml").read_text())
    known = load_known(entries or [])
    available = headings((REPO / "docs" / "differences.md").read_text())
    missing = sorted({k.heading for k in known} - available)
    assert not missing, f"headings not in docs/differences.md: {missing}"
    assert all(k.reason.strip() for k in known)


def test_csv_history_drops_install_waiting_and_repeats() -> None:
    def entry(phase: str, reason: str, message: str = "m") -> dict[str, str]:
        return {
            "phase": phase,
            "reason": reason,
            "message": message,
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }

    csv = obj(
        "ClusterServiceVersion",
        "c",
        status={
            "conditions": [
                entry("Installing", "InstallSucceeded"),
                entry("Installing", "InstallWaiting", "waiting for spec update"),
                entry("Installing", "InstallSucceeded", "again"),
                entry("Succeeded", "InstallSucceeded"),
            ]
        },
    )
    history = one([csv], "ClusterServiceVersion ns/c")["status"]["conditions"]
    assert [(e["phase"], e["reason"], e["lastTransitionTime"]) for e in history] == [
        ("Installing", "InstallSucceeded", "<time>"),
        ("Succeeded", "InstallSucceeded", "<time>"),
    ]


def test_events_about_pods_are_dropped() -> None:
    event = {
        "kind": "Event",
        "metadata": {"name": "p.1", "namespace": "ns"},
        "involvedObject": {"kind": "Pod", "namespace": "ns", "name": "op-7857d5f9dd-lm2x4"},
        "reason": "Scheduled",
        "type": "Normal",
    }
    assert normalize([event]) == {}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        pytest.param(
            {"a": {}, "b": [], "c": "", "d": 0, "e": False},
            {"d": 0, "e": False},
            id="empty-values-dropped",
        ),
        pytest.param(
            {"metadata": {"labels": {"x": ""}, "annotations": {"y": ""}}},
            {"metadata": {"labels": {"x": ""}, "annotations": {"y": ""}}},
            id="empty-label-values-kept",
        ),
        pytest.param(
            {
                "metadata": {
                    "labels": {
                        "olm.deployment-spec-hash": "9PTBeLL62R9n0X",
                        "olm.permissions.hash": "d8c1e14cad",
                    }
                }
            },
            {
                "metadata": {
                    "labels": {
                        "olm.deployment-spec-hash": "<hash>",
                        "olm.permissions.hash": "<hash>",
                    }
                }
            },
            id="hash-labels",
        ),
        pytest.param(
            {
                "metadata": {"annotations": {"olmcahash": "cdd9fa44", "other": "kept"}},
                "webhooks": [{"clientConfig": {"caBundle": "LS0tLS1CRUdJTi"}}],
            },
            {
                "metadata": {"annotations": {"olmcahash": "<ca>", "other": "kept"}},
                "webhooks": [{"clientConfig": {"caBundle": "<ca>"}}],
            },
            id="each-clusters-own-ca",
        ),
        pytest.param({"address": "127.0.0.1:37291"}, {"address": "127.0.0.1:<port>"}, id="port"),
        pytest.param(
            {"m": 'ReplicaSet "memcached-operator-68df57598b" has progressed.'},
            {"m": 'ReplicaSet "memcached-operator-<hash>" has progressed.'},
            id="replica-set-hash",
        ),
    ],
)
def test_normalize_values(given: dict[str, Any], expected: dict[str, Any]) -> None:
    got = one(
        [{"kind": "X", **given, "metadata": {"name": "a", **given.get("metadata", {})}}], "X a"
    )
    assert got == {
        "kind": "X",
        **expected,
        "metadata": {"name": "a", **expected.get("metadata", {})},
    }


def test_condition_order_is_not_a_difference_but_step_order_is() -> None:
    a = {"conditions": [{"type": "A"}, {"type": "B"}], "steps": [{"name": "x"}, {"name": "y"}]}
    b = {"conditions": [{"type": "B"}, {"type": "A"}], "steps": [{"name": "y"}, {"name": "x"}]}
    assert diff_values(a, b) == [("steps[*order*]", ["x", "y"], ["y", "x"])]


def test_catalog_render_puts_every_object_inline(tmp_path: Any) -> None:
    import base64

    from tests.parity.catalogs import Bundle, Package, render

    crd = {
        "kind": "CustomResourceDefinition",
        "spec": {"group": "g.example.com", "names": {"kind": "W"}, "versions": [{"name": "v1"}]},
    }
    csv = {
        "kind": "ClusterServiceVersion",
        "metadata": {"name": "w.v1.0.0"},
        "spec": {"version": "1.0.0"},
    }
    docs = render(Package("w", "alpha", [Bundle([csv, crd]), Bundle([csv], replaces="x")]))
    assert [d["schema"] for d in docs] == ["olm.package", "olm.channel", "olm.bundle", "olm.bundle"]
    assert docs[1]["entries"] == [{"name": "w.v1.0.0"}, {"name": "w.v1.0.0", "replaces": "x"}]
    bundle = docs[2]
    assert bundle["image"] == ""
    types = [p["type"] for p in bundle["properties"]]
    assert types == ["olm.package", "olm.gvk", "olm.bundle.object", "olm.bundle.object"]
    first = json.loads(base64.b64decode(bundle["properties"][2]["value"]["data"]))
    assert first == csv


def test_manifests_keep_timestamps_as_text(tmp_path: Any) -> None:
    from tests.parity.catalogs import load_manifests

    (tmp_path / "csv.yaml").write_text(
        "kind: X\nmetadata:\n  annotations:\n    createdAt: 2025-09-11T00:00:00Z\n"
    )
    assert (
        load_manifests(tmp_path)[0]["metadata"]["annotations"]["createdAt"]
        == "2025-09-11T00:00:00Z"
    )


def test_operator_refs_are_keyed_by_kind_namespace_and_name() -> None:
    def operator(*refs: tuple[str, str, str]) -> dict[str, Any]:
        return {
            "kind": "Operator",
            "metadata": {"name": "op.ns"},
            "status": {
                "components": {
                    "refs": [
                        {"apiVersion": "v1", "kind": k, "namespace": ns, "name": n}
                        for k, ns, n in refs
                    ]
                }
            },
        }

    both = [("ClusterServiceVersion", "ns", "op.v2"), ("Role", "ns", "r")]
    reference = operator(("ClusterServiceVersion", "ns", "op.v1"), *both)
    olm_py = operator(*both)
    found = diff_runs({"p": [reference]}, {"p": [olm_py]})
    assert [(d.path, d.olm_py) for d in found] == [
        ("status.components.refs.ClusterServiceVersion ns/op.v1", "<absent>")
    ]


def test_package_manifest_related_images_are_compared_in_any_order() -> None:
    # packageserver gathers them in a Go map: another order on every call.
    def manifest(images: list[str]) -> dict[str, Any]:
        channel = {"name": "stable", "currentCSVDesc": {"relatedImages": images}}
        return obj("PackageManifest", "etcd@community", "olm", status={"channels": [channel]})

    a = manifest(["quay.io/b:1", "quay.io/a:1"])
    b = manifest(["quay.io/a:1", "quay.io/b:1"])
    key = "PackageManifest olm/etcd@community"
    assert diff_runs({"p": [a]}, {"p": [b]}) == []
    desc = one([a], key)["status"]["channels"][0]["currentCSVDesc"]
    assert desc["relatedImages"] == ["quay.io/a:1", "quay.io/b:1"]
    # Anything else of the list still counts.
    c = manifest(["quay.io/a:1"])
    assert [d.path for d in diff_runs({"p": [a]}, {"p": [c]})] == [
        "status.channels[name=stable].currentCSVDesc.relatedImages"
    ]


def test_service_addresses_and_webhook_configuration_suffixes_are_noise() -> None:
    service = {
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "ns"},
        "spec": {"clusterIP": "10.1.2.3", "clusterIPs": ["10.1.2.3"], "ports": [{"port": 443}]},
    }
    hook = {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "vcache.kb.io-25bwz"}}
    found = normalize([service, hook])
    assert found["Service ns/s"]["spec"] == {"ports": [{"port": 443}]}
    assert "ValidatingWebhookConfiguration vcache.kb.io-<suffix>" in found


def test_rbac_step_groups_compare_in_any_account_order() -> None:
    """OLM lists a bundle's generated RBAC per ServiceAccount, the accounts from a Go map."""
    from tests.parity.reshape import rbac_groups_sorted

    def step(kind: str, name: str, resolving: str = "k8gb.v0.11.4") -> dict[str, Any]:
        return {"resolving": resolving, "resource": {"kind": kind, "name": name}}

    head = [step("ClusterServiceVersion", "k8gb.v0.11.4"), step("ConfigMap", "k8gb-coredns")]
    k8gb = [
        step("ServiceAccount", "k8gb"),
        step("ClusterRole", "r1"),
        step("ClusterRoleBinding", "r1"),
    ]
    coredns = [step("ServiceAccount", "coredns"), step("ClusterRole", "r2")]
    other = [step("ServiceAccount", "z", "other.v1"), step("Role", "r3", "other.v1")]

    def plan(steps: list[dict[str, Any]]) -> dict[str, Any]:
        return {"kind": "InstallPlan", "status": {"plan": steps}}

    one_way = rbac_groups_sorted(plan(head + k8gb + coredns + other))
    other_way = rbac_groups_sorted(plan(head + coredns + k8gb + other))
    assert one_way == other_way
    assert one_way["status"]["plan"] == head + coredns + k8gb + other
