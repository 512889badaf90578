"""Global operators, installed the way OperatorHub installs them: a corpus operator that
supports AllNamespaces, served by `olm catalog serve` and subscribed in namespace `operators`
(whose OperatorGroup `global-operators` targets every namespace).

The admin sees, as with OLM v0: the CSV copied into every other namespace (and into new ones
within about two seconds); the operator's namespaced permissions granted in every namespace;
the operator's API usable by anyone bound to `edit` in a namespace; OLMConfig's
`disableCopiedCSVs` removing the copies and bringing them back; and a MultiNamespace group
whose copies and RBAC follow its targets."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from olm.kube.client import api_client
from olm.kube.errors import NotFound
from olm.kube.gateway import Gateway
from tests.support.catalog_server import Server
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import OlmOperator
from tests.support.paths import SHARED
from tests.support.stories import wait_phase, warning_events

CORPUS = SHARED / "corpus" / "community-operators" / "operators"
OPERATORS = "operators"
GLOBAL_GROUP = "global-operators"
# AllNamespaces, with namespaced permissions, clusterPermissions and one owned CRD.
GLOBAL: dict[str, Any] = {
    "package": "kubevirt-wol",
    "channel": "alpha",
    "csv": "kubevirt-wol.v0.0.2",
    "sa": "kubevirt-wol-controller-manager",
    "crd": "wolconfigs.wol.pillon.org",
    "crd_version": "v1beta1",
    "bundle": CORPUS / "kubevirt-wol" / "0.0.2" / "manifests",
}
# Own/Single/Multi/AllNamespaces, same shape.
MULTI: dict[str, Any] = {
    "package": "ecr-secret-operator",
    "channel": "v0.3",
    "csv": "ecr-secret-operator.v0.3.2",
    "sa": "ecr-secret-operator-controller-manager",
    "crd": "secrets.ecr.mobb.redhat.com",
    "crd_version": "v1alpha1",
    "bundle": CORPUS / "ecr-secret-operator" / "0.3.2" / "manifests",
}
# Two more AllNamespaces operators with namespaced permissions and one owned CRD, installed
# beside GLOBAL; `can` is one of their namespaced permissions.
MORE: list[dict[str, Any]] = [
    {
        "package": "openshift-qiskit-operator",
        "channel": "alpha",
        "csv": "openshift-qiskit-operator.v0.2.1",
        "sa": "qiskit-operator-controller-manager",
        "crd": "qiskitplaygrounds.qiskit.ibm.com",
        "crd_version": "v1alpha1",
        "bundle": CORPUS / "openshift-qiskit-operator" / "0.2.1" / "manifests",
        "can": ("create", "leases.coordination.k8s.io"),
    },
    {
        "package": "kubernetes-imagepuller-operator",
        "channel": "stable",
        "csv": "kubernetes-imagepuller-operator.v1.0.6",
        "sa": "kubernetes-image-puller-operator",
        "crd": "kubernetesimagepullers.che.eclipse.org",
        "crd_version": "v1alpha1",
        "bundle": CORPUS / "kubernetes-imagepuller-operator" / "1.0.6" / "manifests",
        "can": ("create", "secrets"),
    },
]
ROLE_SUFFIXES = ("admin", "edit", "view", "crdview")
# How soon a new namespace gets its copies is measured by `make bench` (global-operators:
# goal about 2 s, OLM v0 0.8-1.4 s); here it is printed, and only its arrival is asserted.


# ----- what an admin types ---------------------------------------------------------------------


def apply(plane: ControlPlane, obj: dict[str, Any], namespace: str | None = None) -> None:
    where = ["-n", namespace] if namespace else []
    plane.kubectl("apply", *where, "-f", "-", stdin=json.dumps(obj))


def catalog_source(plane: ControlPlane, namespace: str, name: str, port: int) -> None:
    apply(
        plane,
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "CatalogSource",
            "metadata": {"name": name},
            "spec": {
                "sourceType": "grpc",
                "address": f"127.0.0.1:{port}",
                "displayName": "community-operators corpus",
                "publisher": "test",
            },
        },
        namespace,
    )
    wait_for(
        lambda: (
            (plane.get_json("catsrc", name, "-n", namespace).get("status") or {})
            .get("connectionState", {})
            .get("lastObservedState")
            == "READY"
        ),
        timeout=STEP_TIMEOUT,
        what=f"CatalogSource {namespace}/{name} READY",
    )


def subscribe(plane: ControlPlane, namespace: str, operator: dict[str, Any], source: str) -> None:
    apply(
        plane,
        {
            "apiVersion": "operators.coreos.com/v1alpha1",
            "kind": "Subscription",
            "metadata": {"name": operator["package"]},
            "spec": {
                "name": operator["package"],
                "channel": operator["channel"],
                "source": source,
                "sourceNamespace": namespace,
                "installPlanApproval": "Automatic",
            },
        },
        namespace,
    )


def namespaces(plane: ControlPlane) -> list[str]:
    """Every namespace that is not being deleted."""
    return [
        item["metadata"]["name"]
        for item in plane.get_json("namespaces")["items"]
        if (item.get("status") or {}).get("phase") == "Active"
    ]


def copies(plane: ControlPlane, operator: dict[str, Any], origin: str) -> dict[str, dict[str, Any]]:
    """`kubectl get csv -A -l olm.copiedFrom=<origin>`, by namespace."""
    listed = plane.get_json("csv", "-A", "-l", f"olm.copiedFrom={origin}")["items"]
    return {
        c["metadata"]["namespace"]: c for c in listed if c["metadata"]["name"] == operator["csv"]
    }


def can_i(plane: ControlPlane, who: str, verb: str, resource: str, namespace: str) -> bool:
    result = plane.kubectl(
        "auth", "can-i", f"--as={who}", verb, resource, "-n", namespace, check=False
    )
    return result.stdout.strip() == "yes"


def service_account(operator: dict[str, Any], namespace: str) -> str:
    return f"system:serviceaccount:{namespace}:{operator['sa']}"


def bundle_cluster_objects(operator: dict[str, Any]) -> list[str]:
    """kind/name of the cluster-scoped objects the bundle itself ships (besides its CRD)."""
    found = []
    for path in sorted(Path(operator["bundle"]).glob("*.yaml")):
        obj = yaml.safe_load(path.read_text())
        if obj.get("kind") in ("ClusterRole", "ClusterRoleBinding"):
            found.append(f"{obj['kind'].lower()}/{obj['metadata']['name']}")
    return found


def uninstall(plane: ControlPlane, namespace: str, operator: dict[str, Any]) -> None:
    """What an admin does to remove the operator (and the test its cluster-wide leftovers)."""
    plane.kubectl(
        "delete",
        "subscription.operators.coreos.com",
        operator["package"],
        "-n",
        namespace,
        "--ignore-not-found",
    )
    plane.kubectl(
        "delete",
        "csv",
        operator["csv"],
        "-n",
        namespace,
        "--ignore-not-found",
        "--timeout=60s",
        check=False,
    )
    for plan in plane.get_json("installplan.operators.coreos.com", "-n", namespace)["items"]:
        if operator["csv"] in plan["spec"]["clusterServiceVersionNames"]:
            plane.kubectl(
                "delete",
                "installplan.operators.coreos.com",
                plan["metadata"]["name"],
                "-n",
                namespace,
                "--ignore-not-found",
            )
    api_roles = [
        f"clusterrole/{operator['crd']}-{operator['crd_version']}-{suffix}"
        for suffix in ROLE_SUFFIXES
    ]
    plane.kubectl(
        "delete",
        *api_roles,
        *bundle_cluster_objects(operator),
        f"crd/{operator['crd']}",
        "--ignore-not-found",
        "--wait=false",
    )


def create_namespace(plane: ControlPlane, prefix: str) -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    plane.kubectl("create", "namespace", name)
    return name


# ----- fixtures --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_catalog(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The corpus packages, served by `olm catalog serve` (as a catalog image would be)."""
    directory = tmp_path_factory.mktemp("corpus-catalog")
    for operator in (GLOBAL, MULTI, *MORE):
        bundle = Path(operator["bundle"]).parent
        shutil.copytree(bundle, directory / operator["package"] / bundle.name)
    # ecr-secret-operator 0.3.2 names v0.4 as its default channel, which only later bundles
    # have: published alone, it says v0.3.
    # It also ships an example Secret.ecr.mobb.redhat.com without the spec.region its own CRD
    # requires, which no install can create: left out, as its publisher would have to.
    published = directory / MULTI["package"] / "0.3.2"
    annotations = published / "metadata" / "annotations.yaml"
    text = annotations.read_text()
    annotations.write_text(text.replace("channel.default.v1: v0.4", "channel.default.v1: v0.3"))
    (published / "manifests" / "ecr-secret_ecr.mobb.redhat.com_v1alpha1_secret.yaml").unlink()
    server = Server(directory)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def global_operator(
    control_plane: ControlPlane, olm_operator: OlmOperator, corpus_catalog: Server
) -> Iterator[dict[str, Any]]:
    """kubevirt-wol subscribed in `operators`, as OperatorHub's install manifest does it."""
    plane = control_plane
    group = plane.get_json("operatorgroup", GLOBAL_GROUP, "-n", OPERATORS)
    assert group["spec"] in ({}, None) or not group["spec"].get("targetNamespaces")
    catalog_source(plane, OPERATORS, "corpus", corpus_catalog.port)
    subscribe(plane, OPERATORS, GLOBAL, "corpus")
    try:
        wait_phase(plane, OPERATORS, GLOBAL["csv"], "Succeeded/InstallSucceeded", timeout=240)
        yield GLOBAL
    finally:
        uninstall(plane, OPERATORS, GLOBAL)
        plane.kubectl("delete", "catsrc", "corpus", "-n", OPERATORS, "--ignore-not-found")
        plane.kubectl("delete", "olmconfig", "cluster", "--ignore-not-found")


# ----- AllNamespaces -----------------------------------------------------------------------------


def test_the_csv_is_copied_into_every_namespace_and_into_new_ones_at_once(
    control_plane: ControlPlane, global_operator: dict[str, Any], namespace: str
) -> None:
    plane, operator = control_plane, global_operator

    # kubectl get csv -A: the operator shows, Succeeded, in every namespace.
    others = set(namespaces(plane)) - {OPERATORS}
    assert namespace in others
    # Wait for the state, not only the objects: a copy made while the original was still
    # Installing gets its Succeeded status a moment later.
    found = wait_for(
        lambda: (
            (c := copies(plane, operator, OPERATORS))
            and others <= set(c)
            and all(item["status"].get("phase") == "Succeeded" for item in c.values())
            and c
        ),
        timeout=STEP_TIMEOUT,
        what="a Succeeded copy in every namespace",
    )
    assert OPERATORS not in found, "no copy in the operator's own namespace"
    for copied in found.values():
        assert copied["status"]["phase"] == "Succeeded"
        assert copied["status"]["reason"] == "Copied"
        assert copied["status"]["message"] == (
            "The operator is running in operators but is managing this namespace"
        )
        assert copied["metadata"]["annotations"]["olm.operatorNamespace"] == OPERATORS
        assert copied["metadata"]["annotations"]["olm.operatorGroup"] == GLOBAL_GROUP
        assert "olm.targetNamespaces" not in copied["metadata"]["annotations"]
    original = plane.get_json("csv", operator["csv"], "-n", OPERATORS)
    assert found[namespace]["spec"] == original["spec"]
    # Copies are never acted upon: no finalizer, no Deployment, no OperatorCondition there.
    assert not found[namespace]["metadata"].get("finalizers")
    assert not plane.get_json("deployments", "-n", namespace)["items"]

    # kubectl create namespace: its copy is there within about two seconds.
    gateway = Gateway(api_client(str(plane.kubeconfig)))
    waits = []
    created = []
    try:
        for _ in range(3):
            name = f"t-late-{uuid.uuid4().hex[:6]}"
            start = time.monotonic()
            plane.kubectl("create", "namespace", name)
            created.append(name)
            while True:
                try:
                    gateway.get(
                        "operators.coreos.com/v1alpha1",
                        "ClusterServiceVersion",
                        name,
                        operator["csv"],
                    )
                    break
                except NotFound:
                    assert time.monotonic() - start < STEP_TIMEOUT, f"no copy in {name}"
                    time.sleep(0.02)
            waits.append(time.monotonic() - start)
        print(f"time until a new namespace has its copy: {[round(w, 2) for w in waits]} s")
        late = created[0]
        wait_for(
            lambda: (
                (copies(plane, operator, OPERATORS).get(late) or {}).get("status", {}).get("reason")
                == "Copied"
            ),
            timeout=STEP_TIMEOUT,
            what="the new copy's status",
        )

        # kubectl delete namespace: it goes (nothing holds it), and no copy comes back.
        plane.kubectl(
            "delete",
            "namespace",
            late,
            f"--timeout={STEP_TIMEOUT:.0f}s",
            timeout=STEP_TIMEOUT + 30,
        )
        time.sleep(2)
        assert late not in copies(plane, operator, OPERATORS)
        assert late not in namespaces(plane)
    finally:
        for name in created:
            plane.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")


def test_the_operator_and_each_namespace_s_users_get_rights_in_every_namespace(
    control_plane: ControlPlane, global_operator: dict[str, Any], namespace: str
) -> None:
    plane, operator = control_plane, global_operator
    operator_sa = service_account(operator, OPERATORS)

    # The CSV's namespaced permissions hold in any namespace (lifted to a ClusterRole).
    wait_for(
        lambda: can_i(plane, operator_sa, "create", "configmaps", namespace),
        timeout=STEP_TIMEOUT,
        what="the operator's permissions in a namespace it serves",
    )
    assert can_i(plane, operator_sa, "update", "leases.coordination.k8s.io", "default")
    assert can_i(plane, operator_sa, "list", "namespaces", "default")
    assert not can_i(plane, operator_sa, "create", "secrets", namespace), "and nothing more"
    owned = f"olm.owner={operator['csv']},olm.owner.namespace={OPERATORS}"
    lifted = [
        r
        for r in plane.get_json("clusterroles", "-l", owned)["items"]
        if {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]}
        in r["rules"]
    ]
    assert len(lifted) == 1, "the Role, lifted with OLM's extra namespaces rule"
    binding = plane.get_json("clusterrolebinding", lifted[0]["metadata"]["name"])
    assert binding["subjects"][0]["name"] == operator["sa"]

    # OLM's per-API ClusterRoles and the group's aggregation roles.
    for suffix in ROLE_SUFFIXES:
        role = plane.get_json(
            "clusterrole", f"{operator['crd']}-{operator['crd_version']}-{suffix}"
        )
        level = "view" if suffix == "crdview" else suffix
        assert role["metadata"]["labels"][f"rbac.authorization.k8s.io/aggregate-to-{level}"]
    group_roles = plane.get_json(
        "clusterroles", "-l", f"olm.owner={GLOBAL_GROUP},olm.owner.kind=OperatorGroup"
    )["items"]
    assert sorted(r["metadata"]["name"].rsplit("-", 1)[0] for r in group_roles) == [
        f"olm.og.{GLOBAL_GROUP}.admin",
        f"olm.og.{GLOBAL_GROUP}.edit",
        f"olm.og.{GLOBAL_GROUP}.view",
    ]
    assert all(r["aggregationRule"]["clusterRoleSelectors"] for r in group_roles)

    # A user bound to `edit` in this namespace can create the operator's CRs here, only here.
    plane.kubectl(
        "create", "rolebinding", "alice-edit", "--clusterrole=edit", "--user=alice", "-n", namespace
    )
    plane.kubectl(
        "create", "rolebinding", "bob-view", "--clusterrole=view", "--user=bob", "-n", namespace
    )
    wait_for(
        lambda: can_i(plane, "alice", "create", operator["crd"], namespace),
        timeout=STEP_TIMEOUT,
        what="edit users can create the operator's CRs",
    )
    assert not can_i(plane, "alice", "create", operator["crd"], "default")
    # Bob's binding came after Alice's, and `view` is aggregated on its own: waited for too.
    wait_for(
        lambda: can_i(plane, "bob", "list", operator["crd"], namespace),
        timeout=STEP_TIMEOUT,
        what="view users can list the operator's CRs",
    )
    assert not can_i(plane, "bob", "create", operator["crd"], namespace)


def test_three_global_operators_side_by_side_each_reach_every_namespace(
    control_plane: ControlPlane, global_operator: dict[str, Any], namespace: str
) -> None:
    plane = control_plane
    operators = [global_operator, *MORE]
    try:
        for operator in MORE:
            subscribe(plane, OPERATORS, operator, "corpus")
        for operator in MORE:
            wait_phase(plane, OPERATORS, operator["csv"], "Succeeded/InstallSucceeded", timeout=240)

        # kubectl get csv -A: each of the three, copied into every other namespace.
        others = set(namespaces(plane)) - {OPERATORS}
        for operator in operators:
            found = wait_for(
                lambda op=operator: others <= set(c := copies(plane, op, OPERATORS)) and c,
                timeout=STEP_TIMEOUT,
                what=f"a copy of {operator['csv']} in every namespace",
            )
            assert OPERATORS not in found
            assert {c["status"]["reason"] for c in found.values()} == {"Copied"}

        # A namespace created now gets the three copies within about two seconds; a deleted
        # one keeps none.
        gateway = Gateway(api_client(str(plane.kubeconfig)))
        late = f"t-late3-{uuid.uuid4().hex[:6]}"
        start = time.monotonic()
        plane.kubectl("create", "namespace", late)
        try:
            missing = {op["csv"] for op in operators}
            while missing:
                for name in sorted(missing):
                    try:
                        gateway.get(
                            "operators.coreos.com/v1alpha1", "ClusterServiceVersion", late, name
                        )
                        missing.discard(name)
                    except NotFound:
                        pass
                assert time.monotonic() - start < STEP_TIMEOUT, f"no copies {missing} in {late}"
                time.sleep(0.02)
            waited = time.monotonic() - start
            print(f"time until a new namespace has all three copies: {waited:.2f} s")
            plane.kubectl(
                "delete",
                "namespace",
                late,
                f"--timeout={STEP_TIMEOUT:.0f}s",
                timeout=STEP_TIMEOUT + 30,
            )
            time.sleep(2)
            for operator in operators:
                assert late not in copies(plane, operator, OPERATORS)
        finally:
            plane.kubectl("delete", "namespace", late, "--wait=false", "--ignore-not-found")

        # Each operator's namespaced permissions hold in any namespace; an `edit` user of a
        # namespace can create each operator's CRs there.
        plane.kubectl(
            "create",
            "rolebinding",
            "carol-edit",
            "--clusterrole=edit",
            "--user=carol",
            "-n",
            namespace,
        )
        for operator in MORE:
            verb, resource = operator["can"]
            assert wait_for(
                lambda op=operator, v=verb, r=resource: can_i(
                    plane, service_account(op, OPERATORS), v, r, namespace
                ),
                timeout=STEP_TIMEOUT,
                what=f"{operator['sa']} may {verb} {resource} in {namespace}",
            )
        for operator in operators:
            assert wait_for(
                lambda op=operator: can_i(plane, "carol", "create", op["crd"], namespace),
                timeout=STEP_TIMEOUT,
                what=f"edit users can create {operator['crd']}",
            )
            assert not can_i(plane, "carol", "create", operator["crd"], "default")
    finally:
        for operator in MORE:
            uninstall(plane, OPERATORS, operator)


def test_disabling_copied_csvs_removes_the_copies_and_enabling_brings_them_back(
    control_plane: ControlPlane, global_operator: dict[str, Any], namespace: str
) -> None:
    plane, operator = control_plane, global_operator
    wait_for(lambda: namespace in copies(plane, operator, OPERATORS), what="the copy here")

    def olm_config(disabled: bool) -> None:
        apply(
            plane,
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OLMConfig",
                "metadata": {"name": "cluster"},
                "spec": {"features": {"disableCopiedCSVs": disabled}},
            },
        )

    def condition() -> dict[str, Any]:
        status = plane.get_json("olmconfig", "cluster").get("status") or {}
        return next(
            (c for c in status.get("conditions") or [] if c["type"] == "DisabledCopiedCSVs"), {}
        )

    olm_config(True)
    try:
        wait_for(
            lambda: not copies(plane, operator, OPERATORS),
            timeout=STEP_TIMEOUT,
            what="no copy anywhere",
        )
        events = wait_for(
            lambda: [
                m
                for r, m in warning_events(plane, OPERATORS, operator["csv"])
                if r == "DisabledCopiedCSVs"
            ],
            what="the DisabledCopiedCSVs event on the original",
        )
        assert events == [f"CSV copying disabled for {OPERATORS}/{operator['csv']}"]
        found = wait_for(
            lambda: (
                (c := condition()).get("reason") == "CopiedCSVsDisabled"
                and c.get("status") == "True"
                and c
            ),
            what="the OLMConfig condition: disabled, and no copy left",
        )
        assert found["message"] == (
            "Copied CSVs are disabled and no unexpected copied CSVs were found for operators "
            "installed in AllNamespace mode"
        )
        while_disabled = create_namespace(plane, "t-quiet")
        time.sleep(3)
        assert while_disabled not in copies(plane, operator, OPERATORS)
        original = plane.get_json("csv", operator["csv"], "-n", OPERATORS)
        assert original["status"]["phase"] == "Succeeded", "the operator itself is untouched"
    finally:
        olm_config(False)
    try:
        others = set(namespaces(plane)) - {OPERATORS}
        wait_for(
            lambda: others <= set(copies(plane, operator, OPERATORS)),
            timeout=STEP_TIMEOUT,
            what="a copy in every namespace again",
        )
        wait_for(
            lambda: (
                not [
                    r
                    for r, _ in warning_events(plane, OPERATORS, operator["csv"])
                    if r == "DisabledCopiedCSVs"
                ]
            ),
            what="the DisabledCopiedCSVs event to go",
        )
        found = wait_for(
            lambda: (
                (c := condition()).get("reason") == "CopiedCSVsEnabled"
                and c.get("message") == "Copied CSVs are enabled and present across the cluster"
                and c
            ),
            what="the OLMConfig condition back to enabled",
        )
        assert found["status"] == "False"
    finally:
        plane.kubectl("delete", "namespace", while_disabled, "--wait=false")
        plane.kubectl("delete", "olmconfig", "cluster", "--ignore-not-found")


def test_uninstalling_removes_the_copies_and_the_lifted_rbac(
    control_plane: ControlPlane, global_operator: dict[str, Any]
) -> None:
    plane, operator = control_plane, global_operator
    wait_for(lambda: copies(plane, operator, OPERATORS), what="copies")
    owned = f"olm.owner={operator['csv']},olm.owner.namespace={OPERATORS}"
    assert plane.get_json("clusterrolebindings", "-l", owned)["items"]
    plane.kubectl(
        "delete", "subscription.operators.coreos.com", operator["package"], "-n", OPERATORS
    )
    plane.kubectl(
        "delete",
        "csv",
        operator["csv"],
        "-n",
        OPERATORS,
        f"--timeout={STEP_TIMEOUT:.0f}s",
        timeout=STEP_TIMEOUT + 30,
    )
    wait_for(
        lambda: not copies(plane, operator, OPERATORS), timeout=STEP_TIMEOUT, what="no copy left"
    )
    wait_for(
        lambda: (
            not plane.get_json("clusterrolebindings", "-l", owned)["items"]
            and not plane.get_json("clusterroles", "-l", owned)["items"]
        ),
        timeout=STEP_TIMEOUT,
        what="the lifted ClusterRoles and ClusterRoleBindings to go",
    )
    # The API server's authorizer learns of the deletion by its own watch: waited for.
    wait_for(
        lambda: (
            not can_i(
                plane, service_account(operator, OPERATORS), "create", "configmaps", "default"
            )
        ),
        what="the operator's rights gone",
    )


# ----- MultiNamespace ----------------------------------------------------------------------------


def test_a_multi_namespace_group_s_copies_and_rbac_follow_its_targets(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    corpus_catalog: Server,
    namespace: str,
) -> None:
    plane, operator = control_plane, MULTI
    t1, t2, t3, t4 = (create_namespace(plane, f"t-target{i}") for i in range(1, 5))
    operator_sa = service_account(operator, namespace)

    def group(targets: list[str]) -> None:
        apply(
            plane,
            {
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": "og"},
                "spec": {"targetNamespaces": targets},
            },
            namespace,
        )

    def follows(targets: set[str], gone: set[str]) -> bool:
        present = set(copies(plane, operator, namespace))
        return (
            present == targets
            and all(can_i(plane, operator_sa, "create", "configmaps", t) for t in targets)
            and not any(can_i(plane, operator_sa, "create", "configmaps", g) for g in gone)
        )

    try:
        catalog_source(plane, namespace, "corpus", corpus_catalog.port)
        group([t1, t2, t3])
        subscribe(plane, namespace, operator, "corpus")
        wait_phase(plane, namespace, operator["csv"], "Succeeded/InstallSucceeded", timeout=240)
        wait_for(
            lambda: follows({t1, t2, t3}, {t4, "default"}), timeout=STEP_TIMEOUT, what="3 targets"
        )
        uid = plane.get_json("operatorgroup", "og", "-n", namespace)["metadata"]["uid"]
        label = f"olm.operatorgroup.uid/{uid}"

        def labelled() -> set[str]:
            return {
                n["metadata"]["name"] for n in plane.get_json("namespaces", "-l", label)["items"]
            }

        # The namespaces' labels are another controller's work than copies and RBAC.
        wait_for(lambda: labelled() == {t1, t2, t3}, what="the group label on its 3 targets")
        roles = plane.get_json("roles", "-n", t1, "-l", f"olm.copiedFrom={namespace}")["items"]
        assert len(roles) == 1 and roles[0]["metadata"]["labels"]["olm.owner.namespace"] == t1
        copy_uid = copies(plane, operator, namespace)[t1]["metadata"]["uid"]
        assert [o["uid"] for o in roles[0]["metadata"]["ownerReferences"]] == [copy_uid]
        lifted = plane.kubectl(
            "get", "clusterrolebinding", roles[0]["metadata"]["name"], check=False
        )
        assert lifted.returncode != 0, "nothing lifted for a MultiNamespace group"

        # A fourth target, then the first one dropped.
        group([t1, t2, t3, t4])
        wait_for(
            lambda: follows({t1, t2, t3, t4}, {"default"}), timeout=STEP_TIMEOUT, what="4 targets"
        )
        group([t2, t3, t4])
        wait_for(
            lambda: follows({t2, t3, t4}, {t1, "default"}), timeout=STEP_TIMEOUT, what="t1 dropped"
        )
        wait_for(lambda: labelled() == {t2, t3, t4}, what="the group label to follow")
        # Copy, RoleBinding and Role in t1 are deleted one after the other: the last one waited.
        wait_for(
            lambda: (
                not plane.get_json("roles", "-n", t1, "-l", f"olm.copiedFrom={namespace}")["items"]
            ),
            what="the copied Role gone from t1",
        )
        # New targets change the CSV's olm.targetNamespaces, which its Deployment carries: the
        # operator rolls out again, and settles.
        wait_phase(plane, namespace, operator["csv"], "Succeeded/InstallSucceeded")
    finally:
        uninstall(plane, namespace, operator)
        for name in (t1, t2, t3, t4):
            plane.kubectl("delete", "namespace", name, "--wait=false", "--ignore-not-found")
