"""Install rendering: a CSV's install strategy plus its OperatorGroup context become the
objects OLM v0 writes for it (install/deployment.go, install/certresources.go,
install/webhook.go, install/apiservice.go).

`render_install(csv, strategy, context)` is the one call that composes an install:
- the Deployments of `spec.install.spec.deployments` (olm.install.deployments), with the
  Subscription's `spec.config` merged in (olm.install.overrides) and, for a Deployment that
  serves webhooks or an owned APIService, its serving certificate mounted
  (olm.install.certresources);
- the objects those Deployments need first: per certificate Deployment a Service, a Secret and
  its RBAC; per webhook definition a webhook configuration (olm.install.webhooks); per owned
  APIService the APIService (olm.install.apiservices);
- what to delete: webhook configurations no definition declares any more, and Deployments
  labelled as this CSV's that the strategy no longer names.

Invariants:
- Pure: plain data in, plain data out; only certificate keys are generated (olm.install.certs).
  Existing certificate material is reused while valid, so rendering again over an installed
  CSV gives byte-identical objects.
- A problem with the declared webhooks (a missing CRD, an undeclared Deployment, a group
  without a uid yet) raises `WebhookProblem`, whose message names the field and the fix; the
  phase machine turns it into a failed install.
- The phase machine judges, this module renders: conflicts, phases and status stay in
  olm.csv.phase.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from olm.api.labels import Label
from olm.api.views import Strategy
from olm.install.apiservices import render_all
from olm.install.certresources import (
    WebhookWorld,
    cert_deployments,
    current_materials,
    definitions,
    has_cert_resources,
    next_rotation,
    observed_material,
    owned_apiservice_definitions,
    render_rbac,
    render_secret,
    render_service,
    service_account,
    service_name,
    with_certificates,
)
from olm.install.certs import ServingMaterial, issue, reusable, service_hosts
from olm.install.conversion import conversion_patches, conversion_problem
from olm.install.deployments import render_deployment, spec_hash
from olm.install.overrides import apply_config, config_problem
from olm.install.webhooks import (
    ADMISSION_API,
    CONFIG_KINDS,
    WebhookProblem,
    config_name,
    existing_config,
    namespace_selector,
    render_config,
    stale_configs,
)

# (apiVersion, kind, namespace or None, name) of an object to delete.
ObjectRef = tuple[str, str, str | None, str]


@dataclass(frozen=True)
class InstallContext:
    """What rendering reads besides the CSV and its strategy."""

    group: dict[str, Any]  # the CSV's one OperatorGroup (webhooks' namespaceSelector)
    subscription_config: Any  # spec.config of the Subscription that installed the CSV, or None
    webhooks: WebhookWorld | None  # observed certificate objects; None: the CSV needs none
    crds: dict[str, dict[str, Any]]  # CRDs by name (conversion webhooks patch them)
    deployments: dict[str, dict[str, Any]]  # the namespace's Deployments by name
    now: datetime.datetime


@dataclass
class DesiredInstall:
    """The objects to write for one CSV, in the order they are written."""

    resources: list[dict[str, Any]] = field(default_factory=list)  # before the Deployments
    deployments: list[dict[str, Any]] = field(default_factory=list)
    stale: list[ObjectRef] = field(default_factory=list)  # webhook configurations to delete
    orphans: list[str] = field(default_factory=list)  # Deployments to delete, by name
    materials: dict[str, ServingMaterial] = field(default_factory=dict)  # by Deployment name
    rotated: bool = False  # new certificate material was issued

    @property
    def next_rotation(self) -> datetime.datetime | None:
        return next_rotation(self.materials)


@dataclass
class WebhookInstall:
    """Everything to write for the webhooks of one CSV, in order."""

    objects: list[dict[str, Any]]
    materials: dict[str, ServingMaterial]  # by Deployment name
    rotated: bool
    stale: list[tuple[str, str]]  # (kind, name) of configurations no definition wants


def plan_install(
    csv: dict[str, Any],
    deployment_specs: Mapping[str, Mapping[str, Any]],
    group: dict[str, Any],
    world: WebhookWorld,
    now: datetime.datetime,
) -> WebhookInstall:
    """The certificate objects and webhook configurations of `render_install`: certificates
    reused while valid, issued otherwise."""
    namespace = csv["metadata"]["namespace"]
    descs = definitions(csv)
    selector = namespace_selector(group)
    objects: list[dict[str, Any]] = []
    materials: dict[str, ServingMaterial] = {}
    rotated = False
    for deployment in cert_deployments(csv):
        spec = deployment_specs.get(deployment)
        if spec is None:
            raise WebhookProblem(
                f"a webhook or APIService definition names deployment {deployment}, which "
                "spec.install.spec.deployments does not declare"
            )
        service = service_name(deployment)
        material = reusable(observed_material(csv, deployment, world), now)
        if material is None:
            material = issue(service_hosts(service, namespace), now, world.settings)
            rotated = True
        materials[deployment] = material
        mine = [
            d
            for d in descs + owned_apiservice_definitions(csv)
            if d.get("deploymentName") == deployment
        ]
        objects.append(render_service(csv, deployment, spec, mine))
        objects.append(render_secret(csv, service, material))
        objects.extend(render_rbac(csv, service, service_account(spec)))
    for desc in descs:
        kind = CONFIG_KINDS.get(desc.get("type", ""))
        if kind is None:
            continue
        existing = existing_config(world.configs, kind, desc.get("generateName", ""))
        name = existing["metadata"]["name"] if existing else config_name(csv, desc)
        material = materials[desc["deploymentName"]]
        objects.append(render_config(csv, desc, selector, material.ca_pem, name))
    return WebhookInstall(objects, materials, rotated, stale_configs(csv, world.configs))


def needs_certificates(csv: dict[str, Any], context: InstallContext) -> bool:
    """True when the CSV has webhooks or owned APIServices and their objects were observed."""
    return context.webhooks is not None and has_cert_resources(csv)


def render_deployments(
    csv: dict[str, Any],
    strategy: Strategy,
    subscription_config: Any,
    materials: dict[str, ServingMaterial] | None = None,
) -> list[dict[str, Any]]:
    """The strategy's Deployments as they should run: config merged, certificates mounted."""
    rendered = [render_deployment(csv, entry) for entry in strategy.deployments]
    configured = bool(subscription_config) and not config_problem(subscription_config)
    if configured:
        rendered = [apply_config(d, subscription_config) for d in rendered]
    if materials:
        # The webhook certificate is mounted and its CA hash stamped: a new CA rolls the pods.
        rendered = with_certificates(csv, rendered, materials)
    if configured or materials:
        for deployment in rendered:
            # The hash covers the final spec: a config change or a new CA rolls the Deployment.
            labels = deployment["metadata"]["labels"]
            labels[Label.DEPLOYMENT_SPEC_HASH] = spec_hash(deployment["spec"])
    return rendered


def observed_materials(
    csv: dict[str, Any], context: InstallContext
) -> tuple[dict[str, ServingMaterial], str | None]:
    """The certificates the Deployments run with now (none for a CSV without webhooks), or a
    message naming what is missing."""
    if context.webhooks is None or not has_cert_resources(csv):
        return {}, None
    return current_materials(csv, context.webhooks)


def stale_objects(csv: dict[str, Any], context: InstallContext) -> list[ObjectRef]:
    """Webhook configurations labelled as this CSV's that no definition declares any more."""
    if context.webhooks is None:
        return []
    return [
        (ADMISSION_API, kind, None, name)
        for kind, name in stale_configs(csv, context.webhooks.configs)
    ]


def orphans(
    csv: dict[str, Any],
    deployments: Mapping[str, dict[str, Any]],
    wanted: list[dict[str, Any]] | None = None,
) -> list[str]:
    """Deployments labelled as this CSV's that `wanted` does not name (all of them when None)."""
    names = {d["metadata"]["name"] for d in wanted or []}
    owner = csv["metadata"]["name"]
    return sorted(
        name
        for name, deployment in deployments.items()
        if name not in names
        and (deployment["metadata"].get("labels") or {}).get(Label.OWNER) == owner
    )


def pending_conversions(
    csv: dict[str, Any], context: InstallContext, materials: dict[str, ServingMaterial]
) -> list[dict[str, Any]]:
    """The CRD conversion settings still to write. They come after the install, once its
    Deployments are ready (as OLM, newest), so the API server never converts through pods
    that cannot answer."""
    return conversion_patches(csv, context.crds, materials)


def render_install(
    csv: dict[str, Any], strategy: Strategy, context: InstallContext
) -> DesiredInstall:
    """Everything to write to install the CSV; raises `WebhookProblem` (see the module)."""
    desired = DesiredInstall()
    if context.webhooks is not None and has_cert_resources(csv):
        problem = conversion_problem(csv, context.crds)
        if problem:
            raise WebhookProblem(problem)
        certificates = plan_install(
            csv,
            {entry.name: entry.spec for entry in strategy.deployments},
            context.group,
            context.webhooks,
            context.now,
        )
        desired.materials = certificates.materials
        desired.rotated = certificates.rotated
        desired.resources = certificates.objects + render_all(csv, certificates.materials)
        desired.stale = stale_objects(csv, context)
    desired.deployments = render_deployments(
        csv, strategy, context.subscription_config, desired.materials
    )
    desired.orphans = orphans(csv, context.deployments, desired.deployments)
    return desired
