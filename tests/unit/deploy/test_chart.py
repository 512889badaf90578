"""The Helm chart charts/olm-py: lint clean, the CRDs olm-py ships, the rendering `olm install`
applies, and what each value changes (rendered by the real `helm template`)."""

from __future__ import annotations

import filecmp
import os
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

import olm
from olm.cli import build_parser
from olm.deploy.install import RENDERED, rendered_path
from olm.deploy.plan import IMAGE_PLACEHOLDER
from tests.support.paths import REPO

CHART = REPO / "charts" / "olm-py"
SHIPPED_CRDS = REPO / "manifests" / "crds"
# The chart has no default image (nothing publishes one): every rendering names one.
IMAGE = "registry.example.com/team/olm-py"


@pytest.fixture(scope="module")
def helm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from olm.devcluster.tools import ensure_helm

    binary = ensure_helm()
    home = tmp_path_factory.mktemp("helm-home")
    env = {
        **os.environ,
        "HELM_CACHE_HOME": str(home / "cache"),
        "HELM_CONFIG_HOME": str(home / "config"),
        "HELM_DATA_HOME": str(home / "data"),
    }

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(binary), *args], capture_output=True, text=True, env=env, timeout=120
        )
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
        return result

    yield run


def render(helm: Any, *sets: str) -> list[dict[str, Any]]:
    args = [arg for value in (f"image.repository={IMAGE}", *sets) for arg in ("--set", value)]
    text = helm("template", "olm-py", str(CHART), *args).stdout
    return [doc for doc in yaml.safe_load_all(text) if doc]


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(matches) == 1, f"{kind} {name}: {len(matches)} found"
    return matches[0]


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec = find(objects, "Deployment", "olm-py")["spec"]["template"]["spec"]
    found: dict[str, Any] = spec["containers"][0]
    return found


def test_the_chart_crds_are_the_crds_olm_py_ships() -> None:
    chart_crds = CHART / "crds"
    names = sorted(p.name for p in chart_crds.glob("*.yaml"))
    assert names == sorted(p.name for p in SHIPPED_CRDS.glob("*.yaml"))
    assert names, "the chart ships no CRDs"
    for name in names:
        assert filecmp.cmp(chart_crds / name, SHIPPED_CRDS / name, shallow=False), (
            f"charts/olm-py/crds/{name} differs from manifests/crds/{name}"
        )


def test_the_chart_installs_this_version_of_olm_py() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["appVersion"] == olm.__version__


def test_helm_lint_strict_is_clean(helm: Any) -> None:
    result = helm("lint", "--strict", str(CHART), "--set", f"image.repository={IMAGE}")
    assert "0 chart(s) failed" in result.stdout
    assert "[WARNING]" not in result.stdout and "[ERROR]" not in result.stdout


@pytest.mark.parametrize("unset", [(), ("image.repository=",)])
def test_without_an_image_repository_the_chart_says_what_to_set(
    helm: Any, unset: tuple[str, ...]
) -> None:
    args = [arg for value in unset for arg in ("--set", value)]
    result = helm("template", "olm-py", str(CHART), *args, check=False)
    assert result.returncode != 0
    assert "image.repository is not set" in result.stderr
    assert "--set image.repository=<registry>/olm-py" in result.stderr
    assert "make release REGISTRY=" in result.stderr
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["image"]["repository"] == "", "no default image that nothing publishes"


def test_the_committed_rendering_is_helm_template_of_the_defaults(helm: Any) -> None:
    rendered = helm(
        "template", "olm-py", str(CHART), "--set", f"image.repository={IMAGE_PLACEHOLDER}"
    ).stdout
    assert rendered_path().read_text(encoding="utf-8") == rendered, (
        f"olm/deploy/{RENDERED} is stale: regenerate it with `helm template olm-py charts/olm-py "
        f"--set image.repository={IMAGE_PLACEHOLDER} > olm/deploy/{RENDERED}`"
    )


def test_the_default_objects(helm: Any) -> None:
    objects = render(helm)
    kinds = sorted(
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects
    )
    assert kinds == sorted(
        [
            ("Namespace", "", "olm"),
            ("Namespace", "", "operators"),
            ("OperatorGroup", "operators", "global-operators"),
            ("OLMConfig", "", "cluster"),
            ("ServiceAccount", "olm", "olm-py"),
            ("ClusterRole", "", "olm-py"),
            ("ClusterRoleBinding", "", "olm-py"),
            ("Role", "olm", "olm-py-leader-election"),
            ("RoleBinding", "olm", "olm-py-leader-election"),
            ("Service", "olm", "olm-py-metrics"),
            ("Deployment", "olm", "olm-py"),
            # the PackageManifest API (docs/packagemanifests.md)
            ("Service", "olm", "packageserver-service"),
            ("ClusterRoleBinding", "", "olm-py-auth-delegator"),
            ("ClusterRole", "", "olm-py-packagemanifests-view"),
        ]
    )
    # Users' objects live in and under these: `helm uninstall` keeps them.
    for kind, name in [
        ("Namespace", "olm"),
        ("Namespace", "operators"),
        ("OperatorGroup", "global-operators"),
        ("OLMConfig", "cluster"),
    ]:
        annotations = find(objects, kind, name)["metadata"]["annotations"]
        assert annotations["helm.sh/resource-policy"] == "keep"


def test_the_deployment_is_two_leader_elected_restricted_replicas(helm: Any) -> None:
    objects = render(helm)
    deployment = find(objects, "Deployment", "olm-py")
    pod = deployment["spec"]["template"]["spec"]
    main = container(objects)
    assert deployment["spec"]["replicas"] == 2
    assert pod["serviceAccountName"] == "olm-py"
    assert main["image"] == f"{IMAGE}:{olm.__version__}"
    assert main["command"] == ["olm"] and main["args"][:2] == ["run", "--leader-elect"]
    env = {
        e["name"]: e["valueFrom"]["fieldRef"]["fieldPath"] for e in main["env"] if "valueFrom" in e
    }
    assert env == {
        "POD_NAME": "metadata.name",
        "POD_NAMESPACE": "metadata.namespace",
        "OLM_SERVICE_ACCOUNT": "spec.serviceAccountName",  # its imagePullSecrets pull images
    }
    assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    ports = {p["name"]: p["containerPort"] for p in main["ports"]}
    assert ports == {"health": 8081, "metrics": 8080, "packageserver": 5443}
    assert main["resources"]["requests"] and main["resources"]["limits"]
    service = find(objects, "Service", "olm-py-metrics")
    assert service["spec"]["ports"] == [
        {"name": "metrics", "port": 8080, "targetPort": "metrics", "protocol": "TCP"}
    ]
    assert service["spec"]["selector"].items() <= pod_labels(deployment).items()


# ----- hardening (issue 25, docs/security-hardening.md) --------------------------------------

# Pod Security Standards "restricted" (v1.34): what a pod must say, field by field. The API
# server's PodSecurity admission checks it for real in tests/e2e/test_chart.py.
RESTRICTED_VOLUME_TYPES = {
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
}


def effective(pod: dict[str, Any], main: dict[str, Any], field: str) -> Any:
    """A securityContext field as the kubelet applies it: the container's, else the pod's."""
    container_value = (main.get("securityContext") or {}).get(field)
    if container_value is not None:
        return container_value
    return (pod.get("securityContext") or {}).get(field)


@pytest.mark.parametrize("sets", [(), ("packageServer.enabled=false",)])
def test_the_pod_meets_pod_security_restricted(helm: Any, sets: tuple[str, ...]) -> None:
    objects = render(helm, *sets)
    pod = find(objects, "Deployment", "olm-py")["spec"]["template"]["spec"]
    containers = [*pod["containers"], *(pod.get("initContainers") or [])]
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    for volume in pod.get("volumes") or []:
        kinds = set(volume) - {"name"}
        assert kinds <= RESTRICTED_VOLUME_TYPES, volume
    for main in containers:
        context = main["securityContext"]
        assert effective(pod, main, "runAsNonRoot") is True
        assert effective(pod, main, "runAsUser") not in (None, 0), "an explicit non-root uid"
        assert effective(pod, main, "seccompProfile") == {"type": "RuntimeDefault"}
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"] == {"drop": ["ALL"]}  # and nothing added
        assert not context.get("privileged")
        assert context["readOnlyRootFilesystem"] is True
        assert not any(p.get("hostPort") for p in main.get("ports") or [])


def test_with_a_read_only_root_olm_py_writes_only_to_its_volumes(helm: Any) -> None:
    """Everything olm-py writes (temporary files, the image blob cache under
    $XDG_CACHE_HOME/olm-py/images, else $HOME/.cache, "/" for the image's user) is on a
    writable emptyDir. tests/integration/test_image.py runs the image so, for real."""
    objects = render(helm)
    pod = find(objects, "Deployment", "olm-py")["spec"]["template"]["spec"]
    main = container(objects)
    empty_dirs = {v["name"] for v in pod["volumes"] if "emptyDir" in v}
    writable = [m["mountPath"] for m in main["volumeMounts"] if m["name"] in empty_dirs]
    assert all(not m.get("readOnly") for m in main["volumeMounts"] if m["name"] in empty_dirs)
    env = {e["name"]: e["value"] for e in main["env"] if "value" in e}
    for path in ("/tmp", env.get("XDG_CACHE_HOME", "/.cache")):
        assert any(path == w or path.startswith(w.rstrip("/") + "/") for w in writable), path


def test_the_olm_namespace_enforces_pod_security_restricted(helm: Any) -> None:
    labels = find(render(helm), "Namespace", "olm")["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == "restricted"


def rules_of(objects: list[dict[str, Any]], kind: str, name: str) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = find(objects, kind, name)["rules"]
    return rules


def test_the_cluster_role_grants_only_the_verbs_olm_py_sends(helm: Any) -> None:
    """olm-py sends no PUT but to its Lease (and, for owner references' finalizers, to OLM's
    own API), no deletecollection, no events.k8s.io; kinds it does not watch get no `watch`."""
    rules = rules_of(render(helm), "ClusterRole", "olm-py")
    for rule in rules:
        assert "deletecollection" not in rule["verbs"], rule
        if "update" in rule["verbs"]:
            assert rule["apiGroups"] == ["operators.coreos.com"], rule
    assert not [r for r in rules if "events.k8s.io" in r["apiGroups"]]
    granted = {
        (group, resource, verb)
        for r in rules
        for group in r["apiGroups"]
        for resource in r["resources"]
        for verb in r["verbs"]
    }
    from olm.controllers.watch import WATCHED

    for watched in WATCHED:  # every kind kopf watches: list + watch
        for verb in ("list", "watch"):
            assert (watched.group, watched.plural, verb) in granted or (
                ("operators.coreos.com", "*", verb) in granted
                and watched.group == "operators.coreos.com"
            ), (watched.plural, verb)
    watched_plurals = {w.plural for w in WATCHED}
    for group, resource, verb in granted:
        if verb == "watch" and group != "operators.coreos.com":
            assert resource in watched_plurals, f"watch on {resource}, which olm-py never watches"
    events = [r for r in rules if r["resources"] == ["events"]]
    assert len(events) == 1 and sorted(events[0]["verbs"]) == ["create", "delete", "list"]


# Where each kind OLM installs from bundles beyond its own cases lives (olm.installplan.policy).
OPTIONAL_KIND_RESOURCES = {
    "PrometheusRule": ("monitoring.coreos.com", "prometheusrules"),
    "ServiceMonitor": ("monitoring.coreos.com", "servicemonitors"),
    "PodDisruptionBudget": ("policy", "poddisruptionbudgets"),
    "PriorityClass": ("scheduling.k8s.io", "priorityclasses"),
    "VerticalPodAutoscaler": ("autoscaling.k8s.io", "verticalpodautoscalers"),
    "NetworkPolicy": ("networking.k8s.io", "networkpolicies"),
    "ConsoleYAMLSample": ("console.openshift.io", "consoleyamlsamples"),
    "ConsoleQuickStart": ("console.openshift.io", "consolequickstarts"),
    "ConsoleCLIDownload": ("console.openshift.io", "consoleclidownloads"),
    "ConsoleLink": ("console.openshift.io", "consolelinks"),
    "ConsolePlugin": ("console.openshift.io", "consoleplugins"),
}


def test_every_optional_kind_olm_installs_can_be_applied(helm: Any) -> None:
    """A bundle with any kind on OLM's list installs with the chart's rights, not Forbidden."""
    from olm.installplan.policy import OLM_OPTIONAL_KINDS

    assert set(OPTIONAL_KIND_RESOURCES) == OLM_OPTIONAL_KINDS
    granted = {
        (group, resource, verb)
        for r in rules_of(render(helm), "ClusterRole", "olm-py")
        for group in r["apiGroups"]
        for resource in r.get("resources", [])
        for verb in r["verbs"]
    }
    for kind, (group, resource) in OPTIONAL_KIND_RESOURCES.items():
        for verb in ("create", "patch"):
            assert (group, resource, verb) in granted, (kind, verb)


def test_the_lease_role_is_the_one_lease(helm: Any) -> None:
    from olm.app import LEASE_NAME

    rules = rules_of(render(helm), "Role", "olm-py-leader-election")
    by_name = [r for r in rules if r.get("resourceNames")]
    assert by_name == [
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [LEASE_NAME],
            "verbs": ["get", "update"],
        }
    ]
    unnamed = [r for r in rules if not r.get("resourceNames")]
    assert [r["verbs"] for r in unnamed] == [["create"]], "create cannot be limited to a name"


def pod_labels(deployment: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels


def test_the_container_args_are_flags_olm_run_accepts(helm: Any) -> None:
    for sets in [
        (),
        ("samplesCatalog=false", "logFormat=json", "logLevel=debug"),
        ("trustedCatalogs={*=image,olm}",),
        ("registryPods=true",),
    ]:
        main = container(render(helm, *sets))
        args = build_parser().parse_args(main["args"])
        assert args.command == "run"


@pytest.mark.parametrize(
    ("sets", "expect"),
    [
        (
            (),
            {"--log-format=text", "--log-level=info", "--health-port=8081", "--metrics-port=8080"},
        ),
        (("logFormat=json",), {"--log-format=json"}),
        (("logLevel=debug",), {"--log-level=debug"}),
        (("samplesCatalog=false",), {"--no-samples"}),
        (("healthPort=9440", "metricsPort=9090"), {"--health-port=9440", "--metrics-port=9090"}),
        (
            ("trustedCatalogs={olm=image+address,team-a}",),
            {"--trusted-catalogs=olm=image+address", "--trusted-catalogs=team-a"},
        ),
    ],
)
def test_values_become_olm_run_flags(helm: Any, sets: tuple[str, ...], expect: set[str]) -> None:
    args = set(container(render(helm, *sets))["args"])
    assert expect <= args
    assert ("--no-samples" in args) == ("samplesCatalog=false" in sets)
    trusting = any(s.startswith("trustedCatalogs=") for s in sets)
    assert any(a.startswith("--trusted-catalogs") for a in args) == trusting, "off by default"
    assert not any(a.startswith("--registry-image") for a in args), "off by default"


def test_registry_pods_run_the_charts_own_image(helm: Any) -> None:
    main = container(render(helm, "registryPods=true"))
    assert f"--registry-image={main['image']}" in main["args"]


@pytest.mark.parametrize(("copied", "disabled"), [("true", False), ("false", True)])
def test_copied_csvs_is_the_olmconfig_feature(helm: Any, copied: str, disabled: bool) -> None:
    config = find(render(helm, f"copiedCSVs={copied}"), "OLMConfig", "cluster")
    assert config["spec"]["features"]["disableCopiedCSVs"] is disabled


def test_image_values(helm: Any) -> None:
    main = container(
        render(helm, "image.repository=localhost/olm-py", "image.tag=dev", "image.pullPolicy=Never")
    )
    assert (main["image"], main["imagePullPolicy"]) == ("localhost/olm-py:dev", "Never")


@pytest.mark.parametrize(
    "bad",
    [
        "logFormat=xml",
        "logLevel=LOUD",
        "replicas=-1",
        "nosuch=1",
        "trustedCatalogs={team_a}",
        "trustedCatalogs={olm=grpc}",
    ],
)
def test_bad_values_are_refused_by_the_schema(helm: Any, bad: str) -> None:
    result = helm(
        "template",
        "olm-py",
        str(CHART),
        "--set",
        f"image.repository={IMAGE}",
        "--set",
        bad,
        check=False,
    )
    assert result.returncode != 0
    assert "values don't meet the specifications of the schema" in result.stderr


def test_the_cluster_role_is_narrow_and_explained(helm: Any) -> None:
    rules = find(render(helm), "ClusterRole", "olm-py")["rules"]
    for rule in rules:
        if "*" in rule.get("resources", []) or "*" in rule.get("apiGroups", []):
            # OLM's own API; anything else only read (the CRD upgrade safety check).
            assert rule["apiGroups"] == ["operators.coreos.com"] or rule["verbs"] == [
                "get",
                "list",
            ], rule
        assert "*" not in rule["verbs"], rule
    crds = [r for r in rules if "customresourcedefinitions" in r["resources"]]
    assert crds and all("delete" not in r["verbs"] for r in crds), "olm-py never deletes CRDs"
    escalation = {v for r in rules if "clusterroles" in r["resources"] for v in r["verbs"]}
    assert {"escalate", "bind"} <= escalation
    # Every rule says why it is there (a comment line right above it in the template).
    lines = (CHART / "templates" / "rbac.yaml").read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("  - apiGroups:")]
    for i in starts:
        above = lines[i - 1].strip()
        assert above.startswith("#"), f"rbac.yaml line {i + 1}: no comment explains this rule"
    readme = (CHART / "README.md").read_text()
    assert "escalate" in readme and "bind" in readme


def test_every_replica_serves_the_packagemanifest_api_unless_turned_off(helm: Any) -> None:
    objects = render(helm)
    container = find(objects, "Deployment", "olm-py")["spec"]["template"]["spec"]["containers"][0]
    assert "--package-server-port=5443" in container["args"]
    assert {"name": "packageserver", "containerPort": 5443, "protocol": "TCP"} in container["ports"]
    service = find(objects, "Service", "packageserver-service")
    assert service["spec"]["ports"][0]["targetPort"] == "packageserver"
    off = helm(
        "template",
        "olm-py",
        str(CHART),
        "--set",
        f"image.repository={IMAGE}",
        "--set",
        "packageServer.enabled=false",
    ).stdout
    assert "--no-package-server" in off and "packageserver-service" not in off


def test_the_console_value_adds_a_container_and_a_service(helm: Any) -> None:
    assert not [o for o in render(helm) if o["metadata"]["name"] == "olm-py-console"]
    objects = render(helm, "console.enabled=true", "console.readOnly=true", "console.port=9443")
    pod = find(objects, "Deployment", "olm-py")["spec"]["template"]["spec"]
    (console,) = [c for c in pod["containers"] if c["name"] == "console"]
    args = build_parser().parse_args(console["args"])
    assert (args.command, args.port, args.read_only, args.bind_address) == (
        "console",
        9443,
        True,
        "0.0.0.0",
    )
    assert console["securityContext"]["readOnlyRootFilesystem"] is True
    service = find(objects, "Service", "olm-py-console")["spec"]
    assert service["sessionAffinity"] == "ClientIP"
    assert service["ports"] == [
        {"name": "http", "port": 9443, "targetPort": "console", "protocol": "TCP"}
    ]
    helm(
        "lint",
        "--strict",
        str(CHART),
        "--set",
        f"image.repository={IMAGE}",
        "--set",
        "console.enabled=true",
    )
