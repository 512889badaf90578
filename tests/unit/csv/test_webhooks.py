"""Webhooks as OLM v0 installs them, on plain data: certificates (issued, reused, rotated), the
Service, Secret, RBAC and webhook configurations, the Deployment's mounts, CRD conversion, the
CSV phases around them, and every webhook CSV of the corpus rendered without a crash."""

from __future__ import annotations

import base64
import copy
import datetime
from typing import Any

import pytest
import yaml
from cryptography import x509

from olm.api.labels import SECRET_OLM_CA, SECRET_TLS_CERT, SECRET_TLS_KEY, Annotation, Label
from olm.csv.definitions import definition_problem
from olm.csv.phase import Plan, World, decide
from olm.csv.requirements import RequirementInputs
from olm.install.certresources import WebhookWorld, current_materials, mount_certificates
from olm.install.certs import CertSettings, issue, read, reusable, service_hosts
from olm.install.conversion import conversion_cleanup, conversion_patches
from olm.install.render import plan_install
from olm.install.strategy import parse_strategy
from olm.install.webhooks import WebhookProblem, config_name, namespace_selector, stale_configs
from tests.support.paths import SHARED
from tests.unit.csv.world import GROUP, NO_RBAC, NOW, NS, csv, healthy, validating

CORPUS = SHARED / "corpus" / "community-operators"
SHORT = CertSettings(datetime.timedelta(hours=2), datetime.timedelta(minutes=30))
UID_GROUP = {**GROUP, "metadata": {**GROUP["metadata"], "uid": "og-uid"}}
GLOBAL_GROUP = {**UID_GROUP, "spec": {}, "status": {"namespaces": [""]}}
CRD = "things.example.com"
ALL_ONLY = [
    {"type": "OwnNamespace", "supported": False},
    {"type": "AllNamespaces", "supported": True},
]


def conversion() -> dict[str, Any]:
    return {
        "generateName": "cthing.example.com",
        "type": "ConversionWebhook",
        "deploymentName": "op",
        "containerPort": 443,
        "targetPort": 9443,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "webhookPath": "/convert",
        "conversionCRDs": [CRD],
    }


def webhook_csv(*descs: dict[str, Any], phase: str = "", reason: str = "") -> dict[str, Any]:
    return csv(phase=phase, reason=reason, webhookdefinitions=list(descs))


def global_conversion_csv(phase: str = "", reason: str = "") -> dict[str, Any]:
    """An AllNamespaces-only CSV owning CRD, with a conversion webhook, in a global group."""
    subject = webhook_csv(conversion(), phase=phase, reason=reason)
    subject["metadata"]["annotations"]["olm.targetNamespaces"] = ""
    subject["spec"]["installModes"] = ALL_ONLY
    subject["spec"]["customresourcedefinitions"] = {
        "owned": [{"name": CRD, "version": "v1", "kind": "Thing"}]
    }
    return subject


def crd(conversion: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"group": "example.com", "names": {"plural": "things"}}
    if conversion is not None:
        spec["conversion"] = conversion
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD, "uid": "crd-uid"},
        "spec": spec,
    }


def hook_world(
    subject: dict[str, Any],
    *,
    secrets: dict[str, dict[str, Any] | None] | None = None,
    configs: list[dict[str, Any]] | None = None,
    deployments: dict[str, dict[str, Any]] | None = None,
    crds: dict[str, Any] | None = None,
    now: datetime.datetime = NOW,
    settings: CertSettings = SHORT,
    group: dict[str, Any] | None = None,
) -> World:
    everywhere = (subject["metadata"].get("annotations") or {}).get("olm.targetNamespaces") == ""
    return World(
        csv=subject,
        operator_groups=[group or (GLOBAL_GROUP if everywhere else UID_GROUP)],
        group_targets=[""] if everywhere else [NS],
        csvs={subject["metadata"]["name"]: subject},
        requirements=RequirementInputs(crds or {}, {}, NO_RBAC, "v1.34.12", frozenset()),
        deployments=deployments or {},
        replaced_condition=None,
        now=now,
        webhooks=WebhookWorld(secrets or {}, configs or [], settings),
    )


def moved(plan: Plan) -> str:
    assert plan.status is not None, "expected a transition"
    return f"{plan.status['phase']}/{plan.status['reason']}"


def by_kind(objects: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for obj in objects:
        found.setdefault(obj["kind"], []).append(obj)
    return found


def installed(subject: dict[str, Any], now: datetime.datetime = NOW) -> tuple[Plan, World]:
    """InstallReady -> Installing: the plan, and the world as it is after executing it."""
    ready = copy.deepcopy(subject)
    ready["status"] = {"phase": "InstallReady", "reason": "AllRequirementsMet"}
    plan = decide(hook_world(ready, crds={CRD: crd()}, now=now))
    assert moved(plan) == "Installing/InstallSucceeded"
    secrets = {o["metadata"]["name"]: o for o in plan.resources if o["kind"] == "Secret"}
    configs = [o for o in plan.resources if o["kind"].endswith("WebhookConfiguration")]
    after = copy.deepcopy(subject)
    after["status"] = plan.status
    world = hook_world(
        after,
        secrets=secrets,
        configs=configs,
        deployments={d["metadata"]["name"]: healthy(d) for d in plan.apply},
        crds={CRD: crd()},
        now=now,
    )
    return plan, world


# ----- certificates ---------------------------------------------------------------------------


def test_a_serving_certificate_is_signed_by_its_ca_and_names_the_service() -> None:
    hosts = service_hosts("op-service", NS)
    material = issue(hosts, NOW, CertSettings())
    ca = x509.load_pem_x509_certificate(material.ca_pem)
    cert = x509.load_pem_x509_certificate(material.cert_pem)
    cert.verify_directly_issued_by(ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["op-service.ns1", "op-service.ns1.svc"]
    assert cert.not_valid_after_utc - NOW == datetime.timedelta(days=730)  # OLM: two years
    assert material.rotate_at == material.not_after - datetime.timedelta(days=1)
    assert b"EC PRIVATE KEY" in material.key_pem


@pytest.mark.parametrize(
    ("change", "reusable_after"),
    [
        ("nothing", True),
        ("inside the rotation window", False),
        ("another service's hosts", False),
        ("a key of another pair", False),
        ("a CA that did not sign it", False),
    ],
)
def test_material_is_reused_only_while_valid_and_outside_the_window(
    change: str, reusable_after: bool
) -> None:
    hosts = service_hosts("op-service", NS)
    material = issue(hosts, NOW, SHORT)
    other = issue(service_hosts("other-service", NS), NOW, SHORT)
    ca, cert, key, want_hosts, now = (
        material.ca_pem,
        material.cert_pem,
        material.key_pem,
        hosts,
        NOW + datetime.timedelta(minutes=10),
    )
    if change == "inside the rotation window":
        now = NOW + datetime.timedelta(hours=1, minutes=31)
    elif change == "another service's hosts":
        want_hosts = service_hosts("renamed-service", NS)
    elif change == "a key of another pair":
        key = other.key_pem
    elif change == "a CA that did not sign it":
        ca = other.ca_pem
    assert (reusable(read(ca, cert, key, want_hosts, SHORT), now) is not None) == reusable_after


def test_cert_settings_come_from_the_environment() -> None:
    settings = CertSettings.from_env(
        {"OLM_PY_CERT_VALIDITY_SECONDS": "120", "OLM_PY_CERT_ROTATE_BEFORE_SECONDS": "60"}
    )
    assert settings == CertSettings(datetime.timedelta(seconds=120), datetime.timedelta(seconds=60))
    assert CertSettings.from_env({"OLM_PY_CERT_VALIDITY_SECONDS": "soon"}) == CertSettings()


# ----- the objects ----------------------------------------------------------------------------


def test_install_renders_olms_objects() -> None:
    subject = webhook_csv(validating())
    plan, _ = installed(subject)
    objects = by_kind(plan.resources)
    [service] = objects["Service"]
    assert service["metadata"]["name"] == "op-service"
    assert service["spec"] == {
        "ports": [{"name": "443", "port": 443, "targetPort": 9443}],
        "selector": {"app": "op"},
    }
    [secret] = objects["Secret"]
    assert secret["metadata"]["name"] == "op-service-cert"
    assert secret["type"] == "kubernetes.io/tls"
    assert sorted(secret["data"]) == ["olmCAKey", "tls.crt", "tls.key"]
    ca_pem = base64.b64decode(secret["data"]["olmCAKey"])
    assert len(secret["metadata"]["annotations"]["olmcahash"]) == 64
    assert [o["metadata"]["name"] for o in objects["Role"]] == ["op-service-cert"]
    assert [
        (o["metadata"]["name"], o["metadata"].get("namespace")) for o in objects["RoleBinding"]
    ] == [
        ("op-service-cert", NS),
        ("op-service-auth-reader", "kube-system"),
    ]
    assert [o["metadata"]["name"] for o in objects["ClusterRoleBinding"]] == [
        "op-service-system:auth-delegator"
    ]
    [config] = objects["ValidatingWebhookConfiguration"]
    assert config["metadata"]["name"].startswith("vthing.example.com-")
    assert len(config["metadata"]["name"]) == len("vthing.example.com-") + 5
    labels = config["metadata"]["labels"]
    assert labels["olm.owner"] == "op.v1" and labels["olm.owner.namespace"] == NS
    assert labels["olm.owner.kind"] == "ClusterServiceVersion"
    assert labels["olm.webhook-description-generate-name"] == "vthing.example.com"
    assert "olm.webhook-description-hash" in labels
    assert labels["olm.managed"] == "true"  # OLM addWebhookLabels
    [hook] = config["webhooks"]
    assert hook["clientConfig"]["service"] == {
        "name": "op-service",
        "namespace": NS,
        "port": 443,
        "path": "/validate",
    }
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == ca_pem
    assert hook["namespaceSelector"] == {"matchLabels": {"olm.operatorgroup.uid/og-uid": ""}}
    assert (hook["sideEffects"], hook["failurePolicy"]) == ("None", "Fail")
    assert (
        plan.status is not None and plan.status["certsRotateAt"] > plan.status["certsLastUpdated"]
    )


def test_the_deployment_mounts_the_certificate_and_rolls_with_the_ca() -> None:
    plan, _ = installed(webhook_csv(validating()))
    [deployment] = plan.apply
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "default"
    volumes = {v["name"]: v["secret"] for v in pod["volumes"]}
    assert volumes["apiservice-cert"]["items"] == [
        {"key": "tls.crt", "path": "apiserver.crt"},
        {"key": "tls.key", "path": "apiserver.key"},
    ]
    assert volumes["webhook-cert"]["secretName"] == "op-service-cert"
    assert pod["containers"][0]["volumeMounts"] == [
        {"name": "apiservice-cert", "mountPath": "/apiserver.local.config/certificates"},
        {"name": "webhook-cert", "mountPath": "/tmp/k8s-webhook-server/serving-certs"},
    ]
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    [secret] = [o for o in plan.resources if o["kind"] == "Secret"]
    assert annotations["olmcahash"] == secret["metadata"]["annotations"]["olmcahash"]
    again, _ = installed(webhook_csv(validating()))  # a new CA: a new hash, so a rollout
    assert (
        again.apply[0]["metadata"]["labels"]["olm.deployment-spec-hash"]
        != deployment["metadata"]["labels"]["olm.deployment-spec-hash"]
    )


def test_a_mount_at_olms_path_is_replaced_and_a_named_one_kept() -> None:
    deployment = {
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": "op-sa",
                    "volumes": [{"name": "cert", "secret": {"secretName": "mine"}}],
                    "containers": [
                        {
                            "name": "a",
                            "volumeMounts": [
                                {
                                    "name": "cert",
                                    "mountPath": "/tmp/k8s-webhook-server/serving-certs",
                                }
                            ],
                        },
                        {
                            "name": "b",
                            "volumeMounts": [{"name": "webhook-cert", "mountPath": "/x"}],
                        },
                    ],
                }
            }
        }
    }
    mount_certificates(deployment, "op-service-cert", "hash")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "op-sa"
    assert [m["name"] for m in pod["containers"][0]["volumeMounts"]] == [
        "webhook-cert",
        "apiservice-cert",
    ]
    assert pod["containers"][1]["volumeMounts"][0] == {"name": "webhook-cert", "mountPath": "/x"}


@pytest.mark.parametrize(
    ("spec", "selector"),
    [
        ({"targetNamespaces": [NS]}, {"matchLabels": {"olm.operatorgroup.uid/og-uid": ""}}),
        ({"selector": {"matchLabels": {"team": "a"}}}, {"matchLabels": {"team": "a"}}),
        ({}, None),
    ],
)
def test_the_namespace_selector_follows_the_group(
    spec: dict[str, Any], selector: dict[str, Any] | None
) -> None:
    assert namespace_selector({**UID_GROUP, "spec": spec}) == selector


def test_a_group_without_uid_cannot_scope_webhooks() -> None:
    with pytest.raises(WebhookProblem, match="no uid"):
        namespace_selector(GROUP)


def test_a_second_install_over_valid_certificates_renders_the_same_objects() -> None:
    plan, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    again = plan_install(
        after.csv,
        {"op": after.csv["spec"]["install"]["spec"]["deployments"][0]["spec"]},
        UID_GROUP,
        after.webhooks,
        NOW,
    )
    assert again.objects == plan.resources
    assert not again.rotated


def test_inside_the_rotation_window_new_certificates_are_issued() -> None:
    _, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    later = NOW + datetime.timedelta(hours=1, minutes=45)
    spec = {"op": after.csv["spec"]["install"]["spec"]["deployments"][0]["spec"]}
    again = plan_install(after.csv, spec, UID_GROUP, after.webhooks, later)
    assert again.rotated
    old, _ = current_materials(after.csv, after.webhooks)
    assert again.materials["op"].ca_pem != old["op"].ca_pem


def test_an_existing_configuration_keeps_its_name_and_removed_ones_are_stale() -> None:
    subject = webhook_csv(validating())
    existing = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "name": "vthing.example.com-abcde",
            "labels": {
                "olm.owner": "op.v1",
                "olm.owner.namespace": NS,
                "olm.owner.kind": "ClusterServiceVersion",
                "olm.webhook-description-generate-name": "vthing.example.com",
            },
        },
    }
    gone = copy.deepcopy(existing)
    gone["metadata"]["name"] = "old.example.com-fghjk"
    gone["metadata"]["labels"]["olm.webhook-description-generate-name"] = "old.example.com"
    world = WebhookWorld({}, [existing, gone], SHORT)
    spec = {"op": subject["spec"]["install"]["spec"]["deployments"][0]["spec"]}
    result = plan_install(subject, spec, UID_GROUP, world, NOW)
    [config] = [o for o in result.objects if o["kind"] == "ValidatingWebhookConfiguration"]
    assert config["metadata"]["name"] == "vthing.example.com-abcde"
    assert result.stale == [("ValidatingWebhookConfiguration", "old.example.com-fghjk")]
    assert stale_configs(subject, [existing]) == []


def test_config_names_differ_per_csv_and_namespace() -> None:
    desc = validating()
    one = config_name(webhook_csv(desc), desc)
    other = copy.deepcopy(webhook_csv(desc))
    other["metadata"]["namespace"] = "elsewhere"
    assert one != config_name(other, desc) and one == config_name(webhook_csv(desc), desc)


# ----- phases -----------------------------------------------------------------------------------


def test_installing_with_everything_in_place_succeeds_and_then_writes_nothing() -> None:
    _, after = installed(webhook_csv(validating()))
    plan = decide(after)
    assert moved(plan) == "Succeeded/InstallSucceeded"
    done = copy.deepcopy(after.csv)
    done["status"] = plan.status
    settled = decide(World(**{**after.__dict__, "csv": done}))
    assert settled.status is None and settled.resources == [] and settled.apply == []
    assert settled.delete_resources == []


def test_a_missing_configuration_keeps_the_csv_installing() -> None:
    _, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    world = World(**{**after.__dict__, "webhooks": WebhookWorld(after.webhooks.secrets, [], SHORT)})
    plan = decide(world)
    assert moved(plan) == "Installing/InstallWaiting"
    assert plan.status is not None and "Webhooks not installed" in plan.status["message"]


def test_a_missing_secret_means_reinstall() -> None:
    _, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    world = World(**{**after.__dict__, "webhooks": WebhookWorld({}, after.webhooks.configs, SHORT)})
    plan = decide(world)
    assert moved(plan) == "Pending/NeedsReinstall"
    assert plan.status is not None
    assert (
        "calculated deployment install is bad: unable to get secret op-service-cert"
        in plan.status["message"]
    )


def test_a_succeeded_csv_inside_the_rotation_window_rotates() -> None:
    _, after = installed(webhook_csv(validating()))
    done = copy.deepcopy(after.csv)
    done["status"] = decide(after).status
    soon = NOW + datetime.timedelta(hours=1, minutes=25)
    waiting = decide(World(**{**after.__dict__, "csv": done, "now": soon}))
    assert waiting.status is None and waiting.requeue_after == pytest.approx(300.0)
    later = NOW + datetime.timedelta(hours=1, minutes=31)
    plan = decide(World(**{**after.__dict__, "csv": done, "now": later}))
    assert moved(plan) == "Pending/NeedsCertRotation"
    assert plan.status is not None
    assert plan.status["message"] == "CSV owns resources that require a cert refresh"


def test_a_removed_webhook_definition_deletes_its_configuration() -> None:
    _, after = installed(webhook_csv(validating(), validating(generateName="v2.example.com")))
    done = copy.deepcopy(after.csv)
    done["status"] = decide(after).status
    done["spec"]["webhookdefinitions"] = [validating()]
    plan = decide(World(**{**after.__dict__, "csv": done}))
    assert plan.status is None
    assert [(kind, name.rsplit("-", 1)[0]) for _, kind, _, name in plan.delete_resources] == [
        ("ValidatingWebhookConfiguration", "v2.example.com")
    ]


def test_a_conversion_webhook_is_set_once_the_deployment_is_ready() -> None:
    plan, after = installed(global_conversion_csv())
    assert not [o for o in plan.resources if o["kind"].endswith("WebhookConfiguration")]
    patch = decide(after)
    assert patch.status is None
    [body] = patch.resources
    webhook = body["spec"]["conversion"]["webhook"]
    assert body["spec"]["conversion"]["strategy"] == "Webhook"
    assert webhook["clientConfig"]["service"] == {
        "namespace": NS,
        "name": "op-service",
        "path": "/convert",
        "port": 443,
    }
    assert webhook["conversionReviewVersions"] == ["v1"]
    patched = crd(body["spec"]["conversion"])
    world = World(
        **{
            **after.__dict__,
            "requirements": RequirementInputs({CRD: patched}, {}, NO_RBAC, "v1.34.12", frozenset()),
        }
    )
    assert moved(decide(world)) == "Succeeded/InstallSucceeded"
    assert (
        conversion_patches(
            world.csv, {CRD: patched}, current_materials(world.csv, world.webhooks)[0]
        )
        == []
    )  # type: ignore[arg-type]
    assert conversion_cleanup(world.csv, {CRD: patched}) == [
        (CRD, {"spec": {"conversion": {"strategy": "None", "webhook": None}}})
    ]


def test_a_conversion_webhook_for_a_missing_crd_fails_the_install() -> None:
    subject = global_conversion_csv(phase="InstallReady", reason="AllRequirementsMet")
    plan = decide(hook_world(subject))
    assert moved(plan) == "Failed/InstallComponentFailed"
    assert plan.status is not None
    assert (
        "conversionCRDs names CRD things.example.com, which does not exist"
        in plan.status["message"]
    )


def test_a_conversion_webhook_on_an_own_namespace_csv_is_invalid() -> None:
    subject = webhook_csv(conversion(), phase="Pending", reason="RequirementsUnknown")
    subject["spec"]["customresourcedefinitions"] = {"owned": [{"name": CRD}]}
    plan = decide(hook_world(subject))
    assert moved(plan) == "Failed/InvalidWebhookDescription"


# ----- the corpus -------------------------------------------------------------------------------


def corpus_webhook_csvs() -> list[tuple[str, dict[str, Any]]]:
    found = []
    for path in sorted(CORPUS.rglob("*clusterserviceversion*.yaml")):
        text = path.read_text()
        if "webhookdefinitions" not in text:
            continue
        document = yaml.load(text, Loader=yaml.CSafeLoader)
        if isinstance(document, dict) and (document.get("spec") or {}).get("webhookdefinitions"):
            found.append((str(path.relative_to(CORPUS)), document))
    return found


@pytest.mark.skipif(not CORPUS.is_dir(), reason="needs ../shared/corpus beside the repo")
def test_every_corpus_webhook_csv_renders() -> None:
    found = corpus_webhook_csvs()
    assert len(found) >= 50
    settings = CertSettings()
    rendered = 0
    for source, document in found:
        document["metadata"]["namespace"] = "operators"
        document["metadata"]["uid"] = "uid"
        strategy = parse_strategy(document)
        problem = definition_problem(document, {d.name for d in strategy.deployments})
        if problem is not None:
            assert problem[0] == "InvalidWebhookDescription", source
            assert problem[1].startswith("spec.webhookdefinitions["), (source, problem)
            continue
        specs = {d.name: d.spec for d in strategy.deployments}
        result = plan_install(
            document, specs, {**UID_GROUP, "spec": {}}, WebhookWorld({}, [], settings), NOW
        )
        kinds = {o["kind"] for o in result.objects}
        assert {"Service", "Secret", "Role", "RoleBinding", "ClusterRoleBinding"} <= kinds, source
        for deployment_name, material in result.materials.items():
            deployment = {"spec": copy.deepcopy(specs[deployment_name])}
            mount_certificates(deployment, "x", material.ca_hash)
        rendered += 1
    assert rendered >= 40, f"only {rendered} of {len(found)} rendered"


def test_webhook_vocabulary_is_olms() -> None:
    assert Label.WEBHOOK_DESCRIPTION_GENERATE_NAME == "olm.webhook-description-generate-name"
    assert Label.WEBHOOK_DESCRIPTION_HASH == "olm.webhook-description-hash"
    assert Annotation.OLM_CA_HASH == "olmcahash"
    assert (SECRET_TLS_CERT, SECRET_TLS_KEY, SECRET_OLM_CA) == ("tls.crt", "tls.key", "olmCAKey")


def test_an_upgrade_reuses_the_certificate_and_gets_its_own_configuration() -> None:
    plan, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    newer = webhook_csv(validating())
    newer["metadata"]["name"] = "op.v2"
    newer["spec"]["replaces"] = "op.v1"
    spec = {"op": newer["spec"]["install"]["spec"]["deployments"][0]["spec"]}
    result = plan_install(
        newer, spec, UID_GROUP, WebhookWorld(after.webhooks.secrets, [], SHORT), NOW
    )
    assert not result.rotated  # the Secret is the Deployment's, valid for the new CSV too
    old_config = next(o for o in plan.resources if o["kind"] == "ValidatingWebhookConfiguration")
    new_config = next(o for o in result.objects if o["kind"] == "ValidatingWebhookConfiguration")
    assert new_config["metadata"]["name"] != old_config["metadata"]["name"]
    assert new_config["metadata"]["labels"]["olm.owner"] == "op.v2"
    assert (
        new_config["webhooks"][0]["clientConfig"]["caBundle"]
        == (old_config["webhooks"][0]["clientConfig"]["caBundle"])
    )


def test_an_upgrade_that_keeps_the_certificate_records_when_it_rotates() -> None:
    """The new CSV takes over the Deployment's valid Secret (no second rollout) and still
    says when its certificate rotates, as OLM's new CSV does."""
    _, after = installed(webhook_csv(validating()))
    assert after.webhooks is not None
    newer = webhook_csv(validating())
    newer["metadata"]["name"] = "op.v2"
    newer["spec"]["replaces"] = "op.v1"
    newer["status"] = {"phase": "InstallReady", "reason": "AllRequirementsMet"}
    plan = decide(hook_world(newer, secrets=dict(after.webhooks.secrets), crds={CRD: crd()}))
    assert moved(plan) == "Installing/InstallSucceeded"
    assert plan.status is not None
    assert plan.status["certsRotateAt"] > plan.status["certsLastUpdated"]
    [secret] = [o for o in plan.resources if o["kind"] == "Secret"]
    old_secret = next(iter(after.webhooks.secrets.values()))
    assert old_secret is not None
    assert secret["data"] == old_secret["data"], "the certificate is kept, not reissued"
