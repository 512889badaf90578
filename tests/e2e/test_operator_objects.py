"""Operator objects (operators.coreos.com/v1) as OLM v0.38 keeps them (docs/operators.md): a
Subscription's install gets `<package>.<namespace>` listing its components, every component
carries `operators.coreos.com/<package>.<namespace>`, a deleted Operator comes back while
components remain, a hand-made Operator follows the labels (OLM's e2e "should surface components
in its status"), and a package name no label key can hold is said once and labels nothing."""

from __future__ import annotations

import json
import uuid
from typing import Any

from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.stories import operator_group, phase

PACKAGE = "memcached-operator"
CRD = "memcacheds.cache.example.com"
OPERATORS = "operator.operators.coreos.com"


def subscribe(
    plane: ControlPlane, namespace: str, package: str = PACKAGE, name: str = "sub"
) -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": name},
        "spec": {
            "name": package,
            "channel": "alpha",
            "source": "samples",
            "sourceNamespace": "olm",
            "installPlanApproval": "Automatic",
        },
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))


def operator(plane: ControlPlane, name: str) -> dict[str, Any] | None:
    result = plane.kubectl("get", OPERATORS, name, "-o", "json", check=False)
    return json.loads(result.stdout) if result.returncode == 0 else None


def refs(found: dict[str, Any] | None) -> list[tuple[str, str, str]]:
    components = ((found or {}).get("status") or {}).get("components") or {}
    return [(r["kind"], r.get("namespace", ""), r["name"]) for r in components.get("refs") or []]


def labelled(plane: ControlPlane, resource: str, key: str, namespace: str | None) -> list[str]:
    where = ["-n", namespace] if namespace else []
    items = plane.get_json(resource, "-l", key, *where)["items"]
    return sorted(i["metadata"]["name"] for i in items)


def test_a_subscription_gets_an_operator_listing_its_labelled_components(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    name, key = f"{PACKAGE}.{namespace}", f"operators.coreos.com/{PACKAGE}.{namespace}"
    operator_group(plane, namespace)
    subscribe(plane, namespace)
    sub = wait_for(
        lambda: (
            (s := plane.get_json("subscription.operators.coreos.com", "sub", "-n", namespace))
            .get("status", {})
            .get("installedCSV")
            and s
        ),
        timeout=STEP_TIMEOUT,
        what="an installed CSV",
    )
    csv, plan = sub["status"]["installedCSV"], sub["status"]["installPlanRef"]["name"]
    wait_for(
        lambda: phase(plane, namespace, csv) == "Succeeded/InstallSucceeded",
        timeout=STEP_TIMEOUT,
        what=f"{csv} Succeeded",
    )

    # `kubectl get operators` lists <package>.<namespace>, with every component.
    listing = plane.kubectl("get", OPERATORS).stdout
    assert name in listing, listing
    expected = {
        ("ClusterServiceVersion", namespace, csv),
        ("CustomResourceDefinition", "", CRD),
        ("Deployment", namespace, PACKAGE),
        ("InstallPlan", namespace, plan),
        ("OperatorCondition", namespace, csv),
        ("ServiceAccount", namespace, PACKAGE),
        ("Subscription", namespace, "sub"),
    }
    found = wait_for(
        lambda: (o := operator(plane, name)) and expected <= set(refs(o)) and o,
        timeout=STEP_TIMEOUT,
        what=f"Operator {name} listing {sorted(expected)}",
    )
    listed = refs(found)
    assert listed == sorted(listed, key=lambda r: (r[0], r[1], r[2])), "sorted as OLM sorts"
    kinds = {kind for kind, _, _ in listed}
    assert {"Role", "RoleBinding"} <= kinds  # the plan's RBAC (named <csv>-<hash>)
    assert found["status"]["components"]["labelSelector"] == {
        "matchExpressions": [{"key": key, "operator": "Exists"}]
    }
    by_kind = {r["kind"]: r for r in found["status"]["components"]["refs"]}
    assert by_kind["ClusterServiceVersion"]["conditions"][0]["type"] == "Succeeded"
    assert "conditions" not in by_kind["ServiceAccount"]

    # Every component carries the label, and only those do.
    assert labelled(plane, "subscription.operators.coreos.com", key, namespace) == ["sub"]
    assert labelled(plane, "csv", key, namespace) == [csv]
    assert labelled(plane, "installplan.operators.coreos.com", key, namespace) == [plan]
    assert labelled(plane, "deployment", key, namespace) == [PACKAGE]
    assert labelled(plane, "serviceaccount", key, namespace) == [PACKAGE]
    assert labelled(plane, "operatorcondition.operators.coreos.com", key, namespace) == [csv]
    assert CRD in labelled(plane, "crd", key, None)
    roles = labelled(plane, "role", key, namespace)
    assert roles and csv not in roles, "the OperatorCondition's Role belongs to it, not the CSV"
    listed_names = {(kind, n) for kind, _, n in listed}
    for role in roles:
        assert ("Role", role) in listed_names

    # Deleting the Operator: it comes back while its components remain; nothing else goes.
    uid = found["metadata"]["uid"]
    plane.kubectl("delete", OPERATORS, name)
    back = wait_for(
        lambda: (o := operator(plane, name)) and o["metadata"]["uid"] != uid and refs(o) and o,
        timeout=STEP_TIMEOUT,
        what="the Operator made again",
    )
    assert set(refs(back)) == set(listed)
    assert phase(plane, namespace, csv) == "Succeeded/InstallSucceeded"
    assert labelled(plane, "deployment", key, namespace) == [PACKAGE]


def test_a_hand_made_operator_follows_its_label(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    name = f"o-{uuid.uuid4().hex[:8]}"
    key = f"operators.coreos.com/{name}"
    labels = {"olm.managed": "true", key: ""}
    plane.kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "Operator",
                "metadata": {"name": name},
            }
        ),
    )
    wait_for(
        lambda: (
            ((operator(plane, name) or {}).get("status") or {})
            .get("components", {})
            .get("labelSelector", {})
            .get("matchExpressions")
            == [{"key": key, "operator": "Exists"}]
        ),
        timeout=STEP_TIMEOUT,
        what="the selector of a hand-made Operator",
    )
    space = f"{namespace}-a"
    plane.kubectl("create", "namespace", space)
    for ns in (space, namespace):
        plane.kubectl("create", "serviceaccount", "sa", "-n", ns)
        plane.kubectl(
            "label", "serviceaccount", "sa", "-n", ns, *(f"{k}={v}" for k, v in labels.items())
        )
    plane.kubectl("label", "namespace", space, f"{key}=")
    everything = {
        ("Namespace", "", space),
        ("ServiceAccount", space, "sa"),
        ("ServiceAccount", namespace, "sa"),
    }
    wait_for(
        lambda: set(refs(operator(plane, name))) == everything, timeout=STEP_TIMEOUT, what="3 refs"
    )

    # The label goes: so does the reference.
    plane.kubectl("label", "serviceaccount", "sa", "-n", namespace, f"{key}-")
    wait_for(
        lambda: ("ServiceAccount", namespace, "sa") not in refs(operator(plane, name)),
        timeout=STEP_TIMEOUT,
        what="the unlabelled ServiceAccount gone from the refs",
    )
    # Deleted while components remain: made again.
    uid = operator(plane, name)["metadata"]["uid"]  # type: ignore[index]
    plane.kubectl("delete", OPERATORS, name)
    wait_for(
        lambda: (o := operator(plane, name)) is not None and o["metadata"]["uid"] != uid,
        timeout=STEP_TIMEOUT,
        what="the Operator made again",
    )
    # Its components go (the namespace, and the ServiceAccount in it): no refs left.
    plane.kubectl("delete", "namespace", space, "--wait=false")
    wait_for(
        lambda: (o := operator(plane, name)) is not None and refs(o) == [],
        timeout=STEP_TIMEOUT,
        what="no refs once the namespace is gone",
    )
    # Deleted with no components: it stays deleted. A second Operator created after the delete
    # is the barrier: once it has its status, olm-py has seen the delete (same watch stream).
    plane.kubectl("delete", OPERATORS, name)
    marker = f"{name}-marker"
    plane.kubectl(
        "apply",
        "-f",
        "-",
        stdin=json.dumps(
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "Operator",
                "metadata": {"name": marker},
            }
        ),
    )
    wait_for(
        lambda: ((operator(plane, marker) or {}).get("status") or {}).get("components"),
        timeout=STEP_TIMEOUT,
        what="the marker Operator's status",
    )
    assert operator(plane, name) is None
    plane.kubectl("delete", OPERATORS, marker)


def test_a_package_name_no_label_key_can_hold_is_said_once(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    plane = control_plane
    operator_group(plane, namespace)
    subscribe(plane, namespace, package="mémcached", name="bad")
    wait_for(
        lambda: any(
            c.get("type") == "ResolutionFailed"
            for c in (
                plane.get_json("subscription.operators.coreos.com", "bad", "-n", namespace).get(
                    "status"
                )
                or {}
            ).get("conditions")
            or []
        ),
        timeout=STEP_TIMEOUT,
        what="the Subscription judged",
    )
    # A few more passes over it: the namespace is woken by every status write and by a change.
    plane.kubectl("annotate", "subscription.operators.coreos.com", "bad", "-n", namespace, "x=1")
    plane.kubectl(
        "annotate",
        "subscription.operators.coreos.com",
        "bad",
        "-n",
        namespace,
        "x=2",
        "--overwrite",
    )
    marker = f"{namespace}-done"
    plane.kubectl("create", "serviceaccount", marker, "-n", namespace)
    plane.kubectl(
        "label",
        "serviceaccount",
        marker,
        "-n",
        namespace,
        "olm.managed=true",
        f"operators.coreos.com/{marker}=",
    )
    wait_for(
        lambda: operator(plane, marker) is not None, timeout=STEP_TIMEOUT, what="a later Operator"
    )
    labels = (
        plane.get_json("subscription.operators.coreos.com", "bad", "-n", namespace)["metadata"].get(
            "labels"
        )
        or {}
    )
    assert not [k for k in labels if k.startswith("operators.coreos.com/")]
    said = [
        line
        for line in olm_operator.log_path.read_text(errors="replace").splitlines()
        if f"Subscription {namespace}/bad" in line
    ]
    assert len(said) == 1, said
    assert "spec.name" in said[0] and "label key" in said[0]
    plane.kubectl("delete", OPERATORS, marker)
