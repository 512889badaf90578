"""olm-py driven by the `kubectl operator` plugin (kubectl-operator v0.6.0), as OLM users run
it, against olm-py's CatalogSources, PackageManifests, Subscriptions, InstallPlans and CSVs
(docs/kubectl-operator.md: what each command reads and writes)."""

from __future__ import annotations

import json

from olm.devcluster import registry
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, wait_for
from tests.support.olm_run import KubectlOperator, OlmOperator
from tests.support.stories import wait_phase
from tests.support.subscriptions import NEW, OLD, plan_for, subscription


def rows(output: str) -> list[list[str]]:
    """The table `kubectl operator` prints, split into words (AGE varies: callers skip it)."""
    return [line.split() for line in output.strip().splitlines()]


def uninstall_everything(kubectl_operator: KubectlOperator, namespace: str) -> str:
    """`kubectl operator uninstall memcached-operator --delete-all`; what it said."""
    removed = kubectl_operator(
        "uninstall",
        "memcached-operator",
        "-n",
        namespace,
        "--delete-all",
        f"--timeout={int(STEP_TIMEOUT)}s",
        timeout=STEP_TIMEOUT + 30,
    )
    return str(removed.stdout + removed.stderr)


def test_kubectl_finds_the_plugin_and_it_lists_the_catalogs(
    control_plane: ControlPlane, olm_operator: OlmOperator, kubectl_operator: KubectlOperator
) -> None:
    assert 'GitVersion:"v0.6.0"' in kubectl_operator("version").stdout
    wait_for(
        lambda: any(
            row[:2] == ["samples", "olm"]
            for row in rows(kubectl_operator("catalog", "list", "-A").stdout)
        ),
        what="the samples catalog in `kubectl operator catalog list -A`",
    )
    table = rows(kubectl_operator("catalog", "list", "-A").stdout)
    assert table[0] == ["NAME", "NAMESPACE", "DISPLAY", "TYPE", "PUBLISHER", "AGE"]
    samples = next(row for row in table if row[:2] == ["samples", "olm"])
    assert samples[2:-1] == ["olm-py", "samples", "grpc", "olm-py"]


def test_catalog_remove_deletes_the_catalog_source_and_waits_for_it(
    control_plane: ControlPlane, kubectl_operator: KubectlOperator, namespace: str
) -> None:
    body = {
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "CatalogSource",
        "metadata": {"name": "extra"},
        "spec": {"sourceType": "grpc", "address": "127.0.0.1:1", "publisher": "me"},
    }
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(body))
    table = rows(kubectl_operator("catalog", "list", "-n", namespace).stdout)
    assert table[1][:3] == ["extra", "grpc", "me"]
    removed = kubectl_operator("catalog", "remove", "extra", "-n", namespace)
    assert 'catalogsource "extra" removed' in removed.stdout + removed.stderr
    gone = control_plane.kubectl("get", "catsrc", "extra", "-n", namespace, check=False)
    assert "NotFound" in gone.stderr


def test_browse_install_and_upgrade_with_the_plugin(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    kubectl_operator: KubectlOperator,
    namespace: str,
    pod_network: None,
) -> None:
    """`list-available` and `describe` read olm-py's PackageManifests; `install` takes the
    channel, install modes and version from them, creates the OperatorGroup and a Manual
    Subscription and approves the first plan; `upgrade` approves the next one."""
    plane = control_plane
    available = wait_for(
        lambda: [
            row
            for row in rows(kubectl_operator("list-available", "-n", namespace, check=False).stdout)
            if row[:1] == ["memcached-operator"]
        ],
        timeout=STEP_TIMEOUT,
        what="memcached-operator in `kubectl operator list-available`",
    )
    assert ["memcached-operator", "olm-py", "samples", "alpha", NEW] in [
        row[:5] for row in available
    ]
    described = kubectl_operator("describe", "memcached-operator", "-n", namespace).stdout
    assert "alpha (default)" in described and "OwnNamespace" in described

    installed = kubectl_operator(
        "install", "memcached-operator", "-n", namespace, "-C", "-c", "alpha", "-v", "0.0.1"
    )
    assert f'installed csv is "{OLD}"' in installed.stdout + installed.stderr
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")
    sub = subscription(plane, namespace, "memcached-operator")
    assert (sub["spec"]["installPlanApproval"], sub["spec"]["startingCSV"]) == ("Manual", OLD)
    assert plane.get_json("operatorgroup", namespace, "-n", namespace)["spec"][
        "targetNamespaces"
    ] == [namespace]

    plan_for(plane, namespace, NEW)
    wait_for(
        lambda: (
            (subscription(plane, namespace, "memcached-operator").get("status") or {}).get("state")
            == "UpgradePending"
        ),
        timeout=STEP_TIMEOUT,
        what="the Subscription UpgradePending",
    )
    # `list` lists every namespace's Subscriptions whatever -n says (v0.6.0): find ours.
    listed = rows(kubectl_operator("list", "-A").stdout)
    assert listed[0][:3] == ["PACKAGE", "NAMESPACE", "SUBSCRIPTION"]
    ours = [row for row in listed[1:] if row[1] == namespace]
    assert [row[:-1] for row in ours] == [
        ["memcached-operator", namespace, "memcached-operator", OLD, NEW, "UpgradePending"]
    ]

    upgraded = kubectl_operator("upgrade", "memcached-operator", "-n", namespace)
    assert f'installed csv is "{NEW}"' in upgraded.stdout + upgraded.stderr
    wait_phase(plane, namespace, NEW, "Succeeded/InstallSucceeded")
    again = kubectl_operator("upgrade", "memcached-operator", "-n", namespace, check=False)
    assert again.returncode != 0
    assert "operator is already at latest version" in again.stdout + again.stderr

    # Operands, then uninstall with everything: the plugin follows the Operator object olm-py
    # keeps (operators.coreos.com/v1 `memcached-operator.<namespace>`, status.components).
    instance = {
        "apiVersion": "cache.example.com/v1alpha1",
        "kind": "Memcached",
        "metadata": {"name": "demo"},
        "spec": {"size": 1},
    }
    plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=json.dumps(instance))
    operands = wait_for(
        lambda: [
            row
            for row in rows(
                kubectl_operator(
                    "list-operands", "memcached-operator", "-n", namespace, check=False
                ).stdout
            )
            if "demo" in row
        ],
        timeout=STEP_TIMEOUT,
        what="the Memcached in `kubectl operator list-operands`",
    )
    assert operands[0][:2] == ["cache.example.com/v1alpha1", "Memcached"]
    operator = f"memcached-operator.{namespace}"
    refs = plane.get_json("operator.operators.coreos.com", operator)["status"]["components"]["refs"]
    assert {"ClusterServiceVersion", "Subscription", "CustomResourceDefinition"} <= {
        ref["kind"] for ref in refs
    }

    said = uninstall_everything(kubectl_operator, namespace)
    for deleted in (
        'subscription "memcached-operator"',
        'memcached "demo"',
        f'clusterserviceversion "{NEW}"',
        'customresourcedefinition "memcacheds.cache.example.com"',
        f'operator "{operator}"',
    ):
        assert f"{deleted} deleted" in said, said
    for args in (
        ("subscription.operators.coreos.com", "memcached-operator", "-n", namespace),
        ("csv", NEW, "-n", namespace),
        ("memcached", "demo", "-n", namespace),
        ("crd", "memcacheds.cache.example.com"),
        ("operator.operators.coreos.com", operator),
        ("operatorgroup", namespace, "-n", namespace),
    ):
        gone = plane.kubectl("get", *args, check=False)
        # With the CRD gone, kubectl no longer knows the kind at all.
        assert gone.returncode != 0 and (
            "NotFound" in gone.stderr or "doesn't have a resource type" in gone.stderr
        ), f"{args} is still there"


def test_catalog_add_then_install_from_that_catalog_and_remove_it(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    kubectl_operator: KubectlOperator,
    namespace: str,
    pod_network: None,
) -> None:
    """`catalog add` pulls the catalog image itself over HTTPS (the local cluster's TLS registry,
    its CA given as SSL_CERT_FILE) for its display-name and publisher labels, creates a grpc
    CatalogSource of that image and waits for READY, which olm-py reaches by pulling the same
    image. The namespace's own catalog is then the one its PackageManifests come from, so
    `install` subscribes to it; the memcached bundles come by image from the registry."""
    plane = control_plane
    env = plane.cluster.env()
    assert registry.REGISTRY_TLS_ENV in env, "olm dev up started no TLS registry (olm dev status)"
    image = f"{env[registry.REGISTRY_TLS_ENV]}/{registry.SAMPLES_CATALOG_REPOSITORY}:latest"
    trust = {"SSL_CERT_FILE": env[registry.REGISTRY_CA_ENV]}

    untrusted = kubectl_operator("catalog", "add", "imgcat", image, "-n", namespace, check=False)
    assert untrusted.returncode != 0
    print(untrusted.stdout + untrusted.stderr)
    assert "certificate" in untrusted.stdout + untrusted.stderr
    assert (
        "NotFound" in plane.kubectl("get", "catsrc", "imgcat", "-n", namespace, check=False).stderr
    )

    added = kubectl_operator(
        "catalog",
        "add",
        "imgcat",
        image,
        "-n",
        namespace,
        f"--timeout={int(STEP_TIMEOUT)}s",
        env=trust,
        timeout=STEP_TIMEOUT + 30,
    )
    assert 'created catalogsource "imgcat"' in added.stdout + added.stderr
    source = plane.get_json("catsrc", "imgcat", "-n", namespace)
    spec = source["spec"]
    assert (spec["sourceType"], spec["image"]) == ("grpc", image)
    # Display name and publisher: the defaults the plugin read from the image's labels.
    assert (spec["displayName"], spec["publisher"]) == (
        registry.SAMPLES_DISPLAY_NAME,
        registry.SAMPLES_PUBLISHER,
    )
    assert source["status"]["connectionState"]["lastObservedState"] == "READY"
    listed = rows(kubectl_operator("catalog", "list", "-n", namespace).stdout)
    assert listed[1][:-1] == ["imgcat", "olm-py", "samples", "grpc", "olm-py"]

    available = wait_for(
        lambda: [
            row
            for row in rows(
                kubectl_operator(
                    "list-available", "-n", namespace, "-c", "imgcat", check=False
                ).stdout
            )
            if row[:1] == ["memcached-operator"]
        ],
        timeout=STEP_TIMEOUT,
        what="memcached-operator from imgcat in `kubectl operator list-available -c imgcat`",
    )
    assert ["memcached-operator", "olm-py", "samples", "alpha", NEW] in [
        row[:5] for row in available
    ]

    installed = kubectl_operator(
        "install",
        "memcached-operator",
        "-n",
        namespace,
        "-C",
        "-c",
        "alpha",
        "-v",
        "0.0.1",
        f"--timeout={int(STEP_TIMEOUT)}s",
        timeout=STEP_TIMEOUT + 30,
    )
    assert f'installed csv is "{OLD}"' in installed.stdout + installed.stderr
    sub = subscription(plane, namespace, "memcached-operator")
    assert (sub["spec"]["source"], sub["spec"]["sourceNamespace"]) == ("imgcat", namespace)
    wait_phase(plane, namespace, OLD, "Succeeded/InstallSucceeded")

    uninstall_everything(kubectl_operator, namespace)
    removed = kubectl_operator("catalog", "remove", "imgcat", "-n", namespace)
    assert 'catalogsource "imgcat" removed' in removed.stdout + removed.stderr
    assert (
        "NotFound" in plane.kubectl("get", "catsrc", "imgcat", "-n", namespace, check=False).stderr
    )
